"""Jupyter notebooks: the code cells, in order, analysed as one module.

Facts flow from earlier cells to later ones, as when the notebook runs top to
bottom. IPython syntax (``%magic``, ``!shell``) becomes a comment of the same
length so that positions do not move, cell magics (``%%bash``) drop the cell, and a
cell that does not parse on its own is left out instead of hiding every other
cell's diagnostics.
"""

from __future__ import annotations

import ast
import bisect
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

from torchwise.findings import Edit, Position, Span
from torchwise.source import split_lines


@dataclass(frozen=True)
class Cell:
    key: object  # what the caller knows the cell by: an index, or a cell document URI
    text: str
    start: int  # first line of the cell in the combined text (0-based)


@dataclass
class Combined:
    text: str
    cells: list[Cell]
    # Lookups by line (bisection over the cells' first lines) and by key, made once: a finding's mapping and
    # each cell's view were a scan of every cell, so publishing a 1,000-cell notebook cost cells x findings.
    _starts: list = field(default_factory=list, init=False, repr=False, compare=False)
    _ends: list = field(default_factory=list, init=False, repr=False, compare=False)
    _by_key: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._starts = [cell.start for cell in self.cells]
        self._ends = [cell.start + _line_count(cell.text) for cell in self.cells]
        self._by_key = {}
        for cell in self.cells:
            self._by_key.setdefault(cell.key, cell)

    def cell(self, key: object) -> Cell | None:
        return self._by_key.get(key)

    def cell_at(self, line: int) -> Cell | None:
        i = bisect.bisect_right(self._starts, line) - 1
        return self.cells[i] if i >= 0 and line < self._ends[i] else None

    def to_cell(self, span: Span) -> tuple[Cell, Span] | None:
        """A span of the combined text as (cell, span inside the cell); None if it crosses cells."""
        cell = self.cell_at(span.start.line)
        if cell is None or self.cell_at(span.end.line) is not cell:
            return None
        return cell, Span(Position(span.start.line - cell.start, span.start.col),
                          Position(span.end.line - cell.start, span.end.col))

    def from_cell(self, key: object, position: Position) -> Position | None:
        cell = self.cell(key)
        return Position(cell.start + position.line, position.col) if cell is not None else None

    def edits_by_cell(self, edits: Sequence[Edit]) -> dict | None:
        """Edits of the combined text, per cell (None when one crosses cells)."""
        by_cell: dict = {}
        for edit in edits:
            mapped = self.to_cell(edit.span)
            if mapped is None:
                return None
            cell, span = mapped
            by_cell.setdefault(cell.key, []).append(Edit(span, edit.new_text))
        return by_cell


def _line_count(text: str) -> int:
    return len(split_lines(text)) or 1


def python_source(text: str) -> str | None:
    """A cell's text as Python: magics commented out in place; None for a cell magic or non-Python cell."""
    lines = split_lines(text)
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("%%"):
        return None
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            indent = line[:len(line) - len(stripped)]
            line = indent + "#" + stripped[1:]
        out.append(line)
    return "".join(out)


def combine(cells: Sequence[tuple[object, str]]) -> Combined:
    """One module of the given code cells, each starting on a fresh line."""
    parts, placed, line = [], [], 0
    for key, text in cells:
        source = python_source(text)
        if source is None or not _parses(source):
            continue
        if not source.endswith("\n"):
            source += "\n"
        placed.append(Cell(key, source, line))
        parts.append(source)
        line += _line_count(source)
    return Combined("".join(parts), placed)


@lru_cache(maxsize=4096)
def _parses(source: str) -> bool:
    """Whether a cell parses on its own; remembered by text (an edit changes one cell, and the notebook's other
    999 were parsed again on every keystroke)."""
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


# -- .ipynb files ------------------------------------------------------------------------------------------------
def read_ipynb(text: str) -> tuple[dict, list[tuple[int, str]]]:
    """The notebook JSON and its code cells as (1-based cell number, source). Raises ValueError."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"not a notebook: {err.msg} at line {err.lineno}") from None
    except RecursionError:  # json recurses per level: it read as an internal error of ours
        raise ValueError("not a notebook: nested too deeply") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise ValueError("not a notebook: no cells")
    metadata = document.get("metadata")
    kernelspec = metadata.get("kernelspec") if isinstance(metadata, dict) else None
    language = kernelspec.get("language", "python") if isinstance(kernelspec, dict) else "python"
    if language != "python":
        return document, []
    code = []
    for number, cell in enumerate(cells, start=1):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            code.append((number, _cell_source(cell.get("source", ""), number)))
    return document, code


def _cell_source(source: object, number: int) -> str:
    """nbformat's multiline string: a string, or a list of strings to join. Anything else is refused
    rather than guessed at, so that ``--fix`` never rewrites a cell it did not read as written."""
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    raise ValueError(f"not a notebook: the source of cell {number} is neither a string nor a list of strings")


def write_ipynb(document: dict, new_sources: dict[int, str]) -> str:
    """The notebook with some code cells' sources replaced, in nbformat's own layout (indent 1)."""
    for number, source in new_sources.items():
        document["cells"][number - 1]["source"] = split_lines(source)
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"
