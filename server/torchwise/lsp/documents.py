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


@dataclass
class Snapshot:
    """A unit's text at one version."""

    uri: str
    version: Optional[int]
    text: str
    path: Optional[str]
    cells: Optional[notebook.Combined] = None  # for a notebook: where each cell sits in ``text``


@dataclass
class Checked:
    version: Optional[int]
    analysis: Optional[Analysis]  # None: dropped to save memory (the server analyses the text again on demand)
    cells: Optional[notebook.Combined] = None
    config: RuleConfig = RuleConfig()  # the rules it was checked with


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
        return Snapshot(uri, book.version, combined.text, None, combined)
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
    cell: Optional[notebook.Cell] = None

    def to_unit(self, position: Position) -> Position:
        return Position(position.line + self.cell.start, position.col) if self.cell else position

    def to_local(self, span: Span) -> Optional[Span]:
        """A span of the unit in this document's coordinates; None when it lies elsewhere."""
        if self.cell is None:
            return span
        mapped = self.checked.cells.to_cell(span)
        if mapped is None or mapped[0].key != self.uri:
            return None
        return mapped[1]

    def findings(self) -> list[tuple[Finding, Span]]:
        result = []
        for finding in self.checked.analysis.findings:
            local = self.to_local(finding.span)
            if local is not None:
                result.append((finding, local))
        return result


def view(workspace: Workspace, checked_by_unit: dict, uri: str) -> Optional[View]:
    """The view of ``uri``, when its unit's analysis is of exactly the text the editor has now."""
    unit = unit_of(workspace, uri)
    checked = checked_by_unit.get(unit)
    if checked is None or checked.analysis is None or checked.version != current_version(workspace, unit):
        return None
    doc = text_document(workspace, uri)
    if doc is None:
        return None
    if checked.cells is None:
        return View(uri, doc.version, checked.analysis.source.lines, checked, unit)
    cell = next((c for c in checked.cells.cells if c.key == uri), None)
    if cell is None:
        return None
    lines = cell.text.splitlines(keepends=True) or [""]
    return View(uri, doc.version, lines, checked, unit, cell)
