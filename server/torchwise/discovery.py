"""Which files ``torchwise check`` reads: Python files and notebooks under the given paths.

Folders are walked recursively, skipping environments and build outputs by name
and anything matched by a ``.gitignore`` met on the way (gitignore semantics via
pathspec). Files named explicitly are always checked, as in ruff.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Sequence

import pathspec

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "__pycache__", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "node_modules", "build", "dist",
    "site-packages", ".eggs", "*.egg-info", ".ipynb_checkpoints",
)
_DEFAULT_SPEC = pathspec.PathSpec.from_lines("gitwildmatch", [f"{p}/" for p in DEFAULT_EXCLUDES])


def _gitignore(folder: Path) -> pathspec.PathSpec | None:
    try:
        lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.PathSpec.from_lines("gitwildmatch", lines)


def _ignored(path: Path, is_dir: bool, specs: Sequence[tuple[Path, pathspec.PathSpec]],
             extra: pathspec.PathSpec | None, root: Path) -> bool:
    suffix = "/" if is_dir else ""
    if _DEFAULT_SPEC.match_file(path.name + suffix):
        return True
    if extra is not None and extra.match_file(path.relative_to(root).as_posix() + suffix):
        return True
    return any(spec.match_file(path.relative_to(base).as_posix() + suffix) for base, spec in specs)


def python_files(paths: Sequence[Path], exclude: Sequence[str] = ()) -> Iterator[Path]:
    """Yield files to check, in a stable order; a missing path raises FileNotFoundError."""
    extra = pathspec.PathSpec.from_lines("gitwildmatch", exclude) if exclude else None
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(str(path))
        if path.is_file():
            if path not in seen:
                seen.add(path)
                yield path
            continue
        yield from _walk(path, [], extra, path, seen)


def _walk(folder: Path, specs: list, extra, root: Path, seen: set[Path]) -> Iterator[Path]:
    spec = _gitignore(folder)
    if spec is not None:
        specs = [*specs, (folder, spec)]
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        is_dir = entry.is_dir()
        if _ignored(path, is_dir, specs, extra, root):
            continue
        if is_dir:
            yield from _walk(path, specs, extra, root, seen)
        elif entry.name.endswith((".py", ".pyi", ".ipynb")) and path not in seen:
            seen.add(path)
            yield path
