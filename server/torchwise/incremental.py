"""Re-parse only what an edit touched.

``ast.parse`` is about half of the analysis time on a large file, and a keystroke
changes one statement. The previous parse of the same document tells where its
top-level statements are; after an edit, the statements wholly before and after
the changed lines are reused (moved by the change in line count), and only the
text in between is parsed. That text is whole top-level statements, so gluing the
three parts together gives the very tree a full parse would. Whenever the middle
does not parse on its own (an edit that opens a bracket or a string, or indents a
line into the previous function), the whole text is parsed instead, so the result
is always exactly ``ast.parse(text)``.

Moving the reused statements rewrites their line numbers in place (a deep copy
would cost what the parse saves), so a previous parse can be reused only once:
the caller marks it used up when ``parse`` says it moved something.
"""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass
from itertools import compress, count
from operator import ne


@dataclass
class Parsed:
    lines: list[str]  # the text's lines, with their line endings
    tree: ast.Module


def first_line(stmt: ast.stmt) -> int:
    """1-based first line of a statement, decorators included."""
    decorators = getattr(stmt, "decorator_list", None)
    return min([stmt.lineno, *(d.lineno for d in decorators)]) if decorators else stmt.lineno


def parse(text: str, lines: list[str], previous: Parsed | None,
          filename: str = "<string>") -> tuple[ast.Module, bool]:
    """``ast.parse(text)`` reusing ``previous`` where the text did not change, and whether statements of
    ``previous`` were moved (it must not be reused again). Raises SyntaxError."""
    if previous is None or not previous.tree.body:
        return parse_whole(text, lines, filename), False
    old, new = previous.lines, lines
    limit = min(len(old), len(new))
    prefix = _common_run(old, new, limit)
    suffix = _common_run(reversed(old), reversed(new), limit - prefix)
    if prefix == len(old) == len(new):
        return previous.tree, False
    old_changed_end = len(old) - suffix  # 0-based, exclusive: old lines [prefix, old_changed_end) changed
    delta = len(new) - len(old)
    head, middle_start, tail, middle_end = [], 0, [], len(old)
    for stmt in previous.tree.body:
        first, last = first_line(stmt) - 1, stmt.end_lineno - 1  # 0-based, inclusive
        if last < prefix:
            head.append(stmt)
            middle_start = last + 1
        elif first >= old_changed_end and first > prefix:
            tail.append(stmt)
    if tail:
        middle_end = first_line(tail[0]) - 1
    # The middle in the new text: from where the reused head ends to where the reused tail starts.
    new_middle_end = middle_end + delta
    if new_middle_end < middle_start:
        return parse_whole(text, lines, filename), False
    middle_text = "".join(new[middle_start:new_middle_end])
    try:
        middle = ast.parse(middle_text, filename=filename)
    except (SyntaxError, ValueError):
        return parse_whole(text, lines, filename), False
    if middle_start:
        _shift_lines(middle.body, middle_start)
    if delta:
        _shift_lines(tail, delta)
    return ast.Module(body=[*head, *middle.body, *tail], type_ignores=[]), bool(delta and tail)


# Lines per piece of a long text parsed a piece at a time (see parse_whole).
PIECE_LINES = 4000
# A line that may start a top-level statement: code at column 0 that is not a compound statement's next clause.
_STATEMENT_START = re.compile(r"(?!(?:else|elif|except|finally)\b)[A-Za-z_@]")


def parse_whole(text: str, lines: list[str], filename: str = "<string>") -> ast.Module:
    """``ast.parse(text)``, a piece of whole top-level statements at a time where the text is long: ast.parse holds
    its C tree (about the size of the Python tree it makes: ~350 MB for a 200k-line file) until it returns, and the
    process keeps that peak. A piece is cut before a line of code at column 0; one that does not parse on its own
    (the cut fell inside a string, or the file has an error) is joined to the next ones, twice, and then the whole
    text is parsed (for its own error). A piece that parses alone ends outside any string, bracket or continuation,
    so the line after it starts a statement at the top level: the tree is the very tree of one parse. Each piece is
    padded with the newlines before it, so its line numbers are the file's (no walk to move them)."""
    if len(lines) <= 2 * PIECE_LINES:
        return ast.parse(text, filename=filename)
    body, start, cuts = [], 0, _cuts(lines)
    end, joined = next(cuts, len(lines)), 0
    while start < len(lines):
        try:
            piece = ast.parse("\n" * start + "".join(lines[start:end]), filename=filename)
        except (SyntaxError, ValueError):
            if end == len(lines) or joined == 2:
                return ast.parse(text, filename=filename)
            end, joined = next(cuts, len(lines)), joined + 1
            continue
        body += piece.body
        start, end, joined = end, next(cuts, len(lines)), 0
    return ast.Module(body=body, type_ignores=[])


def _cuts(lines: list[str]):
    """Where pieces of about PIECE_LINES lines may be cut: 0-based lines that may start a top-level statement."""
    match, at = _STATEMENT_START.match, PIECE_LINES
    while at < len(lines):
        if match(lines[at]):
            yield at
            at += PIECE_LINES
        else:
            at += 1


def _common_run(old, new, limit: int) -> int:
    """How many lines ``old`` and ``new`` have alike from their start, at most ``limit``: found at C speed (a
    Python loop over the lines of a 200k-line file cost ~40 ms an edit)."""
    differing = next(compress(count(), map(ne, old, new)), limit)
    return min(differing, limit)


def _shift_lines(stmts: list, delta: int) -> None:
    """``ast.increment_lineno`` on each of ``stmts``, 5x faster: the tail of a large file is hundreds of
    thousands of nodes, moved on every edit that adds or removes a line. Each statement's nodes with line
    numbers are listed once, on its first move, and kept for the next ones (a walk costs 2x the moving)."""
    for stmt in stmts:
        nodes = _LINED.get(stmt)
        if nodes is None:
            nodes = _LINED[stmt] = _lined_nodes(stmt)
        stmt.lineno += delta
        stmt.end_lineno += delta
        for node in nodes:
            node.lineno += delta
            node.end_lineno += delta


# Statement -> the nodes under it that carry line numbers (not the statement itself: a value that held its key
# would keep it alive).
_LINED: "weakref.WeakKeyDictionary[ast.stmt, list]" = weakref.WeakKeyDictionary()


def _lined_nodes(stmt: ast.stmt) -> list:
    found = []
    stack = [stmt]
    pop, push, add, AST = stack.pop, stack.append, found.append, ast.AST
    while stack:
        node = pop()
        kind = _KINDS.get(node.__class__)
        if kind is None:
            kind = _kind(node.__class__)
        has_lines, fields = kind
        if has_lines and node is not stmt:
            add(node)
        for name in fields:
            child = getattr(node, name)
            if child.__class__ is list:
                for item in child:
                    if isinstance(item, AST):
                        push(item)
            elif isinstance(child, AST):
                push(child)
    return found


_KINDS: dict = {}
# Fields that never hold nodes with line numbers (`ctx` and `op` hold position-less ones).
_NOT_NODES = frozenset({"ctx", "op", "id", "attr", "arg", "module", "type_comment", "kind", "level", "is_async",
                        "conversion", "simple", "asname"})


def child_nodes(node: ast.AST) -> list:
    """The nodes directly under ``node`` (``ast.iter_child_nodes`` without the position-less ``ctx``/``op``
    ones, the fields read once per node type): what the whole-statement scans walk."""
    kind = _KINDS.get(node.__class__)
    if kind is None:
        kind = _kind(node.__class__)
    found = []
    for name in kind[1]:
        child = getattr(node, name)
        if child.__class__ is list:
            found.extend(item for item in child if isinstance(item, ast.AST))
        elif isinstance(child, ast.AST):
            found.append(child)
    return found


def _kind(node_type: type) -> tuple:
    """Whether nodes of this type carry line numbers, and which fields may hold child nodes."""
    fields = () if node_type is ast.Constant else tuple(f for f in node_type._fields if f not in _NOT_NODES)
    kind = _KINDS[node_type] = ("lineno" in node_type._attributes, fields)
    return kind
