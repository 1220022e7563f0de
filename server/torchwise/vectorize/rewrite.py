"""Text edits for loop rewrites: whole statements out, new statements in, comments kept.

A loop rewrite replaces whole statements (the loop, the allocation it fills, the
``torch.stack`` after it). Statements are replaced line by line at their own
indentation; every comment inside the replaced lines is kept, moved above the new
statement, so nothing the author wrote is lost. Expressions that survive (the
invariant parts: ``weight``, ``bias``, ``query.norm()``) are copied from the source
verbatim, formatting included.
"""

from __future__ import annotations

import ast
import io
import tokenize

from torchwise.findings import Edit, Position, Span
from torchwise.source import SourceFile


def indent_of(source: SourceFile, stmt: ast.stmt) -> str:
    line = source.lines[stmt.lineno - 1]
    return line[: len(line) - len(line.lstrip())]


def stands_alone(source: SourceFile, stmt: ast.stmt) -> bool:
    """The statement has its lines to itself (no ``a = 1; b = 2``)."""
    if getattr(stmt, "_tw_part_of", None) is not None:
        return False  # one name's part of `a, b = 0, 0`: the statement binds the others too
    span = source.span(stmt)
    before = source.lines[span.start.line][: span.start.col]
    after = source.lines[span.end.line][span.end.col:].strip()
    return not before.strip() and (not after or after.startswith("#"))


def comments_in(source: SourceFile, first_line: int, last_line: int) -> list[str]:
    """The comments on lines ``first_line..last_line`` (0-based, inclusive), in order."""
    region = "".join(source.lines[first_line:last_line + 1])
    if "#" not in region:
        return []
    comments = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(region).readline):
            if token.type == tokenize.COMMENT:
                comments.append(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [line.strip() for line in region.splitlines() if line.strip().startswith("#")]
    return comments


def _lines_span(source: SourceFile, first: ast.stmt, last: ast.stmt) -> tuple[Span, bool]:
    """From the start of ``first``'s line to the end of ``last``'s line; True when that ends with a newline."""
    end_line = last.end_lineno - 1
    line = source.lines[end_line]
    if line.endswith(("\n", "\r")):
        return Span(Position(first.lineno - 1, 0), Position(end_line + 1, 0)), True
    return Span(Position(first.lineno - 1, 0), Position(end_line, len(line))), False


def replace_statements(source: SourceFile, first: ast.stmt, last: ast.stmt, new_lines: list[str],
                       within: bool = False) -> Edit:
    """Replace the lines of ``first..last`` with ``new_lines`` (unindented), keeping their comments above.
    ``within``: the edit ends where ``last``'s line ends (its line break stays), so that it lies inside the
    statements' block even when ``last`` ends it (the benchmark finds the region by the block it is in)."""
    indent = indent_of(source, first)
    span, newline = _lines_span(source, first, last)
    if within and new_lines and newline:
        end_line = last.end_lineno - 1
        span = Span(span.start, Position(end_line, len(source.lines[end_line].rstrip("\r\n"))))
        newline = False
    kept = [f"{indent}{c}" for c in comments_in(source, first.lineno - 1, last.end_lineno - 1)]
    lines = kept + [f"{indent}{line}" if line else "" for line in new_lines]
    text = "\n".join(lines)
    if lines and newline:
        text += "\n"
    return Edit(span, text)


def delete_statement(source: SourceFile, stmt: ast.stmt) -> Edit:
    return replace_statements(source, stmt, stmt, [])


def insert_before(source: SourceFile, stmt: ast.stmt, line: str) -> Edit:
    position = Position(stmt.lineno - 1, 0)
    return Edit(Span(position, position), f"{indent_of(source, stmt)}{line}\n")


def insert_after(source: SourceFile, stmt: ast.stmt, indent: str, line: str) -> Edit:
    span, newline = _lines_span(source, stmt, stmt)
    if newline:
        return Edit(Span(span.end, span.end), f"{indent}{line}\n")
    return Edit(Span(span.end, span.end), f"\n{indent}{line}")


def replace_node(source: SourceFile, node: ast.AST, text: str) -> Edit:
    return Edit(source.span(node), text)


def substitute(source: SourceFile, outer: ast.AST, inner: ast.AST, text: str) -> str:
    """``outer``'s source text with ``inner`` (a node inside it) replaced by ``text``."""
    whole = source.span(outer)
    part = source.span(inner)
    start, end = source.offset(whole.start), source.offset(whole.end)
    a, b = source.offset(part.start), source.offset(part.end)
    return source.text[start:a] + text + source.text[b:end]
