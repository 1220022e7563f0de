"""Bounds of the Python numbers a comprehension computes from its ranges, so that int64 / float64 tensors compute them.

``torch.tensor([i // k for i in range(n)])`` is ``torch.arange(n) // k``, and ``[p / 10000 ** (2 * (i // 2) / d) for
...]`` the same arithmetic on ``float64`` aranges: Python ints and floats are int64 and float64 values as long as no int
leaves int64 (Python's grow, int64 wraps), no divisor is zero (Python raises ``ZeroDivisionError``, a float tensor gives
inf), and no ``**`` overflows (Python raises ``OverflowError``) or turns an int into a float (``2 ** -1``). This reads an
interval for every subexpression: loop indices from their ranges, invariants from their known values, and refuses the
one op it cannot bound, with the reason.

A range of unknown length is at most ``_LONGEST`` long: the comprehension makes a list of that many Python objects.
"""

from __future__ import annotations

import ast
import math
from typing import Optional

from torchwise.analysis.values import ScalarValue, SymbolicValue
from torchwise.vectorize.expr import Refuse

_LONGEST = 2 ** 40  # a list of more Python numbers than this does not fit in memory
_INT64 = 2 ** 62  # every intermediate int stays well inside int64
_FLOAT = 1e300  # ... and every float well inside float64


class _Interval:
    def __init__(self, lo, hi, kind: str):
        self.lo, self.hi, self.kind = lo, hi, kind  # kind: "int" | "float"

    def nonzero(self) -> bool:
        margin = 0 if self.kind == "int" else 1e-300
        return self.lo > margin or self.hi < -margin


def check(node: ast.expr, batcher) -> None:
    """Raises ``Refuse`` unless every op of ``node`` is exact on int64 / float64 tensors (see the module docs)."""
    _Bounds(batcher).interval(node)


class _Bounds:
    def __init__(self, batcher):
        self.batcher = batcher

    def interval(self, node: ast.expr) -> _Interval:
        found = self._interval(node)
        if found.kind == "int" and max(abs(found.lo), abs(found.hi)) > _INT64:
            raise Refuse("a Python int that may not fit in int64")
        if found.kind == "float" and not (math.isfinite(found.lo) and math.isfinite(found.hi)
                                          and max(abs(found.lo), abs(found.hi)) < _FLOAT):
            raise Refuse("a Python float that may overflow")
        return found

    def _interval(self, node: ast.expr) -> _Interval:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return _Interval(node.value, node.value, "int" if type(node.value) is int else "float")
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self.interval(node.operand)
            return inner if isinstance(node.op, ast.UAdd) else _Interval(-inner.hi, -inner.lo, inner.kind)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "float") \
                and len(node.args) == 1 and not node.keywords and self.batcher.scope.owner_of(node.func.id) is None:
            inner = self.interval(node.args[0])
            if inner.kind == "int" and node.func.id == "float":
                return _Interval(float(inner.lo), float(inner.hi), "float")
            if inner.kind != node.func.id:
                raise Refuse(f"`{node.func.id}()` of a Python number of another kind")
            return inner
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        raise Refuse("an expression of Python numbers whose bounds are unknown")

    def _name(self, node: ast.Name) -> _Interval:
        batcher = self.batcher
        k = batcher.level_of.get(node.id)
        if k is not None:
            level = batcher.levels[k]
            if level.index != node.id or type(level.start) is not int or type(level.step) is not int:
                raise Refuse("a loop variable whose values are unknown")
            count = level.count if type(level.count) is int else _LONGEST
            if count == 0:
                return _Interval(level.start, level.start, "int")
            last = level.start + level.step * (count - 1)
            return _Interval(min(level.start, last), max(level.start, last), "int")
        value = batcher.ctx.value(node)
        if isinstance(value, ScalarValue) and value.kind in ("int", "float") and type(value.value) in (int, float):
            return _Interval(value.value, value.value, value.kind)
        if isinstance(value, SymbolicValue):
            return _Interval(0, _LONGEST, "int")  # a size
        raise Refuse(f"`{node.id}`'s value is unknown")

    def _binop(self, node: ast.BinOp) -> _Interval:
        a, b = self.interval(node.left), self.interval(node.right)
        kind = "float" if "float" in (a.kind, b.kind) or isinstance(node.op, ast.Div) else "int"
        op = node.op
        if isinstance(op, (ast.Add, ast.Sub, ast.Mult)):
            fn = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y}[type(op)]
            return _corners(fn, a, b, kind)
        if isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)):
            if not b.nonzero():
                raise Refuse("a Python division by a number that may be zero (it raises; a tensor would not)")
            if isinstance(op, ast.Div):
                return _corners(lambda x, y: x / y, a, b, kind)
            if isinstance(op, ast.FloorDiv):
                return _corners(lambda x, y: x // y, a, b, kind)
            if b.lo > 0:
                return _Interval(0, b.hi, kind)
            return _Interval(b.lo, 0, kind)
        if isinstance(op, ast.Pow):
            return self._power(a, b, kind)
        raise Refuse("an operator on Python numbers not understood")

    @staticmethod
    def _power(a: _Interval, b: _Interval, kind: str) -> _Interval:
        if kind == "int":
            if b.lo < 0:
                raise Refuse("an int power whose exponent may be negative (Python gives a float)")
            if a.lo < 0:
                raise Refuse("a power of a base that may be negative")
            if a.hi >= 2 and b.hi * math.log2(a.hi) > 62:
                raise Refuse("a Python int power that may not fit in int64")
            return _corners(lambda x, y: x ** y, a, b, kind)
        if a.lo < 0 or a.lo == 0 and b.lo <= 0:
            raise Refuse("a float power of a base that may be negative or zero (Python gives complex or raises)")
        if a.hi > 2 ** 1000 or max(abs(b.lo), abs(b.hi)) > 2 ** 20:
            raise Refuse("a Python float power that may overflow")
        return _corners(lambda x, y: _capped(lambda: float(x) ** y), a, b, kind)


def _capped(compute):
    try:
        value = compute()
    except OverflowError:
        return math.inf
    return value if not isinstance(value, int) or value.bit_length() < 200 else math.inf


def _corners(fn, a: _Interval, b: _Interval, kind: str) -> _Interval:
    """Sound for + - * of intervals, and for / // and ** where the divisor or base keeps one sign (monotone on each
    side of the corners)."""
    values = [fn(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    return _Interval(min(values), max(values), kind)
