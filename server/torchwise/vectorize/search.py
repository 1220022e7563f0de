"""Search loops: the first element where a test holds, or whether any does.

``if COND: return i`` followed by ``return D`` (or ``k = i; break`` after ``k = D``) is the first index of the
mask ``COND`` over all elements, ``D`` when there is none: ``hits = COND.nonzero()`` then
``int(hits[0]) if len(hits) else D``. ``return True`` / ``return False`` is ``bool(COND.any())``.
The loop stops at the first hit and the rewrite tests every element: the test must not raise.
"""

from __future__ import annotations

import ast
from typing import Optional

from torchwise.analysis.dtypes import DType
from torchwise.vectorize import proof, rewrite
from torchwise.vectorize.expr import no_raising_ops


def first_hit(matcher, space, kind: str):
    """The match for a search loop (``matcher`` is the loop matcher, ``space`` its one level), or None."""
    loop = matcher.loop
    stmt = loop.body[0]
    if kind == "list" or not (isinstance(stmt, ast.If) and not stmt.orelse):
        return None
    found = _returned(matcher, stmt) or _broken(matcher, stmt)
    if found is None:
        return None
    value, default, last, name = found
    no_raising_ops(stmt.test)
    cond = matcher.translator(space)(stmt.test)
    if not (cond.batched and cond.is_tensor and cond.dtype is DType.bool and cond.rank == 0) \
            or cond.batch_dims != 1:
        return None
    source = matcher.source
    default_text = source.text_of(source.span(default)) if default is not None else None
    lead = "return " if name is None else f"{name} = "
    lines_for = None
    if _is_bool(value):
        if not (_is_bool(default) and default.value is not value.value) or matcher.scope.owner_of("bool"):
            return None
        lines = [lead + (f"bool({cond.atom()}.any())" if value.value else f"not {cond.atom()}.any()")]
    elif isinstance(value, ast.Name) and value.id == space.index and space.kind in ("range", "tensor"):
        if not (type(space.start) is int and type(space.step) is int) or matcher.scope.owner_of("int") \
                or matcher.scope.owner_of("len"):
            return None
        hits = proof.fresh_name(matcher.ctx.tree, "hits")
        first = f"int({hits}[0])"
        if space.step != 1:
            first = f"{first} * {space.step}"
        if space.start:
            first = f"{first} + {space.start}" if space.start > 0 else f"{first} - {-space.start}"
        def lines_for(default_text):
            return [f"{hits} = {cond.atom()}.nonzero()", f"{lead}{first} if len({hits}) else {default_text}"]
        lines = lines_for(default_text)
    else:
        return None
    what = "the first hit" if not _is_bool(value) else "whether any element passes"
    message = f"loop tests one element at a time until the first hit; vectorized, one test gives {what}: " \
              f"`{'; '.join(lines)}`"

    def obligations():
        matcher.loop_variable_free()
        init = proof.binding_before(matcher.ctx, loop, name) if name is not None else None
        kept = init is not None and matcher.deletable(init) is None
        deleted = [init] if init is not None and not kept else []
        # the starting value's statement stays where it cannot be deleted: it is the value when nothing passes
        final = lines_for(name) if kept and lines_for is not None else lines

        def build():
            edits = [rewrite.delete_statement(source, d) for d in deleted]
            return edits + [rewrite.replace_statements(source, loop, last, final)]
        return build

    return matcher.finish("TW405", message, f"Vectorize: `{lines[-1][:50]}`", obligations)


def _returned(matcher, stmt: ast.If) -> Optional[tuple]:
    """``if COND: return V`` right before ``return D``: (V, D, the last statement, None)."""
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Return) or stmt.body[0].value is None:
        return None
    after = proof.next_statement(matcher.ctx, matcher.loop)
    if not isinstance(after, ast.Return) or after.value is None or not _pure_default(matcher, after.value):
        return None
    return stmt.body[0].value, after.value, after, None


def _broken(matcher, stmt: ast.If) -> Optional[tuple]:
    """``k = D`` before the loop, ``if COND: k = V; break`` in it: (V, D, the loop, k)."""
    if len(stmt.body) != 2 or not isinstance(stmt.body[1], ast.Break):
        return None
    assign = stmt.body[0]
    if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)):
        return None
    name = assign.targets[0].id
    init = proof.binding_before(matcher.ctx, matcher.loop, name)
    if init is None or proof.mentions(stmt.test, name) or not _pure_default(matcher, init.value):
        return None
    return assign.value, init.value, matcher.loop, name


def _pure_default(matcher, node: ast.expr) -> bool:
    """The value when nothing passes: a constant or a plain name (evaluated later by the rewrite: unchanged)."""
    return isinstance(node, ast.Constant) or isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant) \
        or isinstance(node, ast.Name) and node.id not in _names(matcher.loop)


def _names(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _is_bool(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, bool)
