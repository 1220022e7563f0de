"""``torchwise check`` at scale: files checked on every core, and results kept by content.

A file's result is turned into a plain *record* (JSON-able: findings, their fixes' titles and, when the output
shows them, their edits), so that it can come back from a worker process and be stored in the cache. The cache
key is the file's bytes, its path, its rule configuration and torchwise itself (its version and a fingerprint of
its own source files, so that an edited checkout never reads results of the code it had before). Entries live in
``.torchwise_cache/`` (``--cache-dir``, ``TORCHWISE_CACHE_DIR``), one small JSON file each, written atomically;
the folder holds a ``.gitignore`` of ``*``, as ruff's does, so it never shows in ``git status``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, Optional

from torchwise import __version__
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span

CACHE_DIR = ".torchwise_cache"
FORMAT = 1  # of a record; part of the key


# -- records -------------------------------------------------------------------------------------------------------
def _span(span: Span) -> list[int]:
    return [span.start.line, span.start.col, span.end.line, span.end.col]


def _unspan(values) -> Span:
    return Span(Position(values[0], values[1]), Position(values[2], values[3]))


def to_record(result, with_edits: bool) -> dict:
    """A FileResult as plain data; ``with_edits``: the fixes' edits too (built now: JSON and SARIF show them)."""
    from torchwise.fixing import edits_of

    findings = []
    for finding in result.findings:
        fixes = []
        for fix in finding.fixes:
            entry = {"title": fix.title, "preferred": fix.preferred}
            if with_edits:
                entry["edits"] = [[*_span(e.span), e.new_text] for e in edits_of(fix)]
            fixes.append(entry)
        findings.append({"code": finding.code, "message": finding.message, "severity": int(finding.severity),
                         "span": _span(finding.span), "cell": finding.cell, "fixes": fixes})
    return {"error": result.error, "error_span": _span(result.error_span) if result.error_span else None,
            "fixed": result.fixed, "warnings": list(result.warnings), "findings": findings,
            "diff": getattr(result, "diff", None), "edits": with_edits,
            "internal": bool(result.error and result.error.startswith("internal error"))}


def _stored_fix(entry: dict) -> Fix:
    edits = tuple(Edit(_unspan(e[:4]), e[4]) for e in entry.get("edits") or ())
    return Fix(entry["title"], lambda: edits, entry["preferred"])


def from_record(path: Path, record: dict):
    from torchwise.report import FileResult

    result = FileResult(path)
    result.error = record["error"]
    result.error_span = _unspan(record["error_span"]) if record["error_span"] else None
    result.fixed = record["fixed"]
    result.warnings = list(record["warnings"])
    result.diff = record.get("diff")
    result.findings = [Finding(f["code"], f["message"], Severity(f["severity"]), _unspan(f["span"]),
                               [_stored_fix(x) for x in f["fixes"]], f["cell"]) for f in record["findings"]]
    return result


def nothing_to_fix(record: dict) -> bool:
    """Whether ``--fix`` / ``--diff`` would do nothing to the file this record is of."""
    return record["error"] is None and not any(x["preferred"] for f in record["findings"] for x in f["fixes"])


# -- the cache -----------------------------------------------------------------------------------------------------
_fingerprint: Optional[str] = None


def code_fingerprint() -> str:
    """torchwise itself: its version and the size and time of each of its source files (a stat each, ~1 ms)."""
    global _fingerprint
    if _fingerprint is None:
        root = Path(__file__).resolve().parent
        digest = hashlib.sha256(f"{__version__}\0{FORMAT}\0{sys.version_info[:2]}".encode())
        for file in sorted(root.rglob("*.py")):
            stat = file.stat()
            digest.update(f"{file.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
        _fingerprint = digest.hexdigest()[:16]
    return _fingerprint


def config_key(config) -> str:
    severity = sorted((code, None if level is None else int(level)) for code, level in config.severity.items())
    return json.dumps([list(config.select), list(config.ignore), severity])


def key(path: Path, data: bytes, config) -> str:
    digest = hashlib.sha256()
    for part in (code_fingerprint(), str(path), config_key(config)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(data)
    return digest.hexdigest()


class Cache:
    def __init__(self, folder: Optional[Path]):
        self.folder = folder
        self.ready = False

    def _entry(self, entry_key: str) -> Path:
        return self.folder / __version__ / entry_key[:2] / f"{entry_key}.json"

    def get(self, entry_key: str) -> Optional[dict]:
        if self.folder is None:
            return None
        try:
            with open(self._entry(entry_key), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def put(self, entry_key: str, record: dict) -> None:
        if self.folder is None or record.get("internal") or record.get("diff"):
            return  # a bug of ours is not remembered; a diff belongs to one run
        target = self._entry(entry_key)
        try:
            if not self.ready:
                self.folder.mkdir(parents=True, exist_ok=True)
                ignore = self.folder / ".gitignore"
                if not ignore.exists():
                    ignore.write_text("# Made by torchwise: its cache, never committed.\n*\n", encoding="utf-8")
                tag = self.folder / "CACHEDIR.TAG"
                if not tag.exists():
                    tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# torchwise's cache\n",
                                   encoding="utf-8")
                self.ready = True
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(record, out, ensure_ascii=False, separators=(",", ":"))
            os.replace(temp, target)
        except OSError:
            pass  # a read-only tree: checking goes on without a cache


def cache_folder(option: Optional[str], disabled: bool) -> Optional[Path]:
    if disabled:
        return None
    return Path(option or os.environ.get("TORCHWISE_CACHE_DIR") or CACHE_DIR)


# -- running on every core -----------------------------------------------------------------------------------------
def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


_worker_task: Optional[Callable] = None


def _init(task: Callable) -> None:
    global _worker_task
    _worker_task = task


def _run(item):
    return _worker_task(item)


def run_all(task: Callable, items: list, jobs: int, sizes: Optional[list] = None) -> list:
    """``[task(item) for item in items]``, on ``jobs`` processes when that is worth it (largest files first, so that
    the last one to finish is a small one), in the order of ``items``."""
    if jobs <= 1 or len(items) <= 1:
        return [task(item) for item in items]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import torchwise.engine  # noqa: F401 - imported once here, inherited by forked workers

    context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    order = sorted(range(len(items)), key=lambda i: -(sizes[i] if sizes else 0))
    results: list = [None] * len(items)
    with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=context, initializer=_init,
                             initargs=(task,)) as pool:
        futures = {pool.submit(_run, items[i]): i for i in order}
        for future, i in futures.items():
            results[i] = future.result()
    return results
