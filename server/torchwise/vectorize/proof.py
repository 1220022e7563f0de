"""The soundness side of a rewrite: where names are bound, read, captured, and whether a loop can be empty.

A rewrite moves or deletes statements, so it must know that nothing else can see the
difference: the output is bound right before the loop and nobody else holds it, the
loop variable is not read afterwards, no ``try`` can observe a half-finished loop,
no nested function captures a name whose binding changes.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass
from typing import Iterator, Optional

from torchwise.analysis import dims
from torchwise.vectorize.vec import _RANDOM

_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass
class Place:
    block: list  # the statement list holding the statement
    index: int
    parents: tuple  # enclosing statements, innermost last


def _places(body: list, top: ast.stmt) -> dict:
    """The places of ``top``, a statement of the module's ``body``, and of every statement inside it."""
    places: dict = {top: Place(body, body.index(top), ())}

    def visit(stmt: ast.stmt, inner: tuple) -> None:
        for field in _BLOCK_FIELDS:
            child = getattr(stmt, field, None)
            if isinstance(child, list) and child and isinstance(child[0], ast.stmt):
                visit_block(child, inner)
        for handler in getattr(stmt, "handlers", ()) or ():
            visit_block(handler.body, inner + (handler,))
        for case in getattr(stmt, "cases", ()) or ():
            visit_block(case.body, inner + (case,))

    def visit_block(block: list, parents: tuple) -> None:
        for i, stmt in enumerate(block):
            places[stmt] = Place(block, i, parents)
            visit(stmt, parents + (stmt,))

    visit(top, (top,))
    return places


def place_of(ctx, stmt: ast.stmt) -> Optional[Place]:
    # Laid out per top-level statement, when asked: the places of the whole module cost a walk of a long file on
    # every edit.
    top = ctx.top_level_of(stmt)
    if top is None:
        return None
    cache = ctx.memo.setdefault("vectorize.places", {})
    places = cache.get(top)
    if places is None:
        places = cache[top] = _places(ctx.tree.body, top)
    return places.get(stmt)


def mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def count_mentions(node: ast.AST, name: str) -> int:
    return sum(1 for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name)


def binding_before(ctx, stmt: ast.stmt, name: str, _between: tuple = ()) -> Optional[ast.Assign]:
    """The ``name = value`` statement before ``stmt`` in its block, when nothing in between mentions ``name`` or
    a name the value reads: a rewrite may evaluate the value's text where the loop is (``acc = init`` then
    ``init = init * 2`` would start the rewritten scan from the doubled ``init``)."""
    place = place_of(ctx, stmt)
    if place is None:
        return None
    between = list(_between)
    for i in range(place.index - 1, -1, -1):
        candidate = place.block[i]
        if isinstance(candidate, ast.Assign) and len(candidate.targets) == 1 \
                and isinstance(candidate.targets[0], ast.Name) and candidate.targets[0].id == name:
            if mentions(candidate.value, name) or not _unchanged_since(ctx, candidate.value, between):
                return None
            return candidate
        part = _tuple_part(candidate, name)
        if part is not None:
            return part if _unchanged_since(ctx, part.value, between) else None
        if mentions(candidate, name) or _binds_anything_hidden(candidate):
            return None
        between.append(candidate)
    outer = place.parents[-1] if place.parents else None
    if isinstance(outer, ast.With) and place.block is outer.body and _grad_mode_only(outer, name):
        # `out = torch.zeros(n)` then `with torch.no_grad(): for ...`
        return binding_before(ctx, outer, name, tuple(between))
    return None


# Besides the factories of vec._RANDOM: the in-place fills, dropout, and the `random` / `np.random` modules
_ALSO_RANDOM = frozenset({"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_",
                          "log_normal_", "dropout", "random", "shuffle", "choice", "permutation"})


def _draws(name: str) -> bool:
    return name in _RANDOM or name in _ALSO_RANDOM


def _unchanged_since(ctx, value: ast.expr, between: list) -> bool:
    """The value's text means the same where the loop is: no statement in between mentions a name it reads (an
    imported module it calls through, ``torch`` of ``torch.zeros(n)``, may be mentioned, not rebound), and a value
    that draws random numbers has nothing in between (moved past another draw, it would take other numbers)."""
    if not between:
        return True
    modules, called = _imported_modules(ctx), set()
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            func = node.func
            while isinstance(func, ast.Attribute):
                if _draws(func.attr):
                    return False
                func = func.value
            if isinstance(func, ast.Name) and _draws(func.id):
                return False
            if isinstance(func, ast.Name) and func is not node.func and func.id in modules:
                called.add(id(func))
    reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name) and id(n) not in called}
    namespaces = {n.id for n in ast.walk(value) if id(n) in called} - reads
    if namespaces and any(isinstance(n, ast.Attribute) and n.attr.startswith("set_default")
                          for s in between for n in ast.walk(s)):
        return False  # `torch.zeros(n)` after `torch.set_default_dtype(...)` makes another dtype
    return not any(mentions(s, r) for s in between for r in reads) \
        and not any(_binds(s, n) for s in between for n in namespaces)


def _imported_modules(ctx) -> frozenset:
    """The names the module's top-level ``import`` statements bind (``torch``, ``np``, ``F``)."""
    names = ctx.memo.get("vectorize.imported_modules")
    if names is None:
        names = ctx.memo["vectorize.imported_modules"] = frozenset(
            alias.asname or alias.name.split(".")[0]
            for stmt in ctx.tree.body if isinstance(stmt, ast.Import) for alias in stmt.names)
    return names


def _binds(stmt: ast.stmt, name: str) -> bool:
    """``stmt`` rebinds ``name`` (an assignment, import, def, loop or with target, del)."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) \
                and any((a.asname or a.name.split(".")[0]) == name for a in node.names):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
    return False


def _tuple_part(stmt: ast.stmt, name: str) -> Optional[ast.Assign]:
    """``name``'s part of ``a, b = 0, 0`` (a tuple of names bound to a tuple of as many values, none of which reads
    a name bound there): as ``name = 0``, marked so that no rewrite deletes the statement (it binds the others)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List))
            and isinstance(stmt.value, (ast.Tuple, ast.List))):
        return None
    names, values = stmt.targets[0].elts, stmt.value.elts
    if len(names) != len(values) or not all(isinstance(n, ast.Name) for n in names) \
            or any(isinstance(v, ast.Starred) for v in values):
        return None
    ids = [n.id for n in names]
    if name not in ids or ids.count(name) != 1 or any(mentions(v, other) for v in values for other in ids):
        return None
    target = names[ids.index(name)]
    part = ast.copy_location(ast.Assign(targets=[target], value=values[ids.index(name)]), stmt)
    part._tw_part_of = stmt
    return part


_GRAD_MODES = frozenset({"no_grad", "inference_mode", "enable_grad", "set_grad_enabled", "autocast"})


def _grad_mode_only(with_stmt: ast.With, name: str) -> bool:
    """``with torch.no_grad():`` (``inference_mode``, ``autocast``...): entering it runs no code of the program and
    binds nothing, so what was bound right before the block still holds at its first statement."""
    for item in with_stmt.items:
        call = item.context_expr
        func = call.func if isinstance(call, ast.Call) else None
        if not (isinstance(func, ast.Attribute) and func.attr in _GRAD_MODES) or item.optional_vars is not None \
                or mentions(call, name):
            return False
    return True


def _binds_anything_hidden(stmt: ast.stmt) -> bool:
    """``from m import *`` and ``exec``-like statements could bind any name."""
    return isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names)


def adjacent(ctx, first: ast.stmt, second: ast.stmt) -> bool:
    a, b = place_of(ctx, first), place_of(ctx, second)
    return a is not None and b is not None and a.block is b.block and a.index + 1 == b.index


def next_statement(ctx, stmt: ast.stmt) -> Optional[ast.stmt]:
    place = place_of(ctx, stmt)
    if place is None or place.index + 1 >= len(place.block):
        return None
    return place.block[place.index + 1]


def consecutive_after(ctx, stmt: ast.stmt, following: list) -> bool:
    """``following`` are the statements right after ``stmt`` in its block, one after the other."""
    place = place_of(ctx, stmt)
    if place is None:
        return False
    run = place.block[place.index + 1:place.index + 1 + len(following)]
    return len(run) == len(following) and all(a is b for a, b in zip(run, following))


def statements_between(ctx, first: ast.stmt, second: ast.stmt) -> Optional[list]:
    """The statements strictly between ``first`` and ``second`` of one block (None: not in one block, in order)."""
    a, b = place_of(ctx, first), place_of(ctx, second)
    if a is None or b is None or a.block is not b.block or a.index >= b.index:
        return None
    return a.block[a.index + 1:b.index]


def inside_try(ctx, stmt: ast.stmt, scope_node: ast.AST) -> bool:
    """An enclosing ``try`` (in the same function) could observe a half-run loop."""
    place = place_of(ctx, stmt)
    if place is None:
        return True
    for parent in place.parents:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(parent, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            if _within(parent, scope_node):
                return True
    return False


def _within(node: ast.AST, scope_node: ast.AST) -> bool:
    if isinstance(scope_node, ast.Module):
        return True
    return scope_node.lineno <= node.lineno and node.end_lineno <= scope_node.end_lineno


def own_nodes(scope_node: ast.AST) -> Iterator[ast.AST]:
    """Every node of a scope's own code (nested functions, classes and lambdas excluded)."""
    # A def or class that is a statement of the body is nested code too (its body is another scope).
    stack = [stmt for stmt in scope_node.body if not isinstance(stmt, _SCOPES)] \
        if isinstance(scope_node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) else [scope_node]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                stack.append(child)


def captured(scope_node: ast.AST, name: str) -> bool:
    """A nested function, lambda or class in this scope may reach this scope's ``name`` (it may hold the object).
    A sibling function's own local of the same name is another variable, and does not count."""
    return any(_reaches_out(nested, name) for nested in nested_scopes(scope_node))


def nested_scopes(scope_node: ast.AST) -> Iterator[ast.AST]:
    """The defs, lambdas and classes directly in a scope's own code (not those inside them)."""
    for node in (scope_node, *own_nodes(scope_node)):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES) and child is not scope_node:
                yield child


def _reaches_out(nested: ast.AST, name: str) -> bool:
    """``nested`` (a def, lambda or class) may read or bind the enclosing scope's ``name``. Conservative: any
    mention counts, except in the body of a function that binds ``name`` itself (its parameters, its stores), where
    Python's scoping rule makes every mention the function's own."""
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(nested)):
        return True
    if not mentions(nested, name):
        return False
    if isinstance(nested, ast.ClassDef):
        # The class's own code (bases, decorators, its body) counts whatever it binds; its methods skip the class
        # scope and see the enclosing one.
        return any(isinstance(n, ast.Name) and n.id == name for n in own_nodes(nested)) \
            or any(_reaches_out(method, name) for method in nested_scopes(nested))
    # Decorators, defaults and annotations are evaluated in the enclosing scope.
    outside = [*getattr(nested, "decorator_list", ()), *nested.args.defaults, *nested.args.kw_defaults,
               getattr(nested, "returns", None), *(a.annotation for a in _parameters(nested.args))]
    if any(part is not None and mentions(part, name) for part in outside):
        return True
    return not _binds_locally(nested, name)


def _parameters(args: ast.arguments) -> list:
    return [a for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg) if a is not None]


def _binds_locally(function: ast.AST, name: str) -> bool:
    """``function`` binds ``name`` in its own scope: a parameter, a store, a ``del``, an import, a nested def or
    class of that name. A comprehension's own targets are the comprehension's, not the function's."""
    if any(a.arg == name for a in _parameters(function.args)):
        return True
    if any(isinstance(nested, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and nested.name == name
           for nested in nested_scopes(function)):
        return True
    own = list(own_nodes(function))
    targets = {id(t) for node in own if isinstance(node, _COMPREHENSIONS)
               for g in node.generators for t in ast.walk(g.target)}
    for node in own:
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and id(node) not in targets:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
            return True
        if isinstance(node, ast.ExceptHandler) and node.name == name:
            return True
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
            return True
        if isinstance(node, ast.MatchMapping) and node.rest == name:
            return True
    return False


def declared_shared(scope, name: str) -> bool:
    return name in scope.global_names or name in scope.nonlocal_names


def deletable(ctx, scope_node: ast.AST, scope, loop: ast.For, init: Optional[ast.stmt]) -> Optional[ast.stmt]:
    """``init`` (a name's binding before ``loop``) when deleting it cannot be seen: it has its lines to itself, and
    no other code (a function called in between) can read the name before the loop sets it."""
    from torchwise.vectorize import rewrite

    if init is None or not rewrite.stands_alone(ctx.source, init):
        return None
    name = init.targets[0].id
    if (captured(scope_node, name) or declared_shared(scope, name)) and not adjacent(ctx, init, loop):
        return None
    return init


def read_outside(scope_node: ast.AST, loop: ast.For, name: str) -> bool:
    """``name`` (a loop variable) may be read somewhere its value after ``loop`` could reach.

    Conservative: any load of ``name`` in the scope outside ``loop`` counts, except inside another
    ``for`` loop (or comprehension) that binds ``name`` itself.
    """
    if captured(scope_node, name):
        return True
    inside = set()
    for node in ast.walk(loop):
        inside.add(node)
    rebinding = set()
    for node in own_nodes(scope_node):
        if node is loop:
            continue
        if isinstance(node, (ast.For, ast.AsyncFor)) and _binds_plainly(node.target, name):
            rebinding.update(n for stmt in node.body for n in ast.walk(stmt))
        elif isinstance(node, _COMPREHENSIONS) and any(mentions(g.target, name) for g in node.generators):
            rebinding.update(ast.walk(node))
    for node in own_nodes(scope_node):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                and node not in inside and node not in rebinding:
            return True
    return False


def _binds_plainly(target: ast.expr, name: str) -> bool:
    """A ``for`` target that binds ``name`` on every iteration: ``i``, ``(i, s)``, ``i, (a, b)``."""
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_binds_plainly(element, name) for element in target.elts)
    return False


def certainly_positive(count) -> bool:
    if isinstance(count, int):
        return count > 0
    return count is not None and dims.dim_lt(0, count) is True


_TAKEN: "weakref.WeakKeyDictionary[ast.Module, frozenset]" = weakref.WeakKeyDictionary()
# Top-level statement -> the names its code uses: an edit keeps the other statements (the same nodes), so a new
# tree's names are gathered from its changed statements only (a walk of a 200k-line tree took a second an edit).
_TAKEN_IN: "weakref.WeakKeyDictionary[ast.stmt, frozenset]" = weakref.WeakKeyDictionary()


def fresh_name(tree: ast.Module, wanted: str) -> str:
    """``wanted``, or ``wanted2``, ``wanted3``...: a name no code of the module uses (the module's names are
    gathered once per tree: a walk per hoisted temporary made long files quadratic)."""
    taken = _TAKEN.get(tree)
    if taken is None:
        taken = _TAKEN[tree] = frozenset().union(*map(_names_in, tree.body))
    name, k = wanted, 2
    while name in taken:
        name, k = f"{wanted}{k}", k + 1
    return name


def _names_in(stmt: ast.stmt) -> frozenset:
    found = _TAKEN_IN.get(stmt)
    if found is None:
        found = set()
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name):
                found.add(n.id)
            elif isinstance(n, ast.arg):
                found.add(n.arg)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(n.name)
        found = _TAKEN_IN[stmt] = frozenset(found)
    return found


def scope_node(scope):
    """The function or module whose code holds ``scope`` (comprehensions, lambdas and classes are looked through)."""
    node = scope.node
    while isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.ClassDef)) \
            and scope.parent is not None:
        scope = scope.parent
        node = scope.node
    return node


def _single_binding(scope, name: str):
    owner = scope.owner_of(name)
    if owner is None or len(owner.bindings.get(name, ())) != 1 or declared_shared(scope, name):
        return None, None
    return owner, owner.bindings[name][0]


def list_element(ctx, scope, name: ast.Name):
    """(what every element is, the length or None) of the list ``name`` of same-shaped tensors, when the
    list is built once and never changed."""
    from torchwise.analysis.values import TensorValue, join

    owner, binding = _single_binding(scope, name.id)
    if binding is None:
        return None
    value = binding.value
    element, length = None, None
    if isinstance(value, ast.ListComp) and len(value.generators) == 1 and not value.generators[0].ifs:
        element = ctx.value(value.elt)
        length = _walk_length(ctx, value.generators[0].iter)
    elif isinstance(value, (ast.List, ast.Tuple)) and value.elts and \
            not any(isinstance(e, ast.Starred) for e in value.elts):
        items = [ctx.value(e) for e in value.elts]
        element = items[0]
        for item in items[1:]:
            element = join(element, item)
        length = len(value.elts)
    if not isinstance(element, TensorValue) or element.dtype is None or element.shape is None \
            or element.device is None:
        return None
    if not list_never_changed(scope_node(owner), name.id, binding.node):
        return None
    return element, length


def _walk_length(ctx, iterable: ast.expr):
    """How many items ``for _ in iterable`` makes, when that is certain (``range(n)``, a known list)."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range" \
            and len(iterable.args) == 1 and not iterable.keywords:
        from torchwise.analysis.values import ScalarValue

        count = ctx.value(iterable.args[0])
        if isinstance(count, ScalarValue) and count.kind == "int" and count.value is not None:
            return count.value
        if isinstance(iterable.args[0], ast.Constant) and type(iterable.args[0].value) is int:
            return iterable.args[0].value
    if isinstance(iterable, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in iterable.elts):
        return len(iterable.elts)
    return None


def list_never_changed(node: ast.AST, name: str, binding: ast.AST) -> bool:
    """Every use of the list ``name`` only reads it: iterated, ``len``-ed, indexed, stacked or concatenated."""
    parents = {}
    for parent in own_nodes(node):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent
    if captured(node, name):
        return False
    for sub in own_nodes(node):
        if not (isinstance(sub, ast.Name) and sub.id == name):
            continue
        if isinstance(sub.ctx, ast.Store):
            if parents.get(sub) is not binding:
                return False
            continue
        parent = parents.get(sub)
        if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is sub:
            continue
        if isinstance(parent, ast.Subscript) and parent.value is sub and isinstance(parent.ctx, ast.Load):
            continue
        if isinstance(parent, ast.Call) and sub in parent.args and isinstance(parent.func, (ast.Name, ast.Attribute)):
            func = parent.func
            callee = func.id if isinstance(func, ast.Name) else func.attr
            if callee in ("len", "stack", "cat", "tensor", "as_tensor", "zip", "enumerate", "reversed", "max", "min",
                          "sum", "sorted", "list", "tuple", "any", "all"):  # they read the list, or copy it
                continue
        return False
    return True


def list_stable(ctx, scope, name: str) -> bool:
    """The list ``name`` is bound once (an assignment or a parameter) and only ever read: its items at the loop
    are the ones it was made with (the engine's facts about them hold)."""
    owner = scope.owner_of(name)
    if owner is None or len(owner.bindings.get(name, ())) != 1 or declared_shared(scope, name):
        return False
    return list_never_changed(scope_node(owner), name, owner.bindings[name][0].node)
