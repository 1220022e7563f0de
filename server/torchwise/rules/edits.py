"""Building fix edits with libcst, only for the code a fix touches.

The analysis finds a node with ``ast``; a fix re-parses just that node's text with
libcst, changes the tree and prints it back, so formatting and comments inside
the call survive and nothing outside it is touched.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Sequence

from torchwise.analysis.scopes import Scope
from torchwise.findings import Edit, Position, Span
from torchwise.source import SourceFile

if TYPE_CHECKING:
    import libcst as cst


def _cst():
    # libcst costs ~0.5 s to import: the server only pays it when a fix is built.
    import libcst

    return libcst


def keyword(name: str, value: str) -> "cst.Arg":
    cst = _cst()
    no_space = cst.SimpleWhitespace("")
    return cst.Arg(
        value=cst.parse_expression(value),
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space),
    )


def positional(value: str) -> "cst.Arg":
    cst = _cst()
    return cst.Arg(cst.parse_expression(value))


def rewrite_call(
    source: SourceFile,
    call: ast.Call,
    func: str | None = None,
    append: Sequence["cst.Arg"] = (),
    prepend: Sequence["cst.Arg"] = (),
) -> Edit:
    """Replace ``call``'s callee with ``func``, put ``prepend`` first (positional arguments go before any keyword)
    and append arguments, keeping the rest as written."""
    cst = _cst()
    span = source.span(call)
    tree = cst.parse_expression(source.text_of(span))
    assert isinstance(tree, cst.Call)
    args = list(tree.args)
    if append:
        # Keep the call's trailing-comma style: `f(\n  a,\n)` grows as `f(\n  a,\n  b,\n)`.
        trailing = args[-1].comma if args and isinstance(args[-1].comma, cst.Comma) else None
        between = _bare(args[-2].comma) if trailing and len(args) >= 2 and isinstance(args[-2].comma, cst.Comma) \
            else trailing
        for arg in append:
            if trailing:
                args[-1] = args[-1].with_changes(comma=between)
                arg = arg.with_changes(comma=trailing)
            args.append(arg)
    if prepend:
        separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args = [arg.with_changes(comma=separator) if args or i < len(prepend) - 1 else arg
                for i, arg in enumerate(prepend)] + args
    changes: dict = {"args": args}
    if func is not None:
        changes["func"] = cst.parse_expression(func)
    return Edit(span, cst.Module([]).code_for_node(tree.with_changes(**changes)))


def _bare(comma: "cst.Comma") -> "cst.Comma":
    """The comma's line break and indentation, without the comment that may follow it."""
    cst = _cst()
    after = comma.whitespace_after
    if isinstance(after, cst.ParenthesizedWhitespace):
        after = after.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
    return comma.with_changes(whitespace_after=after)


def replace_node(source: SourceFile, node: ast.AST, text: str) -> Edit:
    return Edit(source.span(node), text)


def module_name(scope: Scope, tree: ast.Module, module: str) -> tuple[str, list[Edit]] | None:
    """How to spell ``module`` at ``scope``: an alias already imported, else ``import module`` added.

    None when the plain name is taken by something else there (no safe spelling).
    """
    aliases = list(scope.aliases_of(module))
    if aliases:
        return (module if module in aliases else aliases[0]), []
    if scope.owner_of(module) is not None:
        return None
    return module, [import_edit(tree, module)]


def import_edit(tree: ast.Module, module: str) -> Edit:
    """Insert ``import module`` after the module docstring and ``__future__`` imports."""
    line = 0
    for index, stmt in enumerate(tree.body):
        is_docstring = (index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                        and isinstance(stmt.value.value, str))
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if not (is_docstring or is_future):
            break
        line = stmt.end_lineno
    return Edit(Span(Position(line, 0), Position(line, 0)), f"import {module}\n")


def postfix(source: SourceFile, node: ast.AST, suffix: str) -> str:
    """``node``'s text followed by ``suffix`` (``.unsqueeze(1)``), parenthesized when it is not an atom."""
    text = source.text_of(source.span(node))
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        text = f"({text})"
    return text + suffix
