"""Is a statement of the user's file *plain setup*, safe to run without asking?

Plain: assignments (and ``for`` loops over plain iterables, ``lst.append(...)``-style calls)
whose every name resolves to something on the allowlist (``allowlist.py``): literals, local
values, torch / numpy / math functions and constants listed there, a few builtins (``range``,
``len``, ``int``...), and listed methods and attributes of values (``x.reshape(3, 1, 1)``,
``data.shape[0]``). Anything else is refused, wherever it appears: called, passed as an argument
(``sorted(xs, key=torch.os.system)``), imported (``from torch import os``) or reached through an
attribute (``torch.builtins.exec``, ``np.ndarray.tofile``).

``plain_statement`` answers ``None`` for plain, else why not, in a few words ("calls `open`").
"""

from __future__ import annotations

import ast
from typing import Optional

from torchwise.analysis.scopes import BindingKind
from torchwise.bench.allowlist import (
    ATTRIBUTES, BUILTINS, METHODS, allowed_function, allowed_import, allowed_module, allowed_value,
)

SAFE_BUILTINS = BUILTINS
__all__ = ["SAFE_BUILTINS", "allowed_function", "allowed_import", "plain_expression", "plain_statement"]

_REFUSED_EXPRESSIONS = {"Lambda": "a lambda", "NamedExpr": "an assignment expression", "JoinedStr": "an f-string",
                        "Await": "`await`", "Yield": "`yield`", "YieldFrom": "`yield from`"}
_COMPOUND = (ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.BoolOp,
             ast.Compare, ast.IfExp, ast.Starred)


class _Checker:
    def __init__(self, scope):
        self.scope = scope  # analysis.scopes.Scope: resolves `np.zeros` to numpy.zeros

    # -- statements
    def statement(self, stmt) -> Optional[str]:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                why = self.target(target)
                if why:
                    return why
            return self.expr(stmt.value, set())
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                return "an annotation without a value"
            return self.target(stmt.target) or self.expr(stmt.value, set())
        if isinstance(stmt, ast.AugAssign):
            return self.target(stmt.target) or self.expr(stmt.value, set())
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return self.imports(stmt)
        if isinstance(stmt, ast.Expr):
            if not isinstance(stmt.value, ast.Call):
                return None if isinstance(stmt.value, ast.Constant) else "an expression statement"
            return self.expr(stmt.value, set())
        if isinstance(stmt, ast.For):
            if stmt.orelse:
                return "a for-else loop"
            why = self.target(stmt.target) or self.expr(stmt.iter, set())
            if why:
                return why
            for inner in stmt.body:
                why = self.statement(inner)
                if why:
                    return why
            return None
        if isinstance(stmt, ast.Pass):
            return None
        if isinstance(stmt, ast.FunctionDef):
            return self.function(stmt)
        return f"a `{type(stmt).__name__.lower()}` statement"

    def function(self, stmt: ast.FunctionDef) -> Optional[str]:
        """A function of the file that a loop calls (``torch.stack([f(x) for x in xs])``): plain when its body is
        assignments to names and a ``return`` of plain expressions over its parameters (defining it runs none of
        it; calling it runs only what the allowlist allows)."""
        if stmt.decorator_list:
            return f"`{stmt.name}` is decorated"
        if getattr(stmt, "type_params", None):
            return f"`{stmt.name}` has type parameters"
        args = stmt.args
        for annotation in (*(a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                                                    args.kwarg) if a), stmt.returns):
            if annotation is not None and not _plain_type(annotation):
                return f"`{stmt.name}` has an annotation that is not a plain type (`{_short(annotation)}`)"
        for default in (*args.defaults, *(d for d in args.kw_defaults if d is not None)):
            why = self.expr(default, set())
            if why:
                return why
        local = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
        for index, inner in enumerate(stmt.body):
            if isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Constant):
                continue  # a docstring
            if isinstance(inner, ast.Assign) and all(isinstance(t, ast.Name) for t in inner.targets):
                why = self.expr(inner.value, local)
                local |= {t.id for t in inner.targets}
            elif isinstance(inner, ast.Return) and index == len(stmt.body) - 1:
                why = self.expr(inner.value, local)
            else:
                why = f"a `{type(inner).__name__.lower()}` statement"
            if why:
                return f"`{stmt.name}` has {why}" if why.startswith("a") else f"`{stmt.name}` {why}"
        return None

    def imports(self, stmt) -> Optional[str]:
        if isinstance(stmt, ast.ImportFrom) and (stmt.level or not stmt.module):
            return "a relative import"
        for alias in stmt.names:
            name = alias.name if isinstance(stmt, ast.Import) else f"{stmt.module}.{alias.name}"
            if alias.name == "*" or not allowed_import(name):
                return f"imports `{name}`, which is not on the benchmark's list of pure torch / numpy / math names"
        return None

    def target(self, target) -> Optional[str]:
        if isinstance(target, ast.Name):
            return None
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                why = self.target(elt)
                if why:
                    return why
            return None
        if isinstance(target, ast.Starred):
            return self.target(target.value)
        if isinstance(target, ast.Subscript):
            return self.expr(target.value, set()) or self.expr(target.slice, set())
        return "an assignment to an attribute"

    # -- expressions
    def expr(self, node, local: set) -> Optional[str]:
        if node is None or isinstance(node, ast.Constant):
            return None
        if isinstance(node, ast.Name):
            return self.name(node, local)
        if isinstance(node, ast.Attribute):
            return self.attribute(node, local)
        if isinstance(node, ast.Call):
            return self.call(node, local)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node, local)
        if type(node).__name__ in _REFUSED_EXPRESSIONS:
            return _REFUSED_EXPRESSIONS[type(node).__name__]
        if isinstance(node, _COMPOUND):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    why = self.expr(child, local)
                    if why:
                        return why
            return None
        if isinstance(node, (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)):
            return None
        return f"`{type(node).__name__}`"

    def name(self, node: ast.Name, local: set) -> Optional[str]:
        """A name read as a value: a local value, an allowed import, or an allowed builtin."""
        if node.id in local:
            return None
        owner = self.scope.owner_of(node.id)
        if owner is None:
            return None if node.id in BUILTINS else f"uses `{node.id}`"
        qualname = self.scope.import_of(node.id)
        if qualname is None:
            # Bound by the file. Imported too (another binding), it may be the module: refuse that mix.
            if any(b.kind is BindingKind.IMPORT for b in owner.bindings.get(node.id, ())):
                return f"uses `{node.id}`, which is imported and assigned"
            return None
        if allowed_value(qualname):
            return None
        if allowed_module(qualname):
            return f"uses the module `{qualname}` as a value"
        return f"uses `{qualname}`, which is not on the benchmark's list of pure torch / numpy / math names"

    def attribute(self, node: ast.Attribute, local: set) -> Optional[str]:
        if node.attr.startswith("_"):
            return f"reads `{node.attr}`"
        qualname = self._qualified(node, local)
        if qualname is not None:
            if allowed_value(qualname):
                return None
            return f"uses `{qualname}`, which is not on the benchmark's list of pure torch / numpy / math names"
        if node.attr not in ATTRIBUTES and node.attr not in METHODS:
            return f"reads `.{node.attr}`"
        return self.expr(node.value, local)

    def _qualified(self, node: ast.expr, local: set) -> Optional[str]:
        """The qualified name an import-rooted ``a.b.c`` stands for (None for an attribute of a value)."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in local:
            return None
        return self.scope.qualname(node)

    def comprehension(self, node, local: set) -> Optional[str]:
        inner = set(local)
        for gen in node.generators:
            if gen.is_async:
                return "an async comprehension"
            why = self.target(gen.target) or self.expr(gen.iter, inner)
            if why:
                return why
            inner |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
            for cond in gen.ifs:
                why = self.expr(cond, inner)
                if why:
                    return why
        parts = (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)
        for part in parts:
            why = self.expr(part, inner)
            if why:
                return why
        return None

    def call(self, node: ast.Call, local: set) -> Optional[str]:
        func = node.func
        why = self.callee(func, local)
        if why:
            return why
        for arg in node.args:
            why = self.expr(arg, local)
            if why:
                return why
        for kw in node.keywords:
            why = self.expr(kw.value, local)
            if why:
                return why
        return None

    def callee(self, func, local: set) -> Optional[str]:
        if isinstance(func, ast.Name):
            if func.id in local:
                return f"calls `{func.id}`"
            owner = self.scope.owner_of(func.id)
            if owner is None:
                return None if func.id in BUILTINS else f"calls `{func.id}`"
            qualname = self.scope.import_of(func.id)
            if qualname is None:
                return f"calls `{func.id}`"  # a function of the file, or a value of unknown kind
            return None if allowed_function(qualname) else f"calls `{qualname}`"
        if isinstance(func, ast.Attribute):
            if func.attr.startswith("_"):
                return f"calls `.{func.attr}()`"
            qualname = self._qualified(func, local)
            if qualname is not None:
                return None if allowed_function(qualname) else f"calls `{qualname}`"
            root = func.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id not in local:
                imported = self.scope.import_of(root.id)
                if imported is not None and not allowed_module(imported.split(".")[0]):
                    return f"uses the module `{imported}`"
            if func.attr not in METHODS:
                return f"calls `.{func.attr}()`"
            return self.expr(func.value, local)
        return "calls the result of an expression"


# What a type annotation may be made of: names, attributes, subscripts, literals and `X | Y` (``torch.Tensor``,
# ``Float[Tensor, "n d"]``, ``Optional[int]``). The setup drops annotations before it runs (``prepare``): this is
# the second guard, in case one ever stays.
_TYPE_PARTS = (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.Constant, ast.Load, ast.BitOr)


def _plain_type(annotation: ast.expr) -> bool:
    return all(isinstance(node, _TYPE_PARTS) or (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr))
               for node in ast.walk(annotation))


def _short(node: ast.expr) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."


def plain_statement(stmt: ast.stmt, scope) -> Optional[str]:
    """``None`` when ``stmt`` is plain setup, else the reason it is not (a few words)."""
    return _Checker(scope).statement(stmt)


def plain_expression(expr: ast.expr, scope) -> Optional[str]:
    return _Checker(scope).expr(expr, set())
