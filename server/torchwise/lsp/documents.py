"""What the server analyses: a text document, or a notebook's code cells as one module.

A *unit* is analysed as a whole (a file; a notebook, so that facts flow from earlier
cells to later ones). A *view* is what one request talks about: a file, or one cell
of a notebook, with positions mapped between the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote
from typing import Optional

from pygls.workspace import Workspace

from torchwise import notebook
from torchwise.config import RuleConfig
from torchwise.engine import Analysis
from torchwise.findings import Finding, Position, Span
from torchwise.lsp.unchanged import LineMap
from torchwise.source import SourceFile


@dataclass
class Snapshot:
    """A unit's text at one version."""

    uri: str
    version: Optional[int]
    text: str
    path: Optional[str]
    cells: Optional[notebook.Combined] = None  # for a notebook: where each cell sits in ``text``
    left_out: frozenset = frozenset()  # notebook code cells left out because they do not parse


@dataclass
class Checked:
    """An analysis whose text parsed, and what it takes to analyse that text again."""

    version: Optional[int]
    analysis: Optional[Analysis]  # None: dropped to save memory (the server analyses ``text`` again on demand)
    text: str = ""  # what was analysed (the same string the analysis holds, while it is held)
    path: Optional[str] = None
    cells: Optional[notebook.Combined] = None
    config: RuleConfig = RuleConfig()  # the rules it was checked with
    left_out: frozenset = frozenset()  # notebook cells that did not parse, so are not in ``text``
    # With cells left out: the last analysis that had them, for hovers on their unchanged lines.
    whole: Optional["Checked"] = None

    def cells_among(self, keys: frozenset) -> frozenset:
        """Which of the cells ``keys`` this analysis has."""
        return frozenset(k for k in keys if self.cells.cell(k) is not None) if self.cells is not None and keys \
            else frozenset()


def last_whole(previous: Optional[Checked], left_out: frozenset) -> Optional[Checked]:
    """What an analysis that leaves out the cells ``left_out`` keeps of its predecessor ``previous``: the
    newest analysis that had the most of them (one level deep: no chain of old analyses stays alive)."""
    if previous is None or not left_out:
        return None
    candidates = [c for c in (previous, previous.whole) if c is not None and c.cells_among(left_out)]
    kept = max(candidates, key=lambda c: len(c.cells_among(left_out)), default=None)  # ties: the newer
    if kept is not None:
        kept.whole = None
    return kept


def text_document(workspace: Workspace, uri: str):
    """An open document by the URI the client uses (pygls keys them unquoted: `%20`, `%3D` in cell URIs)."""
    return workspace.text_documents.get(unquote(uri))


def unit_of(workspace: Workspace, uri: str) -> str:
    """The unit a document belongs to: its notebook for a cell, else itself."""
    book = workspace.get_notebook_document(cell_uri=uri)
    return book.uri if book is not None else uri


def snapshot(workspace: Workspace, uri: str) -> Optional[Snapshot]:
    book = workspace.get_notebook_document(notebook_uri=uri)
    if book is not None:
        cells = []
        for cell in book.cells:
            doc = text_document(workspace, cell.document)
            if doc is not None and (doc.language_id or "python") == "python":
                cells.append((cell.document, doc.source))
        combined = notebook.combine(cells)
        placed = {cell.key for cell in combined.cells}
        left_out = frozenset(key for key, text in cells
                             if key not in placed and notebook.python_source(text) is not None)
        return Snapshot(uri, book.version, combined.text, None, combined, left_out)
    doc = text_document(workspace, uri)
    if doc is None:
        return None
    return Snapshot(uri, doc.version, doc.source, doc.path)


def current_version(workspace: Workspace, uri: str) -> Optional[int]:
    book = workspace.get_notebook_document(notebook_uri=uri)
    if book is not None:
        return book.version
    doc = text_document(workspace, uri)
    return doc.version if doc is not None else -1


@dataclass
class View:
    """One document (a file, or a notebook cell) seen through its unit's analysis."""

    uri: str
    version: Optional[int]  # the document's own version, for edits
    lines: list[str]  # the document's own lines, for position encodings
    checked: Checked
    unit: str  # the file, or the notebook a cell belongs to: what is analysed (and benchmarked) as a whole
    cell: Optional[notebook.Cell] = None  # the cell in the analysed text
    # Seen through an older text (the last that parsed): where its unchanged lines are now.
    line_map: Optional[LineMap] = None

    @property
    def is_current(self) -> bool:
        """Whether the analysis is of exactly the text the editor has now."""
        return self.line_map is None

    def to_unit(self, position: Position) -> Optional[Position]:
        """A position of this document in the analysed unit; None on a line changed since its analysis."""
        if self.line_map is not None:
            position = self.line_map.to_old(position)
            if position is None:
                return None
        return Position(position.line + self.cell.start, position.col) if self.cell else position

    def to_local(self, span: Span) -> Optional[Span]:
        """A span of the unit in this document's coordinates; None when it lies elsewhere (or, seen
        through an older text, touches a line changed since)."""
        local = span
        if self.cell is not None:
            mapped = self.checked.cells.to_cell(span)
            local = mapped[1] if mapped is not None and mapped[0].key == self.uri else None
        if local is None or self.line_map is None:
            return local
        return self.line_map.to_new(local)

    def findings(self) -> list[tuple[Finding, Span]]:
        result = []
        for finding in self.checked.analysis.findings:
            local = self.to_local(finding.span)
            if local is not None:
                result.append((finding, local))
        return result


def findings_by_cell(checked: Checked) -> dict:
    """A notebook analysis's findings as {cell key: [(finding, span in the cell)]}: what each cell's current view
    lists, for all cells in one pass over the findings."""
    by_cell: dict = {}
    for finding in checked.analysis.findings:
        mapped = checked.cells.to_cell(finding.span)
        if mapped is not None:
            by_cell.setdefault(mapped[0].key, []).append((finding, mapped[1]))
    return by_cell


def view(workspace: Workspace, checked: Optional[Checked], uri: str) -> Optional[View]:
    """The view of ``uri`` through ``checked``, its unit's analysis, when that is of exactly the text the
    editor has now."""
    unit = unit_of(workspace, uri)
    if checked is None or checked.analysis is None or checked.version != current_version(workspace, unit):
        return None
    doc = text_document(workspace, uri)
    if doc is None:
        return None
    if checked.cells is None:
        return View(uri, doc.version, checked.analysis.source.lines, checked, unit)
    cell = checked.cells.cell(uri)
    if cell is None:
        return None
    return View(uri, doc.version, _lines(cell.text), checked, unit, cell)


def remapped_view(workspace: Workspace, kept: Checked, uri: str) -> Optional[View]:
    """The view of ``uri`` through ``kept``, an analysis of an older text of its unit: only the lines
    unchanged since answer, where they are now."""
    doc = text_document(workspace, uri)
    if doc is None or kept.analysis is None:
        return None
    unit = unit_of(workspace, uri)
    if kept.cells is None:
        old, new, cell = _lines(kept.text), _lines(doc.source), None
    else:
        cell = kept.cells.cell(uri)
        current = notebook.python_source(doc.source)  # magics commented out, as in the analysed text
        if cell is None or current is None:
            return None
        old, new = _lines(cell.text), _lines(current if current.endswith("\n") else current + "\n")
    return View(uri, doc.version, new, kept, unit, cell, LineMap(old, new))


def _lines(text: str) -> list[str]:
    """``text``'s lines as the engine numbers them (it breaks lines where Python does, not everywhere
    ``str.splitlines`` does), with a last empty line where end-of-file positions resolve."""
    return SourceFile(text).lines  # nothing is parsed until its tree is asked for
