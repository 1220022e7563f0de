"""A tensor the loop body writes at one slot and reads at another: state carried between iterations.

``taken[best] = True`` after ``if taken[g]: continue`` (greedy matching): what a later iteration reads depends on
what an earlier one wrote, so no per-iteration batch gives the same result. Used to say so when the loop is
refused, instead of naming whichever statement the translator stopped at.
"""

from __future__ import annotations

import ast
from typing import Optional


def _slots(statements: list, ctx: type) -> dict:
    """name -> set of index texts, for every ``name[...]`` in ``ctx`` (Load or Store) in the statements."""
    slots: dict = {}
    for stmt in statements:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ctx) and isinstance(node.value, ast.Name):
                slots.setdefault(node.value.id, set()).add(ast.dump(node.slice))
    return slots


def carried_tensor(statements: list) -> Optional[str]:
    """The first tensor written at a slot and read at a different slot in the same body; None when there is none."""
    written, read = _slots(statements, ast.Store), _slots(statements, ast.Load)
    for name, stores in written.items():
        if read.get(name, set()) - stores:
            return name
    return None
