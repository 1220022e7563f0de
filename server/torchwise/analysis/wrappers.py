"""Wrapper modules (issue 11): ``PreNorm(dim, Attention(...))``, ``Residual(FeedForward(...))``.

A class that takes a module as an ``__init__`` argument, stores it in one attribute and only ever calls it through
that attribute (``self.fn(x, **kwargs)``) calls it nowhere else: the wrapped module's calls are exactly the calls
of ``self.fn`` in the wrapper's methods. Then those calls can be the wrapped module's call sites. Anything else a
class does with such an argument (keeps it in a list, passes it on, reads ``self.fn.weight``, hands ``self`` out,
walks its children) escapes what the analysis follows: the wrapped module's methods take no facts from their calls.
"""

from __future__ import annotations

import ast
from typing import Optional

# Attributes of `self` through which a module reaches its sub-modules other than by their names.
_REACHES_CHILDREN = frozenset({"children", "modules", "named_children", "named_modules", "_modules", "__dict__",
                               "apply", "__getattr__", "__getattribute__", "get_submodule"})


def wrapper_attribute(cls: ast.ClassDef, param: str) -> Optional[str]:
    """The attribute through which ``cls`` calls what its ``__init__`` parameter ``param`` is, when that is all
    its own code does with it; else None. (A subclass, or a base, of the same file could use the attribute in
    methods of its own: the caller checks there is none.) Only the class's code: kept while it is the same node."""
    methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    inits = [m for m in methods if m.name == "__init__"]
    if len(inits) != 1 or len({m.name for m in methods}) != len(methods):
        return None
    init = inits[0]
    args = init.args
    named = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if len(named) < 2 or param not in named[1:] or param == named[0]:
        return None
    uses = [n for n in ast.walk(init) if isinstance(n, ast.Name) and n.id == param]
    if len(uses) != 1:  # (the parameter itself is an ast.arg: any Name is a load or a rebinding)
        return None
    attr = None
    for stmt in ast.walk(init):
        if isinstance(stmt, ast.Assign) and stmt.value is uses[0] and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == named[0]:
                attr = target.attr
    if attr is None:
        return None
    allowed = set()  # the `self.<attr>` nodes that are the callee of a call in a method's own code
    for method in methods:
        if _is_static(method) or not (method.args.posonlyargs or method.args.args):
            return None
        me = (method.args.posonlyargs or method.args.args)[0].arg
        if not _self_stays(method, me):
            return None  # `self` handed out (or rebound): code elsewhere could reach the attribute
        if method is init:
            continue
        for node in own_nodes(method):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attr \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == me:
                allowed.add(id(node.func))
    stores = 0
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and node.attr == attr:
            if isinstance(node.ctx, ast.Store):
                stores += 1
            elif id(node) not in allowed:
                return None
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "setattr", "delattr", "vars"):
            return None
    return attr if stores == 1 else None


def _self_stays(method, me: str) -> bool:
    """``self`` only read as the object of an attribute (``self.fn``, ``self.norm(x)``), of none that reaches the
    sub-modules wholesale; in ``__init__`` also passed to a base's ``__init__``."""
    receivers, passed = set(), set()
    for node in ast.walk(method):
        if isinstance(node, ast.Attribute):
            if node.attr in _REACHES_CHILDREN:
                return False
            receivers.add(id(node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__":
            passed.update(id(a) for a in node.args)
    return all(id(n) in receivers or id(n) in passed and method.name == "__init__"
               for n in ast.walk(method) if isinstance(n, ast.Name) and n.id == me)


def _is_static(node) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list)


def own_nodes(node):
    """The nodes of a def's body, without those of nested defs, classes and lambdas."""
    stack = list(node.body)
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)
