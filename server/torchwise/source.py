"""One Python file's text, its syntax tree and position bookkeeping.

Analysis runs on the standard library's ``ast`` (70-85k lines/s here) rather than
on libcst with metadata (about 800 lines/s): see docs/architecture.md.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

from torchwise import incremental
from torchwise.findings import Position, Span


# str.splitlines also breaks at \v, \f, \x1c-\x1e, \x85, \u2028 and \u2029; Python's tokenizer, ast line
# numbers and LSP break only at \n, \r\n and \r. 54 files of the CPython stdlib hold a form feed.
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """``text``'s lines with their ends, broken only where Python and LSP break them (\\n, \\r\\n, \\r)."""
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(keepends=True)  # the same split, in C
    return _LINE.findall(text)


@dataclass(frozen=True)
class ParseError:
    message: str
    position: Position


class SourceFile:
    def __init__(self, text: str, path: str = "<string>", previous: "SourceFile | None" = None):
        self.text = text
        self.path = path
        # An earlier version of the same document: its unchanged statements are not parsed again.
        self._previous = previous
        self._used_up = False

    @cached_property
    def _raw_lines(self) -> list[str]:
        return split_lines(self.text)

    @cached_property
    def lines(self) -> list[str]:
        # keepends so offsets can be summed; a trailing "" line lets EOF positions resolve.
        lines = list(self._raw_lines)
        if not lines or lines[-1].endswith(("\n", "\r")):
            lines.append("")
        return lines

    @cached_property
    def _parsed(self) -> ast.Module | ParseError:
        previous, self._previous = self._previous, None  # keep no chain of old versions alive
        reuse = None
        if previous is not None and not previous._used_up and previous.tree is not None:
            reuse = incremental.Parsed(previous._raw_lines, previous.tree)
        try:
            tree, moved = incremental.parse(self.text, self._raw_lines, reuse, self.path)
            if moved:
                previous._used_up = True  # its statements now carry this version's line numbers
            return tree
        except SyntaxError as err:
            line = max((err.lineno or 1) - 1, 0)
            col = max((err.offset or 1) - 1, 0)
            return ParseError(err.msg, Position(line, col))
        except (ValueError, RecursionError, MemoryError) as err:  # e.g. null bytes
            return ParseError(str(err), Position(0, 0))

    @property
    def tree(self) -> ast.Module | None:
        parsed = self._parsed
        return parsed if isinstance(parsed, ast.Module) else None

    @property
    def parse_error(self) -> ParseError | None:
        parsed = self._parsed
        return parsed if isinstance(parsed, ParseError) else None

    def _col(self, line: int, byte_col: int) -> int:
        # ast columns count UTF-8 bytes; ours count code points.
        text = self.lines[line] if line < len(self.lines) else ""
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> Span:
        start_line = node.lineno - 1
        end_line = node.end_lineno - 1
        return Span(
            Position(start_line, self._col(start_line, node.col_offset)),
            Position(end_line, self._col(end_line, node.end_col_offset)),
        )

    @cached_property
    def _line_starts(self) -> list[int]:
        # (at C speed: every analysis of a long file builds it)
        starts = list(accumulate(map(len, self.lines), initial=0))
        starts.pop()
        return starts

    def offset(self, pos: Position) -> int:
        return self._line_starts[pos.line] + pos.col

    def text_of(self, span: Span) -> str:
        return self.text[self.offset(span.start):self.offset(span.end)]
