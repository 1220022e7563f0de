"""Inlay hints: after an assignment whose tensor facts are known, its shape in named dims and, when it is not the
default, its dtype (`x = ...` shows `: (B, T, n_embd)`, `idx = ...` shows `: (N,) int64`).

Pure: an analysed module and a line range in, ``(position, label)`` pairs out. The text is the hover's
(``explain.shape_text``), so both always agree; nothing is shown where the facts do not know (no ``?``).
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from torchwise.analysis.dims import Sym
from torchwise.analysis.values import TensorValue
from torchwise.explain import shape_text
from torchwise.findings import Position

# What holds statements: statements, `except` clauses, `case` clauses (Python 3.10+).
_BLOCKS = tuple(kind for kind in (ast.stmt, ast.excepthandler, getattr(ast, "match_case", None)) if kind)


def label(value, default_float, shapes: bool = True, dtypes: bool = True) -> Optional[str]:
    """`: (B, T, n_embd)`, `: (N,) int64`, `: int64`; None when nothing is known that is worth showing."""
    if not isinstance(value, TensorValue):
        return None
    parts = []
    if shapes and value.shape is not None and not any(isinstance(d, Sym) and d.is_fresh for d in value.shape):
        parts.append(shape_text(value.shape))
    if dtypes and value.dtype is not None and value.dtype != default_float:
        parts.append(value.dtype.short)
    return ": " + " ".join(parts) if parts else None


def _targets(statement: ast.stmt) -> Iterator[ast.expr]:
    """The names an assignment binds, tuple unpacking included (``a, b = ...``), for hints after each."""
    # Not an annotated one (`z: Tensor = ...`): its author wrote a type there, and a hint after it would read as a
    # second annotation.
    if not isinstance(statement, ast.Assign):
        return
    pending = list(statement.targets)
    while pending:
        target = pending.pop(0)
        if isinstance(target, (ast.Tuple, ast.List)):
            pending[:0] = list(target.elts)
        elif isinstance(target, (ast.Name, ast.Attribute)):
            yield target


def hints(source, inference, first_line: int, last_line: int, shapes: bool = True,
          dtypes: bool = True) -> list[tuple[Position, str]]:
    """Hints of the assignments starting on lines ``first_line``..``last_line`` (0-based, inclusive), in order."""
    tree = source.tree
    if tree is None or not (shapes or dtypes):
        return []
    found = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        start, end = getattr(node, "lineno", 1) - 1, (getattr(node, "end_lineno", None) or 10 ** 9) - 1
        if end < first_line or start > last_line:
            continue
        if isinstance(node, ast.Assign) and start >= first_line:
            for target in _targets(node):
                text = label(inference.values.get(target), inference.default_float, shapes, dtypes)
                if text is not None:
                    found.append((source.span(target).end, text))
            continue
        stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, _BLOCKS))
    return sorted(found, key=lambda hint: hint[0])
