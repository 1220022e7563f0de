"""Engine positions (code points) to and from LSP positions (the negotiated encoding, UTF-16 by default)."""

from __future__ import annotations

from typing import Sequence

from lsprotocol import types

from torchwise.findings import Finding, Position, Span


def _units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2


def to_lsp_position(lines: Sequence[str], pos: Position, encoding: str) -> types.Position:
    line = lines[pos.line] if pos.line < len(lines) else ""
    if line.isascii():
        return types.Position(line=pos.line, character=pos.col)
    return types.Position(line=pos.line, character=_units(line[:pos.col], encoding))


def from_lsp_position(lines: Sequence[str], pos: types.Position, encoding: str) -> Position:
    line = lines[pos.line] if pos.line < len(lines) else ""
    if line.isascii():
        return Position(pos.line, min(pos.character, len(line)))
    units = 0
    for col, char in enumerate(line):
        if units >= pos.character:
            return Position(pos.line, col)
        units += _units(char, encoding)
    return Position(pos.line, len(line))


def to_lsp_range(lines: Sequence[str], span: Span, encoding: str) -> types.Range:
    return types.Range(start=to_lsp_position(lines, span.start, encoding),
                       end=to_lsp_position(lines, span.end, encoding))


def to_diagnostic(lines: Sequence[str], finding: Finding, span: Span, encoding: str) -> types.Diagnostic:
    """The finding as an LSP diagnostic; ``span`` is where it is in the document ``lines`` belong to. Its code links
    to the rule's page (a file the editor opens offline; see ``torchwise.ruledocs``)."""
    from torchwise.ruledocs import page_path

    page = page_path(finding.code)
    return types.Diagnostic(
        range=to_lsp_range(lines, span, encoding),
        message=finding.message,
        severity=types.DiagnosticSeverity(int(finding.severity)),
        code=finding.code,
        code_description=types.CodeDescription(href=page.as_uri()) if page is not None else None,
        source="torchwise",
    )
