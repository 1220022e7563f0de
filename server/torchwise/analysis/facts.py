"""What an expression is, when that is certain: tensors and their shapes, int constants.

This is the first, small layer of the facts engine: factories with literal sizes,
``torch.tensor`` of literals, shape-preserving and reducing methods, and names
bound exactly once. Everything else is unknown (``None``), and rules stay silent
on unknowns.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property

from torchwise.analysis.scopes import ModuleIndex, Scope

# Factories whose positional arguments (or a single tuple/list) are the size.
_SIZE_FACTORIES = frozenset(f"torch.{n}" for n in ("zeros", "ones", "empty", "rand", "randn"))
# Methods that keep the shape of their receiver.
_SAME_SHAPE_METHODS = frozenset((
    "float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char",
    "clone", "detach", "to", "cpu", "cuda", "contiguous", "abs", "neg", "exp", "log",
    "sqrt", "sigmoid", "tanh", "relu", "requires_grad_",
))
# Element-wise methods whose arguments, when all are numeric literals, keep the shape.
_SCALAR_ARG_METHODS = frozenset(("pow", "clamp", "add", "sub", "mul", "div", "clamp_min", "clamp_max"))
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)
# Methods that, called with no arguments, reduce to a 0-d tensor.
_FULL_REDUCTIONS = frozenset(("sum", "mean", "prod", "max", "min", "norm", "std", "var", "amax", "amin"))
# In-place methods that change a tensor's shape: a name they touch has no known shape.
_SHAPE_MUTATORS = frozenset((
    "resize_", "resize_as_", "unsqueeze_", "squeeze_", "t_", "transpose_", "set_",
    "as_strided_", "swapdims_", "swapaxes_",
))
_MAX_DEPTH = 32


@dataclass(frozen=True)
class TensorFact:
    shape: tuple[int, ...] | None  # None: rank unknown

    @property
    def numel(self) -> int | None:
        if self.shape is None:
            return None
        total = 1
        for dim in self.shape:
            total *= dim
        return total


class Facts:
    def __init__(self, index: ModuleIndex):
        self.index = index

    @cached_property
    def _shape_mutated(self) -> set[tuple[int, str]]:
        mutated = set()
        for node, scope in self.index.nodes:
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _SHAPE_MUTATORS and isinstance(node.func.value, ast.Name)):
                owner = scope.owner_of(node.func.value.id)
                if owner is not None:
                    mutated.add((id(owner), node.func.value.id))
        return mutated

    # -- ints -----------------------------------------------------------------------
    def int_value(self, expr: ast.expr, scope: Scope, depth: int = 0) -> int | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return expr.value
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            inner = self.int_value(expr.operand, scope, depth + 1)
            return -inner if inner is not None else None
        if isinstance(expr, ast.Name):
            bound = scope.single_value(expr.id)
            if bound is not None:
                return self.int_value(bound[0], bound[1], depth + 1)
        return None

    def is_int(self, expr: ast.expr, scope: Scope) -> bool:
        """True when ``expr`` is certainly a Python int (value may be unknown)."""
        if self.int_value(expr, scope) is not None:
            return True
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "len":
            return scope.owner_of("len") is None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
            return self.is_int(expr.left, scope) and self.is_int(expr.right, scope)
        return False

    # -- tensors ----------------------------------------------------------------------
    def tensor(self, expr: ast.expr, scope: Scope, depth: int = 0) -> TensorFact | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            if (id(scope.owner_of(expr.id)), expr.id) in self._shape_mutated:
                return None
            bound = scope.single_value(expr.id)
            return self.tensor(bound[0], bound[1], depth + 1) if bound else None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, _ARITHMETIC):
            return self._arithmetic(expr, scope, depth)
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        qualname = scope.qualname(func)
        if qualname in _SIZE_FACTORIES:
            return TensorFact(self._size(expr.args, scope)) if not _has_size_keyword(expr) else None
        if qualname == "torch.tensor" and expr.args:
            shape = _literal_shape(expr.args[0])
            return TensorFact(shape) if shape is not None else None
        if qualname is None and isinstance(func, ast.Attribute):
            receiver = self.tensor(func.value, scope, depth + 1)
            if receiver is None:
                return None
            if func.attr in _SAME_SHAPE_METHODS:
                return receiver
            if func.attr in _SCALAR_ARG_METHODS and not expr.keywords and all(map(_is_number, expr.args)):
                return receiver
            if func.attr in _FULL_REDUCTIONS and not expr.args and not expr.keywords:
                return TensorFact(())
        return None

    def _arithmetic(self, expr: ast.BinOp, scope: Scope, depth: int) -> TensorFact | None:
        """tensor (op) number keeps the shape; tensor (op) tensor broadcasts (shape left unknown here)."""
        left = None if _is_number(expr.left) else self.tensor(expr.left, scope, depth + 1)
        right = None if _is_number(expr.right) else self.tensor(expr.right, scope, depth + 1)
        if left is not None and right is not None:
            return left if left.shape == right.shape else TensorFact(None)
        if left is not None and _is_number(expr.right):
            return left
        if right is not None and _is_number(expr.left):
            return right
        return None

    def _size(self, args: list[ast.expr], scope: Scope) -> tuple[int, ...] | None:
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = args[0].elts
        dims = [self.int_value(arg, scope) for arg in args]
        if any(d is None or d < 0 for d in dims):
            return None
        return tuple(dims)


def _is_number(expr: ast.expr) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)


def _has_size_keyword(call: ast.Call) -> bool:
    return any(kw.arg in ("size", None) for kw in call.keywords) or any(
        isinstance(a, ast.Starred) for a in call.args)


def _literal_shape(expr: ast.expr) -> tuple[int, ...] | None:
    """Shape of ``torch.tensor`` data made of literal numbers: ``[[1, 2], [3, 4]]`` -> (2, 2)."""
    if isinstance(expr, ast.Constant) and type(expr.value) in (int, float, bool, complex):
        return ()
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _literal_shape(expr.operand)
    if isinstance(expr, (ast.List, ast.Tuple)):
        if not expr.elts:
            return (0,)
        inner = {_literal_shape(e) for e in expr.elts}
        if len(inner) != 1 or None in inner:
            return None
        return (len(expr.elts), *inner.pop())
    return None
