"""What the language server keeps for "Benchmark this loop": one warm worker, the last result per loop.

LSP-agnostic on purpose (plain data in and out), so the server module only translates:

    service = BenchService()                                  # at start; nothing runs yet
    service.configure(python=..., time_limit=..., device=..., sizes=..., trusted=...)   # settings, any time
    result = await service.benchmark(uri, text, line, analysis=..., on_progress=...)  # the command
    service.lenses(uri, text, analysis)  -> [Lens(line, title, arguments)]  # code lens
    service.hover(uri, text, line)       -> Markdown | None                 # hover on a measured loop
    service.cancel()                     # kill the run in progress; a fresh worker starts at once
    service.forget(uri); service.shutdown()

A result is shown *stale* once the lines it measured change; the lens then offers to run again.
In an untrusted workspace (``trusted=False``: the editor says so) the benchmark runs nothing, as it
would run the workspace's code: no lens is offered and the command answers why.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from torchwise.bench.api import DEFAULT_BUDGET_S, run_benchmark_async
from torchwise.bench.region import fingerprint, fingerprint_lines, is_bench_target, lens_line, plain_lines
from torchwise.bench.result import hover_markdown, inline_text, public_json
from torchwise.bench.session import BenchSession

COMMAND = "torchwise.benchmarkLoop"
LENS_TITLE = "⏱ Benchmark loop vs vectorized"
COLD_BUDGET_S = 0.6  # seconds of measuring on a run that has to start the worker first
_SEARCH = 200  # lines up or down where a measured loop is looked for after edits above it
UNTRUSTED = ("torchwise does not run benchmarks in an untrusted workspace: they execute its code. Trust the "
             "workspace (VS Code), or declare it trusted in the editor's torchwise settings (`trusted = true`).")


@dataclass(frozen=True)
class Lens:
    line: int  # 0-based
    title: str
    command: str
    arguments: list  # [uri, line]: what the command takes


class BenchService:
    def __init__(self, python: Optional[str] = None, time_limit: float = 30.0, device: str = "auto",
                 sizes: Optional[Mapping[str, int]] = None, budget_s: float = DEFAULT_BUDGET_S,
                 threads: Optional[int] = None, trusted: bool = True):
        self.session = BenchSession(python or sys.executable, time_limit)
        self.trusted = trusted
        self.device = device
        self.threads = threads
        self.sizes = dict(sizes or {})
        self.budget_s = budget_s
        self._results: dict[str, list[dict]] = {}  # uri -> results (with line, end_line, fingerprint)

    def configure(self, python: Optional[str] = None, time_limit: Optional[float] = None,
                  device: Optional[str] = None, sizes: Optional[Mapping[str, int]] = None,
                  threads: Optional[int] = None, trusted: Optional[bool] = None) -> None:
        """Apply settings; a different interpreter stops the warm worker (the next run starts one), and so
        does losing trust."""
        if trusted is not None:
            self.trusted = bool(trusted)
            if not self.trusted:
                self.session.shutdown()
        if python is not None:
            self.session.python = python or sys.executable
        if time_limit is not None:
            self.session.time_limit = float(time_limit)
        if device is not None:
            self.device = device
        if sizes is not None:
            self.sizes = dict(sizes)
        if threads is not None:
            self.threads = threads or None

    async def benchmark(self, uri: str, text: str, line: int, *, analysis=None,
                        sizes: Optional[Mapping[str, int]] = None,
                        on_progress: Optional[Callable[[str], None]] = None) -> dict:
        """Run the benchmark of the loop on ``line`` (0-based): the command's JSON answer.

        Cancelling the awaiting task kills the run. Never raises for a failure of the user's code or
        interpreter: the answer's ``message`` says what happened."""
        if not self.trusted:
            return public_json({"ok": False, "error": "untrusted", "message": UNTRUSTED, "line": line})
        merged = {**self.sizes, **(sizes or {})}
        # The first run also starts Python and imports torch (2-5 s): measure less then, to keep
        # the first answer within the spec's 6 s.
        budget = self.budget_s if self.session.warm else min(self.budget_s, COLD_BUDGET_S)
        result = await run_benchmark_async(self.session, text, line, device=self.device, sizes=merged,
                                           budget_s=budget, analysis=analysis, path=uri,
                                           on_progress=on_progress, threads=self.threads)
        self._store(uri, result)
        return public_json(result)

    def _store(self, uri: str, result: dict) -> None:
        if result.get("fingerprint") is None or result.get("line") is None:
            return
        kept = [r for r in self._results.get(uri, []) if r.get("line") != result["line"]]
        kept.append(result)
        self._results[uri] = kept

    def _located(self, uri: str, text: str) -> list[tuple[dict, bool]]:
        """Each stored result with whether it is stale; a result whose lines moved is moved along."""
        located = []
        for result in self._results.get(uri, []):
            line, end = result["line"], result.get("end_line", result["line"])
            if fingerprint(text, line, end) == result["fingerprint"]:
                located.append((result, False))
                continue
            moved = _find_moved(text, line, end, result["fingerprint"])
            if moved is not None:
                result["line"], result["end_line"] = moved, moved + (end - line)
                located.append((result, False))
            else:
                located.append((result, True))
        return located

    def lenses(self, uri: str, text: str, analysis) -> list[Lens]:
        """One lens per fixable TW4xx loop: its last result (marked stale once the loop changed), or
        an offer to run it. Builds no fix and runs nothing; none in an untrusted workspace."""
        if not self.trusted:
            return []
        tree = analysis.source.tree if analysis is not None else None
        lines = sorted({lens_line(tree, f) for f in (analysis.findings if analysis is not None else [])
                        if is_bench_target(f)})
        located = self._located(uri, text)
        lenses = []
        for line in lines:
            shown = next(((r, stale) for r, stale in located if r["line"] <= line <= r.get("end_line", r["line"])),
                         None)
            title = LENS_TITLE if shown is None else inline_text(shown[0], stale=shown[1])
            lenses.append(Lens(line, title, COMMAND, [uri, line]))
        return lenses

    def hover(self, uri: str, text: str, line: int) -> Optional[str]:
        """The details of the result measured for the loop covering ``line``, if any."""
        for result, stale in self._located(uri, text):
            if result["line"] <= line <= result.get("end_line", result["line"]):
                markdown = hover_markdown(result)
                return markdown + ("\n\n*The loop changed since it was measured.*" if stale else "")
        return None

    def forget(self, uri: str) -> None:
        self._results.pop(uri, None)

    def cancel(self) -> None:
        self.session.cancel()

    def shutdown(self) -> None:
        self.session.shutdown()


def _find_moved(text: str, line: int, end: int, wanted: str) -> Optional[int]:
    lines = plain_lines(text)
    span = end - line
    for delta in range(1, _SEARCH + 1):
        for start in (line + delta, line - delta):
            if 0 <= start and start + span < len(lines) and fingerprint_lines(lines, start, start + span) == wanted:
                return start
    return None
