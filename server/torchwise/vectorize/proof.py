"""The soundness side of a rewrite: where names are bound, read, captured, and whether a loop can be empty.

A rewrite moves or deletes statements, so it must know that nothing else can see the
difference: the output is bound right before the loop and nobody else holds it, the
loop variable is not read afterwards, no ``try`` can observe a half-finished loop,
no nested function captures a name whose binding changes.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, Optional

from torchwise.analysis import dims

_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass
class Place:
    block: list  # the statement list holding the statement
    index: int
    parents: tuple  # enclosing statements, innermost last


def _places(tree: ast.Module) -> dict:
    places: dict = {}

    def visit(block: list, parents: tuple) -> None:
        for i, stmt in enumerate(block):
            places[stmt] = Place(block, i, parents)
            inner = parents + (stmt,)
            for field in _BLOCK_FIELDS:
                child = getattr(stmt, field, None)
                if isinstance(child, list) and child and isinstance(child[0], ast.stmt):
                    visit(child, inner)
            for handler in getattr(stmt, "handlers", ()) or ():
                visit(handler.body, inner + (handler,))
            for case in getattr(stmt, "cases", ()) or ():
                visit(case.body, inner + (case,))

    visit(tree.body, ())
    return places


def place_of(ctx, stmt: ast.stmt) -> Optional[Place]:
    cache = ctx.__dict__.setdefault("_vectorize_places", None)
    if cache is None:
        cache = ctx.__dict__["_vectorize_places"] = _places(ctx.tree)
    return cache.get(stmt)


def mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def count_mentions(node: ast.AST, name: str) -> int:
    return sum(1 for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name)


def binding_before(ctx, stmt: ast.stmt, name: str) -> Optional[ast.Assign]:
    """The ``name = value`` statement before ``stmt`` in its block, when nothing in between mentions ``name``."""
    place = place_of(ctx, stmt)
    if place is None:
        return None
    for i in range(place.index - 1, -1, -1):
        candidate = place.block[i]
        if isinstance(candidate, ast.Assign) and len(candidate.targets) == 1 \
                and isinstance(candidate.targets[0], ast.Name) and candidate.targets[0].id == name:
            return None if mentions(candidate.value, name) else candidate
        if mentions(candidate, name) or _binds_anything_hidden(candidate):
            return None
    return None


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
    stack = list(scope_node.body) if isinstance(scope_node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) \
        else [scope_node]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                stack.append(child)


def captured(scope_node: ast.AST, name: str) -> bool:
    """A nested function, lambda or class in this scope mentions ``name`` (it may hold the object)."""
    for node in own_nodes(scope_node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES) and mentions(child, name):
                return True
    return False


def declared_shared(scope, name: str) -> bool:
    return name in scope.global_names or name in scope.nonlocal_names


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
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name) \
                and node.target.id == name:
            rebinding.update(n for stmt in node.body for n in ast.walk(stmt))
        elif isinstance(node, _COMPREHENSIONS) and any(mentions(g.target, name) for g in node.generators):
            rebinding.update(ast.walk(node))
    for node in own_nodes(scope_node):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                and node not in inside and node not in rebinding:
            return True
    return False


def certainly_positive(count) -> bool:
    if isinstance(count, int):
        return count > 0
    return count is not None and dims.dim_lt(0, count) is True


def fresh_name(tree: ast.Module, wanted: str) -> str:
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    taken |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    taken |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    name, k = wanted, 2
    while name in taken:
        name, k = f"{wanted}{k}", k + 1
    return name
