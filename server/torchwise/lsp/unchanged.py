"""Which lines of a document are unchanged since an older text of it, and where they are now.

While the current text does not parse, hovers and lenses answer from the last analysis whose text did,
but only about code on lines unchanged since: a position on a changed line has no answer, never a
stale or shifted one.
"""

from __future__ import annotations

import ast
import difflib
from bisect import bisect_left, bisect_right
from typing import Collection, NamedTuple, Optional, Sequence

from torchwise.findings import Position, Span


class _Block(NamedTuple):
    """``size`` equal lines: ``old[old:old + size] == new[new:new + size]``."""

    old: int
    new: int
    size: int


class LineMap:
    """Lines of ``new`` equal to lines of ``old``, in order (what a line diff keeps)."""

    def __init__(self, old: Sequence[str], new: Sequence[str]):
        self._blocks = _matching_blocks(old, new)
        self._new_starts = [block.new for block in self._blocks]
        self._old_starts = [block.old for block in self._blocks]

    def to_old(self, position: Position) -> Optional[Position]:
        """``position`` of the new text in the old one; None on a changed line."""
        block = self._block_of(self._new_starts, position.line, new=True)
        if block is None:
            return None
        return Position(position.line - block.new + block.old, position.col)

    def to_new(self, span: Span) -> Optional[Span]:
        """``span`` of the old text in the new one, when every line it touches is unchanged and they
        are still together (nothing inserted between them); else None."""
        block = self._block_of(self._old_starts, span.start.line, new=False)
        if block is None or span.end.line >= block.old + block.size:
            return None
        shift = block.new - block.old
        return Span(Position(span.start.line + shift, span.start.col), Position(span.end.line + shift, span.end.col))

    def _block_of(self, starts: list[int], line: int, new: bool) -> Optional[_Block]:
        i = bisect_right(starts, line) - 1
        if i < 0:
            return None
        block = self._blocks[i]
        start = block.new if new else block.old
        return block if line < start + block.size else None


def _matching_blocks(old: Sequence[str], new: Sequence[str]) -> list[_Block]:
    """The common prefix and suffix (the usual edit touches one place: a linear scan), and a line diff of
    what lies between (a second edit elsewhere keeps the lines between the two)."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    old_middle, new_middle = old[prefix:len(old) - suffix], new[prefix:len(new) - suffix]
    blocks = [_Block(0, 0, prefix)]
    if old_middle and new_middle:
        # autojunk: lines repeated all over a large file (blank ones, `)`) do not anchor a match,
        # which keeps this to tens of ms on 5,000 lines edited at both ends.
        matcher = difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=True)
        blocks += [_Block(prefix + a, prefix + b, size) for a, b, size in matcher.get_matching_blocks()]
    blocks.append(_Block(len(old) - suffix, len(new) - suffix, suffix))
    return [block for block in blocks if block.size]


def statement_ends(tree: Optional[ast.Module], lines: Collection[int]) -> dict[int, int]:
    """The last line of the statements starting on each of ``lines`` (0-based): a lens stands for its whole
    loop, so it is shown from an older analysis only while every line of the loop is unchanged. Only
    statements around those lines are looked into (a 5,000-line tree walked whole takes 20+ ms)."""
    wanted = sorted(set(lines))
    ends: dict[int, int] = {}
    stack: list[ast.AST] = list(tree.body) if tree is not None and wanted else []
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            first, last = node.lineno - 1, node.end_lineno - 1
            i = bisect_left(wanted, first)
            if i == len(wanted) or wanted[i] > last:
                continue  # no wanted line inside
            if wanted[i] == first:
                ends[first] = max(ends.get(first, last), last)
        stack.extend(child for child in ast.iter_child_nodes(node)
                     if isinstance(child, (ast.stmt, ast.excepthandler, _MATCH_CASE)))
    return ends


_MATCH_CASE = getattr(ast, "match_case", ast.excepthandler)  # Python 3.9 has no `match`
