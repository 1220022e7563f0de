"""Is a statement of the user's file *plain setup*, safe to run without asking?

Plain: assignments (and ``for`` loops over plain iterables, ``lst.append(...)``-style calls)
whose expressions use only literals, names, operators, comprehensions, and calls of
torch / numpy / math functions, safe builtins (``range``, ``len``, ``int``, ...) and methods of
values (``x.reshape(3, 1, 1)``, ``data.shape[0]``). Not plain: any other call (a function of the
file, ``open``, ``print``), file and network functions even of torch and numpy (``torch.load``,
``np.fromfile``, ``torch.hub``...), dunder attributes, lambdas, imports of any other module.

``plain_statement`` answers ``None`` for plain, else why not, in a few words ("calls `open`").
"""

from __future__ import annotations

import ast
from typing import Optional

ALLOWED_ROOTS = ("torch", "numpy", "math")
SAFE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "complex", "dict", "divmod", "enumerate", "float", "frozenset", "int", "len",
    "list", "max", "min", "pow", "range", "reversed", "round", "set", "slice", "sorted", "sum", "tuple", "zip",
})
# Qualified-name prefixes never run, even under torch / numpy: files, network, processes, compilers,
# global settings that outlive the run.
_DENIED_PREFIXES = (
    "torch.load", "torch.save", "torch.from_file", "torch.hub", "torch.jit", "torch.ops", "torch.classes",
    "torch.utils", "torch.compile", "torch.compiler", "torch.distributed", "torch.multiprocessing",
    "torch.backends", "torch.library", "torch.package", "torch.onnx", "torch.export", "torch.profiler",
    "torch.autograd.profiler", "torch.serialization", "torch.cuda", "torch.mps", "torch.xpu",
    "torch.set_default_device",
    "torch.set_num_threads", "torch.set_num_interop_threads", "torch.set_printoptions", "torch.fx", "torch.testing",
    "torch.overrides", "torch.monitor", "torch.futures", "torch.random.fork_rng",
    "numpy.load", "numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.savetxt", "numpy.loadtxt",
    "numpy.genfromtxt", "numpy.fromfile", "numpy.memmap", "numpy.fromregex", "numpy.DataSource", "numpy.lib",
    "numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing", "numpy.show_config", "numpy.get_include",
    "numpy.show_runtime", "numpy.set_printoptions",
)
_ALLOWED_EXCEPTIONS = frozenset({"torch.cuda.is_available", "torch.cuda.device_count",
                                 "torch.backends.mps.is_available"})
# Method names never called, whatever the receiver: files, hooks, callbacks.
_DENIED_METHODS = frozenset({
    "tofile", "save", "load", "dump", "dumps", "write", "read", "open", "register_hook", "register_forward_hook",
    "register_forward_pre_hook", "register_full_backward_hook", "register_backward_hook", "apply_", "map_",
    "map2_", "apply", "share_memory_", "from_file", "format_map",
})


def allowed_function(qualname: str) -> bool:
    parts = qualname.split(".")
    if parts[0] not in ALLOWED_ROOTS or any(p.startswith("_") for p in parts):
        return False
    if qualname in _ALLOWED_EXCEPTIONS:
        return True
    return not any(qualname == p or qualname.startswith(p + ".") for p in _DENIED_PREFIXES)


def allowed_import(qualname: str) -> bool:
    """``import torch.nn.functional as F``, ``from torch import nn``, ``import numpy as np``, ``import math``."""
    parts = qualname.split(".")
    return parts[0] in ALLOWED_ROOTS and not any(p.startswith("_") for p in parts) and allowed_function(qualname)


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
            if isinstance(stmt, ast.ImportFrom) and (stmt.level or not stmt.module):
                return "a relative import"
            for alias in stmt.names:
                name = alias.name if isinstance(stmt, ast.Import) else f"{stmt.module}.{alias.name}"
                if alias.name == "*" or not allowed_import(name):
                    return f"imports `{name}`"
            return None
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
        return f"a `{type(stmt).__name__.lower()}` statement"

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
        if node is None or isinstance(node, (ast.Constant, ast.Name)):
            return None
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                return f"reads `{node.attr}`"
            return self.expr(node.value, local)
        if isinstance(node, ast.Call):
            return self.call(node, local)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
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
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.JoinedStr)):
            return {"Lambda": "a lambda", "NamedExpr": "an assignment expression", "JoinedStr": "an f-string"}.get(
                type(node).__name__, f"`{type(node).__name__.lower()}`")
        if isinstance(node, (ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BinOp,
                             ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Starred)):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    why = self.expr(child, local)
                    if why:
                        return why
            return None
        if isinstance(node, (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)):
            return None
        return f"`{type(node).__name__}`"

    def call(self, node: ast.Call, local: set) -> Optional[str]:
        func = node.func
        qualname = self.scope.qualname(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
        if qualname is not None:
            if not allowed_function(qualname):
                return f"calls `{qualname}`"
        elif isinstance(func, ast.Name):
            if func.id in local:
                return f"calls `{func.id}`"
            if self.scope.owner_of(func.id) is not None or func.id not in SAFE_BUILTINS:
                return f"calls `{func.id}`"
        elif isinstance(func, ast.Attribute):
            if func.attr.startswith("_") or func.attr in _DENIED_METHODS:
                return f"calls `.{func.attr}()`"
            why = self.expr(func.value, local)
            if why:
                return why
            root = func.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and self.scope.import_of(root.id) is not None \
                    and self.scope.import_of(root.id).split(".")[0] not in ALLOWED_ROOTS:
                return f"uses the module `{self.scope.import_of(root.id)}`"
        else:
            return "calls the result of an expression"
        for arg in node.args:
            why = self.expr(arg, local)
            if why:
                return why
        for kw in node.keywords:
            why = self.expr(kw.value, local)
            if why:
                return why
        return None


def plain_statement(stmt: ast.stmt, scope) -> Optional[str]:
    """``None`` when ``stmt`` is plain setup, else the reason it is not (a few words)."""
    return _Checker(scope).statement(stmt)


def plain_expression(expr: ast.expr, scope) -> Optional[str]:
    return _Checker(scope).expr(expr, set())
