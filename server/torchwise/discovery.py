"""Which files ``torchwise check`` reads: Python files and notebooks under the given paths.

Folders are walked recursively, skipping environments and build outputs by name
and anything matched by a ``.gitignore`` met on the way (gitignore semantics via
pathspec). Files named explicitly are always checked, as in ruff.

Only regular files are read (a FIFO named ``x.py`` would block the run forever), a
folder is never walked twice (a symlink loop would never end), and each file records
the real folder it was found under: ``--fix`` writes only inside it, never through a
symlink that leads out of the tree.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import pathspec
import pathspec.patterns

from torchwise.textio import read_bytes

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "__pycache__", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "node_modules", "build", "dist",
    "site-packages", ".eggs", "*.egg-info", ".ipynb_checkpoints",
)
_DEFAULT_SPEC = pathspec.PathSpec.from_lines("gitwildmatch", [f"{p}/" for p in DEFAULT_EXCLUDES])
SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class Found:
    """A file to check: ``path`` as reported, ``tree`` the real folder it belongs to (what ``--fix`` may write);
    ``problem``: why it cannot be read at all."""

    path: Path
    tree: Path | None
    problem: str | None = None


@dataclass
class Discovery:
    files: list[Found] = field(default_factory=list)  # in a stable order, problems among them
    empty: list[Path] = field(default_factory=list)  # folders given that hold no Python file


def _gitignore(folder: Path) -> pathspec.PathSpec | None:
    try:  # a regular file only: a FIFO named .gitignore must not block the walk
        lines = read_bytes(folder / ".gitignore").decode("utf-8", errors="replace").splitlines()
    except (OSError, ValueError):
        return None
    try:
        return pathspec.PathSpec.from_lines("gitwildmatch", lines)
    except (ValueError, re.error):  # a pattern that matches nothing for git (`[z-a]`) stopped the whole run
        return pathspec.PathSpec([p for p in map(_pattern, lines) if p is not None])


def _pattern(line: str):
    try:
        return pathspec.patterns.GitWildMatchPattern(line)
    except (ValueError, re.error):
        return None


class BadPattern(ValueError):
    """An ``--exclude`` pattern that cannot be read."""


def _exclude_spec(exclude: Sequence[str]) -> pathspec.PathSpec | None:
    if not exclude:
        return None
    for pattern in exclude:
        try:
            pathspec.patterns.GitWildMatchPattern(pattern)
        except (ValueError, re.error) as err:
            raise BadPattern(f"--exclude {pattern!r} is not a gitignore pattern ({err})") from None
    return pathspec.PathSpec.from_lines("gitwildmatch", exclude)


def _ignored(path: Path, is_dir: bool, specs: Sequence[tuple[Path, pathspec.PathSpec]],
             extra: pathspec.PathSpec | None, root: Path) -> bool:
    suffix = "/" if is_dir else ""
    if _DEFAULT_SPEC.match_file(path.name + suffix):
        return True
    if extra is not None and extra.match_file(path.relative_to(root).as_posix() + suffix):
        return True
    return any(spec.match_file(path.relative_to(base).as_posix() + suffix) for base, spec in specs)


def discover(paths: Sequence[Path], exclude: Sequence[str] = ()) -> Discovery:
    """The files to check, in a stable order; a missing path raises FileNotFoundError, a bad pattern BadPattern."""
    extra = _exclude_spec(exclude)
    found = Discovery()
    seen: set[str] = set()  # real paths: a file reached twice (through a symlink) is checked once
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            if os.path.lexists(path):
                found.files.append(Found(path, None, _not_regular(path)))
                continue
            raise FileNotFoundError(str(path)) from None
        except OSError as err:  # a symlink loop, a permission problem
            found.files.append(Found(path, None, f"cannot read: {err.strerror}"))
            continue
        if stat.S_ISDIR(mode):
            tree = Path(os.path.realpath(path))
            before = len(found.files)
            found.files.extend(_walk(path, [], extra, path, tree, seen, {str(tree)}))
            if len(found.files) == before:
                found.empty.append(path)
        elif stat.S_ISREG(mode):
            real = os.path.realpath(path)
            if real not in seen:
                seen.add(real)
                found.files.append(Found(path, Path(os.path.realpath(path.parent))))
        else:
            found.files.append(Found(path, None, _not_regular(path)))
    return found


def _not_regular(path: Path) -> str:
    if os.path.islink(path) and not os.path.exists(path):
        return "a broken symlink"
    return "not a regular file (a FIFO, socket or device is never read)"


def python_files(paths: Sequence[Path], exclude: Sequence[str] = ()) -> Iterator[Path]:
    """The paths of ``discover``'s files (a missing path raises FileNotFoundError)."""
    for item in discover(paths, exclude).files:
        if item.problem is None:
            yield item.path


def _walk(folder: Path, specs: list, extra, root: Path, tree: Path, seen: set[str],
          walked: set[str]) -> Iterator[Found]:
    spec = _gitignore(folder)
    if spec is not None:
        specs = [*specs, (folder, spec)]
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
        except OSError:  # a symlink loop (`a -> a`): nothing to read there
            if entry.name.endswith(SUFFIXES) and not _ignored(path, False, specs, extra, root):
                yield Found(path, None, "cannot read: a symlink loop")
            continue
        if _ignored(path, is_dir, specs, extra, root):
            continue
        if not is_dir and not is_file:
            if entry.name.endswith(SUFFIXES):
                yield Found(path, None, _not_regular(path))
            continue
        if is_dir:
            real = os.path.realpath(path)
            if real in walked:
                continue  # a symlink back up the tree (or to a folder already walked)
            walked.add(real)
            yield from _walk(path, specs, extra, root, tree, seen, walked)
        elif entry.name.endswith(SUFFIXES):
            real = os.path.realpath(path)
            if real not in seen:
                seen.add(real)
                yield Found(path, tree)
