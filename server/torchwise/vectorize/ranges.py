"""Integer tensors that are known to hold no negative value: what lets an index skip Python's wrap-around.

A loop's ``out[idx[i]] += v`` or ``mask[b, :n[b]] = True`` counts a negative index from the end, so the
vectorized form wraps it first (``torch.where(idx < 0, idx + size, idx)``), which costs as much as the
op itself. Where the index tensor is made by an op that returns no negative value (``torch.randint(0, k,
...)``, ``argmax``, ``torch.arange(n)``...) and is never changed afterwards, the wrap is the identity.

The analysis has no value ranges yet (a fact for the facts engine); until then this reads the one
binding of the name, or for a parameter of a module-level function, what every call of it passes. Precision first: any use of the name that could change the tensor or hand it to
code that could (an alias, a call of user code, an in-place method, a subscript store) loses the fact.
"""

from __future__ import annotations

import ast
from typing import Optional

from torchwise.vectorize import proof

# ops whose integer results are never negative
_NONNEGATIVE_CALLS = frozenset({"torch.argmax", "torch.argmin", "torch.argsort", "torch.randperm", "torch.bincount",
                                "torch.multinomial", "torch.count_nonzero"})
_NONNEGATIVE_METHODS = frozenset({"argmax", "argmin", "argsort", "bincount", "count_nonzero"})
_KEEPS_SIGN = frozenset({"long", "int", "to", "clone", "contiguous", "cpu"})  # `ids.long()` of ids >= 0


def nonnegative_name(ctx, scope, name: str, depth: int = 0, reader: Optional[tuple] = None) -> bool:
    """The tensor ``name`` is bound once, by an op with no negative result (or, a parameter, passed one by every
    call), and only read afterwards (``reader``: (a function of the file, a position) whose parameter there
    only reads what it is passed)."""
    owner = scope.owner_of(name)
    if owner is None or proof.declared_shared(scope, name):
        return False
    bindings = owner.bindings.get(name, ())
    if len(bindings) == 1 and isinstance(bindings[0].node, ast.arg):
        return _nonnegative_parameter(ctx, owner, name, depth)
    if len(bindings) != 1 or bindings[0].value is None:
        return False
    binding = bindings[0].node
    if not (isinstance(binding, ast.Assign) and len(binding.targets) == 1 and isinstance(binding.targets[0], ast.Name)):
        return False
    if not _nonnegative_value(owner, bindings[0].value):
        return False
    return _only_read(ctx.tree, name, binding, reader)


def _nonnegative_parameter(ctx, scope, name: str, depth: int) -> bool:
    """A parameter of a module-level function that every call of it passes a tensor of no negative value (and
    that the function only reads): `update(points, assign)` called with `assign = torch.randint(0, k, (n,))`."""
    func, module = scope.node, scope.parent
    index = getattr(ctx, "index", None)
    if depth > 2 or index is None or not isinstance(func, ast.FunctionDef) or module is None \
            or module.parent is not None or len(module.bindings.get(func.name, ())) != 1 \
            or index.name_loads.get(func.name):
        return False  # nested, rebound, or used as a value: calls we cannot see
    args = func.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    sites = index.calls_by_name.get(func.name, ())
    if not sites or func.decorator_list:
        return False
    for call, site_scope in sites:
        if site_scope.owner_of(func.name) is not module or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords):
            return False
        given = [k.value for k in call.keywords if k.arg == name]
        if not given and name in positional and positional.index(name) < len(call.args):
            given = [call.args[positional.index(name)]]
        if not given:
            return False  # its default, or a call that does not fit
        arg = given[0]
        reader = (func.name, positional.index(name) if name in positional else None)
        if not (nonnegative_name(ctx, site_scope, arg.id, depth + 1, reader) if isinstance(arg, ast.Name)
                else _nonnegative_value(site_scope, arg)):
            return False
    return _only_read(func, name, None)


def _nonnegative_value(scope, node: ast.expr) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name) or \
            isinstance(func, ast.Attribute) and scope.qualname(func) is None:
        # a method: `logits.argmax(dim=1)`, `ids.long()`
        if func.attr in _NONNEGATIVE_METHODS:
            return True
        if func.attr in _KEEPS_SIGN and not (func.attr == "to" and _to_signed_narrow(node)):
            return _nonnegative_value(scope, func.value)
        return False
    qualname = scope.qualname(func)
    if qualname in _NONNEGATIVE_CALLS:
        return True
    if qualname == "torch.randint":
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        if len(positional) != len(node.args):
            return False
        low = [k.value for k in node.keywords if k.arg == "low"]
        if low:
            return _nonnegative_int(low[0])
        if len(positional) >= 3:
            return _nonnegative_int(positional[0])
        # `torch.randint(high, size)`: low is 0 (a negative high raises)
        return len(positional) == 2 and not any(k.arg == "high" for k in node.keywords)
    if qualname == "torch.arange":
        args = list(node.args)
        if node.keywords and any(k.arg in ("start", "end", "step") for k in node.keywords):
            return False
        if len(args) == 1:
            return True  # 0, 1, ..., end - 1
        if len(args) in (2, 3):
            step_ok = len(args) == 2 or (isinstance(args[2], ast.Constant) and type(args[2].value) is int
                                         and args[2].value > 0)
            return step_ok and _nonnegative_int(args[0])
    return False


def _to_signed_narrow(call: ast.Call) -> bool:
    """``.to(torch.int8)`` and other casts that could wrap a large value negative: not sign-keeping."""
    for arg in list(call.args) + [k.value for k in call.keywords]:
        if isinstance(arg, ast.Attribute) and arg.attr in ("long", "int64"):
            continue
        return True
    return False


def _nonnegative_int(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0


def _only_read(tree: ast.AST, name: str, binding: Optional[ast.Assign], reader: Optional[tuple] = None) -> bool:
    """Every mention of ``name`` in the module reads it: ``name[...]`` loads, ``len(name)``, a method that
    makes a new tensor, an argument of a torch op. Anything else (a store through it, an alias, a call of
    the file's own code, an in-place method, ``global``) might change what it holds."""
    parents: dict = {}
    nodes = list(_walk_same_name(tree, name))
    for node in nodes:
        for child in ast.iter_child_nodes(node):
            parents[child] = node
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
    for node in nodes:
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        parent = parents.get(node)
        if isinstance(node.ctx, ast.Store):
            if parent is not binding:
                return False
            continue
        if isinstance(node.ctx, ast.Del):
            return False
        if not _a_read(node, parent, parents, reader):
            return False
    return True


def _walk_same_name(tree: ast.AST, name: str):
    """``ast.walk``, less the functions nested in ``tree`` whose own parameter ``name`` is another variable."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and name in {
                    a.arg for a in (*child.args.posonlyargs, *child.args.args, *child.args.kwonlyargs)}:
                continue
            stack.append(child)


def _a_read(node: ast.Name, parent: Optional[ast.AST], parents: dict, reader: Optional[tuple] = None) -> bool:
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Attribute) and parent.value is node:
        if parent.attr.endswith("_") and not parent.attr.endswith("__"):
            return False  # `idx.clamp_(...)`, `idx.add_(1)`
        call = parents.get(parent)
        if isinstance(call, ast.Call) and call.func is parent:
            return not any(k.arg == "out" for k in call.keywords)
        return parent.attr in ("shape", "dtype", "device", "ndim", "T")
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        if isinstance(func, ast.Name) and (func.id in ("len", "print", "int", "float", "zip", "enumerate")
                                           or reader is not None and (func.id, parent.args.index(node)) == reader):
            return True
        # an argument of a torch function (not the file's own code, which may write into it), no `out=`
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id in ("torch", "F", "nn") \
            and not any(k.arg == "out" for k in parent.keywords)
    if isinstance(parent, (ast.BinOp, ast.Compare, ast.UnaryOp)):
        return True  # a new tensor (augmented assignment stores the Name, refused above)
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
        return True
    return False
