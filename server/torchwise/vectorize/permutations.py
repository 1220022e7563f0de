"""Index tensors whose values are distinct by construction: a permutation made right before the loop.

``inv[perm[i]] = i`` writes each slot once when ``perm`` is a permutation (``torch.randperm(n)``, the ``argsort`` of a
1-d tensor, the indices of its ``sort``): one advanced-index store ``inv[perm] = torch.arange(n)`` is then the loop,
whatever order the slots are written in. Any other index may repeat, and the loop keeps the last value written to a
slot where ``index_put_`` keeps an unspecified one.

Only what can be read off the text is believed: the permutation is bound in the loop's own block, and the statements
between only read it through calls that neither keep nor change it (``torch.empty_like(perm)``, ``len(perm)``,
``perm.numel()``, ``perm.shape``).
"""

from __future__ import annotations

import ast

from torchwise.analysis.values import TensorValue
from torchwise.vectorize import proof

_LIKE = frozenset({"torch.empty_like", "torch.zeros_like", "torch.ones_like", "torch.full_like"})
_SIZE_METHODS = frozenset({"numel", "size", "dim", "nelement"})


def distinct_by_construction(ctx, scope, loop: ast.stmt, index: ast.expr) -> bool:
    """``index`` is ``P[i]`` (one element of ``P`` per iteration) with ``P`` a permutation bound before ``loop``."""
    if not (isinstance(index, ast.Subscript) and isinstance(index.value, ast.Name)):
        return False
    name = index.value.id
    place = proof.place_of(ctx, loop)
    if place is None:
        return False
    for i in range(place.index - 1, -1, -1):
        stmt = place.block[i]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id == name:
            return not proof.mentions(stmt.value, name) and _makes_permutation(ctx, scope, stmt.value)
        if not _only_sized(stmt, name, scope):
            return False
    return False


def _makes_permutation(ctx, scope, value: ast.expr) -> bool:
    """``torch.randperm(n)``, ``x.argsort()`` / ``torch.argsort(x)`` / ``x.sort().indices`` of a 1-d ``x``."""
    if isinstance(value, ast.Call):
        qualname = scope.qualname(value.func)
        if qualname == "torch.randperm":
            return len(value.args) == 1 and all(k.arg in ("dtype", "device") for k in value.keywords) \
                and _dtype_keeps_ints(value)
        if qualname == "torch.argsort" and value.args:
            return _one_dim(ctx, value.args[0])
        if qualname is None and isinstance(value.func, ast.Attribute) and value.func.attr == "argsort":
            return _one_dim(ctx, value.func.value)
    if isinstance(value, ast.Attribute) and value.attr == "indices" and isinstance(value.value, ast.Call):
        call = value.value
        if scope.qualname(call.func) == "torch.sort" and call.args:
            return _one_dim(ctx, call.args[0])
        if scope.qualname(call.func) is None and isinstance(call.func, ast.Attribute) and call.func.attr == "sort":
            return _one_dim(ctx, call.func.value)
    return False


def _dtype_keeps_ints(call: ast.Call) -> bool:
    # randperm(n, dtype=torch.int8) wraps past 127, a float dtype rounds past 2**24: only the default int64
    return not any(k.arg == "dtype" for k in call.keywords)


def _one_dim(ctx, node: ast.expr) -> bool:
    value = ctx.value(node)
    return isinstance(value, TensorValue) and value.shape is not None and len(value.shape) == 1


def _only_sized(stmt: ast.stmt, name: str, scope) -> bool:
    """Every mention of ``name`` in ``stmt`` reads only its size (or makes a new tensor shaped like it)."""
    safe: set = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            qualname = scope.qualname(node.func)
            if (qualname in _LIKE or isinstance(node.func, ast.Name) and node.func.id == "len"
                    and qualname in (None, "len", "builtins.len")) and node.args:
                first = node.args[0]
                if isinstance(first, ast.Name) and first.id == name:
                    safe.add(id(first))
            if isinstance(node.func, ast.Attribute) and node.func.attr in _SIZE_METHODS \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                safe.add(id(node.func.value))
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "dtype", "device") \
                and isinstance(node.value, ast.Name) and node.value.id == name:
            safe.add(id(node.value))
    return all(id(n) in safe for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name)
