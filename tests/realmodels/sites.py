"""The places in a file where the engine states a fact that the runtime can check, and their loops.

A site is an ``ast.Name`` the engine has a fact for: a *target* (Store: assignment, tuple unpacking,
``for``, augmented assignment, ``with ... as``, walrus, comprehension) or a *use* (Load), or an
``ast.arg`` (a *parameter*) when the engine states one. Checkable facts: a ``TensorValue`` that knows
its shape, dtype or device; an ``int`` ``ScalarValue`` with a value (``B, T, C = x.size()`` binds
``B``); a ``SeqValue`` of known length or element; a ``SymbolicValue`` (see ``facts.checkable``).

Each site also carries the loops around it *in its own frame* (outermost first): a symbol introduced
inside a loop may stand for a different size on every iteration (see ``checking``).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field

from .facts import checkable

# Since 3.12 a comprehension runs in the frame of the function around it (PEP 709).
INLINED_COMPREHENSIONS = sys.version_info >= (3, 12)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
Position = tuple  # (lineno, col_offset, end_lineno, end_col_offset): what ast and co_positions() both give


def position(node: ast.AST) -> Position:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


@dataclass(eq=False)
class Site:
    node: ast.AST
    kind: str  # "target" | "use" | "parameter"
    name: str
    fact: object
    loops: tuple  # the ast.For / ast.While / ast.comprehension nodes around it in its frame, outermost first
    in_forward: bool = False  # a name assigned in a `forward` method (the coverage the issue measures)

    @property
    def line(self) -> int:
        return self.node.lineno

    def __repr__(self) -> str:
        return f"Site({self.kind} `{self.name}` at {self.node.lineno}:{self.node.col_offset + 1})"


@dataclass
class Sites:
    stores: dict = field(default_factory=dict)  # position -> Site (targets)
    loads: dict = field(default_factory=dict)  # position -> Site (uses)
    parameters: dict = field(default_factory=dict)  # (code name, first line) -> [Site]
    starts: dict = field(default_factory=dict)  # loop -> the position whose entry starts an iteration

    def __len__(self) -> int:
        return len(self.stores) + len(self.loads) + sum(map(len, self.parameters.values()))


def find_sites(tree: ast.Module, values: dict) -> Sites:
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    sites = Sites()
    lambdas_per_line: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            lambdas_per_line[node.lineno] = lambdas_per_line.get(node.lineno, 0) + 1
    for node, fact in values.items():
        if not checkable(fact):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Load)):
            store = isinstance(node.ctx, ast.Store)
            site = Site(node, "target" if store else "use", node.id, fact, loops_around(node, parents))
            (sites.stores if store else sites.loads)[position(node)] = site
        elif isinstance(node, ast.arg):
            function = parents.get(parents.get(node))
            key = _code_key(function, lambdas_per_line)
            if key is not None:
                sites.parameters.setdefault(key, []).append(Site(node, "parameter", node.arg, fact, ()))
    # Every name a `forward` assigns is a site, known or not: the run says which are tensors, so coverage is
    # measured over the tensors the code really makes (sizes, devices and modules left out).
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.name == "forward":
            for node in ast.walk(function):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                        and _frame_of(node, parents) is function:
                    site = sites.stores.get(position(node))
                    if site is None:
                        site = sites.stores[position(node)] = Site(node, "target", node.id, values.get(node),
                                                                   loops_around(node, parents))
                    site.in_forward = True
    for site in [*sites.stores.values(), *sites.loads.values()]:
        for loop in site.loops:
            sites.starts.setdefault(loop, position(iteration_start(loop)))
    return sites


def _frame_of(node: ast.AST, parents: dict):
    """The function, lambda or comprehension whose frame runs ``node``."""
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                         *COMPREHENSIONS)):
        parent = parents.get(parent)
    return parent


def _code_key(function, lambdas_per_line: dict):
    """How the code object of ``function`` is recognised: its name and ``co_firstlineno``."""
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        first = function.decorator_list[0].lineno if function.decorator_list else function.lineno
        return function.name, first
    if isinstance(function, ast.Lambda) and lambdas_per_line[function.lineno] == 1:
        return "<lambda>", function.lineno
    return None  # several lambdas on one line: which code is which is not worth guessing


def iteration_start(loop: ast.AST) -> ast.AST:
    """The part of a loop whose execution begins each iteration: the target a ``for`` (or a
    comprehension) assigns, a ``while``'s test (evaluated before each pass), or the first statement
    of a ``while True:`` (whose test compiles to nothing)."""
    if isinstance(loop, ast.While):
        return loop.body[0] if isinstance(loop.test, ast.Constant) else loop.test
    return loop.target


def loops_around(node: ast.AST, parents: dict) -> tuple:
    """The loops whose iterations run ``node``, up to the boundary of the frame that runs it."""
    loops = []
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, (ast.For, ast.AsyncFor)):
            if child is parent.target or child in parent.body:
                loops.append(parent)
        elif isinstance(parent, ast.While):
            if child is parent.test or child in parent.body:
                loops.append(parent)
        elif isinstance(parent, ast.comprehension):
            if child is not parent.iter:
                loops.append(parent)
        elif isinstance(parent, COMPREHENSIONS):
            generators = parent.generators
            inner = generators.index(child) if child in generators else len(generators)
            loops.extend(reversed(generators[:inner]))  # the generators before this one, or all for the element
            first_iterable = child is generators[0] and node_in(node, generators[0].iter)
            if not first_iterable and not INLINED_COMPREHENSIONS:
                break  # the comprehension's own frame (its first iterable is evaluated outside it)
        elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            body = parent.body if isinstance(parent.body, list) else [parent.body]
            if child in body:
                break  # decorators, defaults and bases are evaluated in the frame around
        child, parent = parent, parents.get(parent)
    return tuple(reversed(loops))


def node_in(node: ast.AST, ancestor: ast.AST) -> bool:
    return any(n is node for n in ast.walk(ancestor))
