"""Translating a per-element expression into one whole-tensor expression.

Inside a loop ``x[i]`` (or the element ``row`` of ``for row in x``) is one slice of a *batched*
tensor; everything that does not depend on the loop is *invariant*. The translation replaces
each batched slice by the whole tensor (``x[i]`` -> ``x``) and each op by the op that does the
same thing to every slice at once (``torch.dot(x[i], w)`` -> ``x @ w``, ``row.sum()`` ->
``x.sum(dim=1)``). Every node is checked twice, once as PyTorch would run it per element and
once as it runs vectorized: the result dtypes must agree (a 0-d slice promotes differently from
a whole tensor: ``x[i] + zero_dim`` is not ``x + zero_dim`` when their dtypes differ), and the
shapes must line up as ``(N, *element_shape)``. Anything else raises :class:`Refuse`.

Only a whitelist of pure operations is understood; an unknown call is never moved out of a loop.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Callable, Optional

from torchwise.analysis import dims, layout
from torchwise.analysis.dtypes import DType, DTypeError, Operand, is_complex, is_floating, result_type
from torchwise.analysis.values import ScalarValue, TensorValue

# Python's operator precedence, loosest first; ATOM needs no parentheses anywhere.
IFEXP, OR, AND, NOT, COMPARE, BOR, BXOR, BAND, SHIFT, ARITH, TERM, UNARY, POWER, ATOM = range(3, 17)

_BINOPS = {ast.Add: ("+", ARITH), ast.Sub: ("-", ARITH), ast.Mult: ("*", TERM), ast.Div: ("/", TERM),
           ast.FloorDiv: ("//", TERM), ast.Mod: ("%", TERM), ast.Pow: ("**", POWER), ast.MatMult: ("@", TERM),
           ast.BitAnd: ("&", BAND), ast.BitOr: ("|", BOR), ast.BitXor: ("^", BXOR)}
_COMPARES = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}

# Element-wise ops by what they do to the dtype.
_UNARY_TO_FLOAT = frozenset({"exp", "log", "log2", "log10", "sin", "cos", "tan", "tanh", "sigmoid", "sqrt", "rsqrt",
                             "log1p", "expm1", "erf", "atan"})
_UNARY_SAME = frozenset({"abs", "neg", "relu", "floor", "ceil", "trunc", "round"})
_CASTS = {"float": DType.float32, "double": DType.float64, "half": DType.float16, "bfloat16": DType.bfloat16,
          "long": DType.int64, "int": DType.int32, "bool": DType.bool}
_BINARY_FUNCS = {"add": ("+", ARITH), "sub": ("-", ARITH), "mul": ("*", TERM), "div": ("/", TERM)}
_PROMOTING_FUNCS = frozenset({"maximum", "minimum"})
_REDUCTIONS = frozenset({"sum", "mean", "norm", "amax", "amin", "max", "min", "prod"})
# Pure calls that may appear in the loop-invariant part (evaluated once instead of N times).
_INVARIANT_METHODS = (_UNARY_TO_FLOAT | _UNARY_SAME | set(_CASTS) | _REDUCTIONS | {
    "t", "reshape", "view", "unsqueeze", "squeeze", "transpose", "permute", "contiguous", "clone", "detach", "item",
    "flatten", "dot", "matmul", "size", "numel", "dim", "maximum", "minimum", "to"})
_INVARIANT_TORCH = frozenset({f"torch.{name}" for name in (
    _UNARY_TO_FLOAT | _UNARY_SAME | _REDUCTIONS | {"dot", "matmul", "maximum", "minimum", "tensor", "zeros", "ones",
                                                   "full", "arange", "eye", "linspace", "where", "add", "mul",
                                                   "sub", "div", "stack", "cat"})})
_PY_BUILTINS = frozenset({"abs", "float", "int", "len", "min", "max", "round"})


class Refuse(Exception):
    """The expression cannot be shown to vectorize to the same result."""


@dataclass(frozen=True)
class Vec:
    """One translated expression: its text, and what it is per element and vectorized."""

    text: str
    prec: int
    batched: bool
    dtype: Optional[DType] = None  # tensors
    shape: Optional[tuple] = None  # tensors: the *per-element* shape when batched
    pytype: Optional[str] = None  # Python scalars: "int" | "float" | "bool"
    device: Optional[str] = None
    base: Optional[str] = None  # a bare batched slice (`x[i]`, `row`): the whole tensor's text
    fresh: bool = True  # vectorized, it is new memory (not the batched tensor itself)
    exact_cast: bool = True  # casting it to another dtype is the same as casting each element's value
    row_major: bool = True  # vectorized, element-wise ops and clones keep its dims in order (see `row_ordered`)

    @property
    def is_tensor(self) -> bool:
        return self.dtype is not None

    @property
    def rank(self) -> int:
        return len(self.shape or ())

    def atom(self) -> str:
        return wrap(self.text, self.prec, ATOM)

    def per_element_operand(self) -> Operand:
        if not self.is_tensor:
            return Operand.scalar(self.pytype)
        return Operand.tensor(self.dtype) if self.shape else Operand.zero_dim(self.dtype)

    def vectorized_operand(self) -> Operand:
        if not self.is_tensor:
            return Operand.scalar(self.pytype)
        return Operand.tensor(self.dtype) if (self.shape or self.batched) else Operand.zero_dim(self.dtype)


def wrap(text: str, prec: int, needed: int) -> str:
    return f"({text})" if prec < needed else text


@dataclass(frozen=True)
class Batch:
    """A tensor the loop walks along its first dimension: its text (vectorized) and one slice's facts."""

    text: str
    prec: int
    dtype: DType
    shape: tuple  # one slice
    device: Optional[str]
    fresh: bool = False  # the text makes new memory (`torch.stack(images)`)
    grad: bool = True  # may require grad
    row_major: bool = True  # the whole tensor's dims are in row-major order (see `row_ordered`)


class Space:
    """What the loop variables mean: an index into batched tensors, and the elements themselves
    (several with ``zip``, an index and an element with ``enumerate``)."""

    def __init__(self, count, index: Optional[str] = None, element: Optional[str] = None,
                 element_batch: Optional[Batch] = None):
        self.count = count  # N: int or dims.Sym
        self.index = index
        self.elements: dict = {element: element_batch} if element is not None else {}

    @property
    def element(self) -> Optional[str]:
        return next(iter(self.elements), None)

    @property
    def element_batch(self) -> Optional[Batch]:
        return next(iter(self.elements.values()), None)

    @property
    def names(self) -> set:
        return ({self.index} - {None}) | set(self.elements)


class Translator:
    """Translates expressions of one loop body. ``select`` wraps every batched tensor's text (a filter's mask)."""

    def __init__(self, ctx, scope, space: Space, default_float: Optional[DType],
                 select: Optional[Callable[[str, int], tuple[str, int]]] = None):
        self.ctx = ctx
        self.scope = scope
        self.space = space
        self.default_float = default_float
        self.select = select
        self.devices: set = set()
        self.grad = False  # some tensor involved may require grad

    # -- entry ----------------------------------------------------------------------------
    def __call__(self, node: ast.expr) -> Vec:
        if not self._mentions_loop(node):
            self.check_pure(node)
            result = self.invariant(node)
        else:
            method = getattr(self, f"_{type(node).__name__}", None)
            if method is None:
                raise Refuse(f"`{type(node).__name__}` is not understood")
            result = method(node)
        if result.is_tensor:
            if result.device is None:
                raise Refuse("device unknown")
            self.devices.add(result.device)
            if len(self.devices) > 1:
                raise Refuse("tensors on different devices")
        return result

    def source(self, node: ast.AST) -> str:
        return self.ctx.source.text_of(self.ctx.source.span(node))

    def check_pure(self, node: ast.expr) -> None:
        """Every call in a loop-invariant expression is a known pure op (it will run once, not N times)."""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.ListComp,
                                ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                raise Refuse("an expression with its own effects or scope")
            if not isinstance(sub, ast.Call):
                continue
            qualname = self.scope.qualname(sub.func)
            if qualname is not None:
                if qualname not in _INVARIANT_TORCH:
                    raise Refuse(f"`{qualname}` is not a known pure op")
            elif isinstance(sub.func, ast.Attribute):
                if sub.func.attr not in _INVARIANT_METHODS:
                    raise Refuse(f"`.{sub.func.attr}()` is not a known pure method")
            elif not (isinstance(sub.func, ast.Name) and sub.func.id in _PY_BUILTINS
                      and self.scope.owner_of(sub.func.id) is None):
                raise Refuse("a call that is not a known pure op")

    def invariant(self, node: ast.expr) -> Vec:
        """A loop-invariant expression: its own text, its facts from the analysis."""
        value = self.ctx.value(node)
        text = self.source(node)
        prec = ATOM if "\n" in text else _precedence(node)
        if "\n" in text:
            text = f"({text})"
        if isinstance(value, TensorValue):
            if value.dtype is None or value.shape is None or value.device is None or is_complex(value.dtype):
                raise Refuse(f"`{text}`: dtype, shape or device unknown")
            self.grad |= value.requires_grad is not False
            return Vec(text, prec, False, dtype=value.dtype, shape=value.shape, device=value.device,
                       row_major=row_ordered(value.shape, value.strides))
        if isinstance(value, ScalarValue) and value.kind in ("int", "float", "bool"):
            return Vec(text, prec, False, pytype=value.kind)
        raise Refuse(f"`{text}` is not a known tensor or number")

    def _batch_vec(self, batch: Batch) -> Vec:
        text, prec, fresh, row_major = batch.text, batch.prec, batch.fresh, batch.row_major
        self.grad |= batch.grad
        if self.select is not None:
            text, prec = self.select(text, prec)
            fresh = True  # boolean-mask indexing copies
            # into a new tensor, the selected rows in order: only the slices' own dims could be out of order
            row_major = row_major or len(batch.shape) <= 1
        return Vec(text, prec, True, dtype=batch.dtype, shape=batch.shape, device=batch.device, base=text,
                   fresh=fresh, row_major=row_major)

    # -- leaves -----------------------------------------------------------------------------
    def _Name(self, node: ast.Name) -> Vec:
        if node.id == self.space.index:
            raise Refuse("the loop index is used as a value")
        if node.id in self.space.elements:
            return self._batch_vec(self.space.elements[node.id])
        return self.invariant(node)

    def _Constant(self, node: ast.Constant) -> Vec:
        value = node.value
        if isinstance(value, bool):
            return Vec(repr(value), ATOM, False, pytype="bool")
        if isinstance(value, int):
            return Vec(repr(value), ATOM, False, pytype="int")
        if isinstance(value, float):
            return Vec(self.source(node), ATOM, False, pytype="float")
        raise Refuse("a constant that is not a number")

    def _Attribute(self, node: ast.Attribute) -> Vec:
        if self._mentions_loop(node):
            raise Refuse("an attribute of a batched value")
        if not isinstance(node.value, (ast.Name, ast.Attribute)):
            raise Refuse("an attribute of a computed value")
        return self.invariant(node)

    def _Subscript(self, node: ast.Subscript) -> Vec:
        index = self.space.index
        if index is not None and isinstance(node.slice, ast.Name) and node.slice.id == index:
            if not isinstance(node.value, (ast.Name, ast.Attribute)) or self._mentions_loop(node.value):
                raise Refuse("indexing something other than a named tensor")
            whole = self.invariant(node.value)
            if not whole.is_tensor or not whole.shape:
                raise Refuse("indexing a non-tensor")
            if dims.dim_eq(whole.shape[0], self.space.count) is not True:
                raise Refuse(f"`{whole.text}` has {whole.shape[0]} rows, the loop runs {self.space.count} times")
            value = self.ctx.value(node.value)
            return self._batch_vec(Batch(whole.text, whole.prec, whole.dtype, tuple(whole.shape[1:]), whole.device,
                                         grad=value.requires_grad is not False, row_major=whole.row_major))
        if self._mentions_loop(node):
            raise Refuse("the loop variable is used in an index other than `x[i]`")
        return self.invariant(node)

    # -- operators ----------------------------------------------------------------------------
    def _BinOp(self, node: ast.BinOp) -> Vec:
        op = type(node.op)
        if op not in _BINOPS:
            raise Refuse("operator not understood")
        left, right = self(node.left), self(node.right)
        if op is ast.MatMult:
            return self.matmul(left, right)
        symbol, prec = _BINOPS[op]
        if op in (ast.BitAnd, ast.BitOr, ast.BitXor) and not all(
                v.dtype is DType.bool if v.is_tensor else v.pytype == "bool" for v in (left, right)):
            raise Refuse("bitwise operators on non-bool values")
        if not (left.batched or right.batched):
            return self.invariant(node)
        kind = "div" if op is ast.Div else "other"
        dtype, shape = self.elementwise([left, right], kind)
        if op is ast.Pow:
            text = f"{wrap(left.text, left.prec, POWER + 1)} ** {wrap(right.text, right.prec, UNARY)}"
        else:
            text = f"{wrap(left.text, left.prec, prec)} {symbol} {wrap(right.text, right.prec, prec + 1)}"
        return Vec(text, prec, True, dtype=dtype, shape=shape, device=left.device or right.device,
                   row_major=_row_major([left, right]))

    def _UnaryOp(self, node: ast.UnaryOp) -> Vec:
        operand = self(node.operand)
        if not operand.batched:
            return self.invariant(node)
        if isinstance(node.op, ast.USub):
            if operand.dtype is DType.bool:
                raise Refuse("negating a bool tensor")
            return replace(operand, text=f"-{wrap(operand.text, operand.prec, UNARY)}", prec=UNARY, base=None,
                           fresh=True)
        if isinstance(node.op, ast.Not) and operand.dtype is DType.bool and operand.rank == 0:
            return replace(operand, text=f"~{wrap(operand.text, operand.prec, UNARY)}", prec=UNARY, base=None,
                           fresh=True)
        raise Refuse("unary operator not understood")

    def _Compare(self, node: ast.Compare) -> Vec:
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARES:
            raise Refuse("chained or non-numeric comparison")
        left, right = self(node.left), self(node.comparators[0])
        if not (left.batched or right.batched):
            return self.invariant(node)
        _, shape = self.elementwise([left, right], "compare")
        symbol = _COMPARES[type(node.ops[0])]
        text = f"{wrap(left.text, left.prec, COMPARE + 1)} {symbol} {wrap(right.text, right.prec, COMPARE + 1)}"
        return Vec(text, COMPARE, True, dtype=DType.bool, shape=shape, device=left.device or right.device,
                   row_major=_row_major([left, right]))

    def _BoolOp(self, node: ast.BoolOp) -> Vec:
        """``a > 0 and b < 1`` on 0-d bools: Python's truth test per element is ``&``/``|`` vectorized."""
        for later in node.values[1:]:
            no_raising_ops(later)  # short-circuited per element, computed for all vectorized
        parts = [self(value) for value in node.values]
        if not any(p.batched for p in parts):
            return self.invariant(node)
        if not all(p.is_tensor and p.dtype is DType.bool and p.rank == 0 and p.batched for p in parts):
            raise Refuse("`and`/`or` of something other than per-element comparisons")
        symbol, prec = ("&", BAND) if isinstance(node.op, ast.And) else ("|", BOR)
        text = f" {symbol} ".join(wrap(p.text, p.prec, prec + 1) for p in parts)
        return Vec(text, prec, True, dtype=DType.bool, shape=(), device=parts[0].device, row_major=_row_major(parts))

    def _IfExp(self, node: ast.IfExp) -> Vec:
        cond, body, orelse = self(node.test), self(node.body), self(node.orelse)
        if not (cond.batched or body.batched or orelse.batched):
            return self.invariant(node)
        return self.where(cond, body, orelse, [node.body, node.orelse], python_choice=True)

    # -- calls ----------------------------------------------------------------------------------
    def _Call(self, node: ast.Call) -> Vec:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Refuse("starred arguments")
        qualname = self.scope.qualname(node.func)
        if qualname is not None:
            return self.torch_call(node, qualname)
        if isinstance(node.func, ast.Attribute):
            return self.method_call(node)
        if isinstance(node.func, ast.Name) and node.func.id in _PY_BUILTINS \
                and self.scope.owner_of(node.func.id) is None and not self._mentions_loop(node):
            for arg in node.args:
                self(arg)
            return self.invariant(node)
        raise Refuse("a call that is not a known pure tensor op")

    def torch_call(self, node: ast.Call, qualname: str) -> Vec:
        if not qualname.startswith("torch.") or qualname.count(".") != 1:
            raise Refuse(f"`{qualname}` is not understood")
        name = qualname[len("torch."):]
        args = [self(a) for a in node.args]
        kwargs = {k.arg: k.value for k in node.keywords}
        if not any(a.batched for a in args) and not any(self._mentions_loop(v) for v in kwargs.values()):
            if qualname not in _INVARIANT_TORCH:
                raise Refuse(f"`{qualname}` is not a known pure op")
            for value in kwargs.values():
                self(value)
            return self.invariant(node)
        if name in _UNARY_TO_FLOAT | _UNARY_SAME and len(args) == 1 and not kwargs:
            return self.unary(name, args[0], f"{self.source(node.func)}({{}})")
        if name in _BINARY_FUNCS and len(args) == 2 and not kwargs:
            symbol, prec = _BINARY_FUNCS[name]
            dtype, shape = self.elementwise(args, "div" if name == "div" else "other")
            left, right = args
            text = f"{wrap(left.text, left.prec, prec)} {symbol} {wrap(right.text, right.prec, prec + 1)}"
            return Vec(text, prec, True, dtype=dtype, shape=shape, device=self._device(args),
                       row_major=_row_major(args))
        if name in _PROMOTING_FUNCS and len(args) == 2 and not kwargs:
            if not all(a.is_tensor for a in args):
                raise Refuse(f"`torch.{name}` with a number")
            dtype, shape = self.elementwise(args, "other")
            text = f"{self.source(node.func)}({args[0].text}, {args[1].text})"
            return Vec(text, ATOM, True, dtype=dtype, shape=shape, device=self._device(args),
                       row_major=_row_major(args))
        if name in ("dot", "matmul") and len(args) == 2 and not kwargs:
            if name == "dot" and not all(a.is_tensor and a.rank == 1 for a in args):
                raise Refuse("`torch.dot` of non-vectors")
            return self.matmul(*args)
        if name == "where" and len(args) == 3 and not kwargs:
            return self.where(*args, node.args[1:], python_choice=False)
        if name in _REDUCTIONS and len(args) >= 1:
            return self.reduction(name, args[0], node.args[1:], node.keywords)
        raise Refuse(f"`{qualname}` on a batched value is not understood")

    def method_call(self, node: ast.Call) -> Vec:
        name = node.func.attr
        receiver = self(node.func.value)
        if not receiver.is_tensor:
            raise Refuse("a method of a number")
        args = [self(a) for a in node.args]
        if not receiver.batched and not any(a.batched for a in args) \
                and not any(self._mentions_loop(k.value) for k in node.keywords):
            if name not in _INVARIANT_METHODS:
                raise Refuse(f"`.{name}()` is not a known pure method")
            for k in node.keywords:
                self(k.value)
            return self.invariant(node)
        if name in _UNARY_TO_FLOAT | _UNARY_SAME and not node.args and not node.keywords:
            return self.unary(name, receiver, f"{{}}.{name}()", method=True)
        if name in _CASTS and not node.args and not node.keywords:
            _exact([receiver])
            return replace(receiver, text=f"{receiver.atom()}.{name}()", prec=ATOM, dtype=_CASTS[name], base=None,
                           fresh=receiver.fresh or receiver.dtype != _CASTS[name])
        if name == "dot" and len(args) == 1 and not node.keywords:
            if not (receiver.rank == 1 and args[0].is_tensor and args[0].rank == 1):
                raise Refuse("`.dot` of non-vectors")
            return self.matmul(receiver, args[0])
        if name == "matmul" and len(args) == 1 and not node.keywords:
            return self.matmul(receiver, args[0])
        if name in _REDUCTIONS:
            return self.reduction(name, receiver, node.args, node.keywords)
        raise Refuse(f"`.{name}()` on a batched value is not understood")

    # -- op families ------------------------------------------------------------------------------
    def unary(self, name: str, operand: Vec, template: str, method: bool = False) -> Vec:
        if not operand.is_tensor:
            raise Refuse("a tensor function of a number")
        _exact([operand])
        dtype = operand.dtype
        if name in _UNARY_TO_FLOAT and not is_floating(dtype):
            if self.default_float is None:
                raise Refuse("default dtype unknown")
            dtype = self.default_float
        if name in ("floor", "ceil", "trunc", "round", "neg", "relu", "abs") and dtype is DType.bool:
            raise Refuse(f"`{name}` of a bool tensor")
        text = template.format(operand.atom() if method else operand.text)
        return Vec(text, ATOM, operand.batched, dtype=dtype, shape=operand.shape, device=operand.device,
                   row_major=operand.row_major)

    def elementwise(self, operands: list[Vec], kind: str) -> tuple[DType, tuple]:
        """Result dtype and per-element shape of an element-wise op, the same per element and vectorized."""
        if self.default_float is None:
            raise Refuse("default dtype unknown")
        _exact(operands)
        batched = [v for v in operands if v.batched]
        rank = max(v.rank for v in batched)
        if any(v.rank != rank for v in batched):
            raise Refuse("batched operands of different ranks")
        if any(v.is_tensor and not v.batched and v.rank > rank for v in operands):
            raise Refuse("a loop-invariant operand with more dimensions than the slices")
        try:
            per_element = result_type([v.per_element_operand() for v in operands], self.default_float)
            vectorized = result_type([v.vectorized_operand() for v in operands], self.default_float)
        except (DTypeError, ValueError) as err:
            raise Refuse(f"dtypes: {err}") from None
        if per_element != vectorized:
            raise Refuse(f"a slice computes in {per_element.short}, the whole tensor in {vectorized.short}")
        if is_complex(per_element):
            raise Refuse("complex dtypes")
        if kind == "div" and not is_floating(per_element):
            per_element = self.default_float  # true division of integers gives the default float
        shape: tuple = ()
        for v in operands:
            if v.is_tensor:
                shape = broadcast(shape, v.shape)
        return (DType.bool if kind == "compare" else per_element), shape

    def where(self, cond: Vec, body: Vec, orelse: Vec, nodes, python_choice: bool) -> Vec:
        """``torch.where``; ``python_choice``: from ``a if c else b`` / ``if``-``else``, which pick one value
        per element as it is (so a mixed pair is only exact when stored with no further cast)."""
        if not (cond.is_tensor and cond.dtype is DType.bool and cond.rank == 0):
            raise Refuse("`where` needs a per-element bool condition")
        if not (body.is_tensor or orelse.is_tensor):
            raise Refuse("`where` of two numbers")
        if python_choice:
            for branch in nodes:
                no_raising_ops(branch)
        _, shape = self.elementwise([cond, body, orelse], "other")
        dtype, _ = self.elementwise([body, orelse], "other") if (body.batched or orelse.batched) \
            else self.elementwise([cond, body, orelse], "other")
        torch = self.torch_name()
        text = f"{torch}.where({cond.text}, {body.text}, {orelse.text})"
        # Per element the chosen branch is stored as it is; vectorized both are first promoted together.
        same = body.is_tensor and orelse.is_tensor and body.dtype == orelse.dtype and body.rank == orelse.rank
        return Vec(text, ATOM, True, dtype=dtype, shape=shape, device=self._device([cond, body, orelse]),
                   exact_cast=same or not python_choice, row_major=_row_major([cond, body, orelse]))

    def matmul(self, left: Vec, right: Vec) -> Vec:
        if not (left.is_tensor and right.is_tensor) or left.dtype != right.dtype or not is_floating(left.dtype):
            raise Refuse("matrix product of different or non-floating dtypes")
        if not (left.batched or right.batched):
            raise Refuse("internal: invariant matmul")
        _exact([left, right])
        if left.rank not in (1, 2) or right.rank not in (1, 2):
            raise Refuse("matrix product of more than 2-d slices")
        inner_left = left.shape[-1]
        inner_right = right.shape[0]
        if dims.dim_eq(inner_left, inner_right) is not True:
            raise Refuse("matrix product of unequal inner sizes")
        shape = tuple(left.shape[:-1]) + tuple(right.shape[1:])
        device = self._device([left, right])
        if left.batched and right.batched:
            if left.rank != 1 or right.rank != 1:
                raise Refuse("matrix product of two batched matrices")
            return Vec(f"({left.text} * {right.text}).sum(dim=1)", ATOM, True, dtype=left.dtype, shape=(),
                       device=device)
        if left.batched:
            text = f"{wrap(left.text, left.prec, TERM)} @ {wrap(right.text, right.prec, TERM + 1)}"
            return Vec(text, TERM, True, dtype=left.dtype, shape=shape, device=device)
        # invariant @ batched vector: w @ x[i] is x[i] @ w (1-d w) or x[i] @ W.T (2-d W)
        if right.rank != 1:
            raise Refuse("a matrix times a batched matrix")
        other = left.atom() + (".T" if left.rank == 2 else "")
        text = f"{wrap(right.text, right.prec, TERM)} @ {other}"
        return Vec(text, TERM, True, dtype=left.dtype, shape=shape, device=device)

    def reduction(self, name: str, operand: Vec, args, keywords) -> Vec:
        if not operand.is_tensor or not operand.batched:
            raise Refuse("reduction of a non-batched value")
        if operand.rank != 1:
            raise Refuse("reductions only of 1-d slices")
        _exact([operand])
        dim_args = list(args) + [k.value for k in keywords if k.arg == "dim"]
        if any(k.arg != "dim" for k in keywords) or len(dim_args) > 1:
            raise Refuse("reduction options not understood")
        if dim_args and not (isinstance(dim_args[0], ast.Constant) and dim_args[0].value in (0, -1)
                             and not isinstance(dim_args[0].value, bool)):
            raise Refuse("reduction over a dimension not understood")
        if dim_args and name in ("max", "min"):
            raise Refuse("`max(dim)` returns values and indices")
        dtype = operand.dtype
        if name in ("sum", "prod") and not is_floating(dtype):
            dtype = DType.int64
        if name in ("mean", "norm") and not is_floating(dtype):
            raise Refuse(f"`{name}` of a non-floating tensor")
        if name in ("max", "min", "amax", "amin"):
            if not (isinstance(operand.shape[0], int) and operand.shape[0] > 0):
                raise Refuse(f"`{name}` of a slice that may be empty")
            name = "a" + name if name in ("max", "min") else name
        return Vec(f"{operand.atom()}.{name}(dim=1)", ATOM, True, dtype=dtype, shape=(), device=operand.device)

    # -- helpers ---------------------------------------------------------------------------------
    def torch_name(self) -> str:
        aliases = list(self.scope.aliases_of("torch"))
        if not aliases:
            raise Refuse("`torch` is not imported under a usable name")
        return "torch" if "torch" in aliases else aliases[0]

    def _device(self, values) -> Optional[str]:
        return next((v.device for v in values if v.device is not None), None)

    def _mentions_loop(self, node: ast.AST) -> bool:
        names = self.space.names
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


class Grid:
    """Two nested loops filling ``out[p, q]``: the loops' spaces in the order of the output's axes."""

    def __init__(self, rows: Space, cols: Space):
        self.levels = (rows, cols)
        self.index = None
        self.elements: dict = {}
        self.count = (rows.count, cols.count)

    @property
    def names(self) -> set:
        return self.levels[0].names | self.levels[1].names

    def axis_of(self, name: str) -> Optional[int]:
        return next((axis for axis, level in enumerate(self.levels) if name in level.names), None)


class GridTranslator(Translator):
    """The body of two nested loops that fill ``out[p, q]`` one number at a time.

    A slice along the row index becomes a column (``a[p]`` -> ``a[:, None]``), one along the column
    index stays a row (``b[q]`` -> ``b``), ``m[p, q]`` / ``m[p][q]`` is ``m``: broadcasting then
    pairs every row with every column. Only 0-d elements, so every op is element-wise (a reduction
    or a matrix product of a 0-d slice is refused by the ops themselves).
    """

    def __init__(self, ctx, scope, grid: Grid, default_float: Optional[DType]):
        super().__init__(ctx, scope, grid, default_float)
        self.axes: set = set()  # the output axes the leaves span; the result covers exactly these
        self.leaves: dict = {}  # node of a 1-d slice -> (axis, the whole vector's text), for `torch.outer`
        self.layout_known = True  # every 2-d tensor read is row-major (so the result is too)

    def _Name(self, node: ast.Name) -> Vec:
        axis = self.space.axis_of(node.id)
        if axis is None:
            return self.invariant(node)
        level = self.space.levels[axis]
        if node.id == level.index:
            raise Refuse("the loop index is used as a value")
        batch = level.elements[node.id]
        if batch.shape:
            raise Refuse("elements of more than 0 dimensions")
        self.grad |= batch.grad
        return self._leaf(node, batch.text, batch.prec, batch.dtype, batch.device, (axis,))

    def _Subscript(self, node: ast.Subscript) -> Vec:
        if not self._mentions_loop(node):
            return self.invariant(node)
        base, indices = grid_indices(node)
        axes = tuple(self.space.axis_of(name) for name in indices)
        if base is None or any(a is None or name != self.space.levels[a].index for a, name in zip(axes, indices)):
            raise Refuse("the loop variables are used in an index other than `x[i]`, `m[i, j]`")
        if len(set(axes)) != len(axes):
            raise Refuse("the same index twice")
        if axes == (1, 0):
            raise Refuse("a transposed read (`m[j, i]`)")
        if not isinstance(base, (ast.Name, ast.Attribute)) or self._mentions_loop(base):
            raise Refuse("indexing something other than a named tensor")
        whole = self.invariant(base)
        if not whole.is_tensor or whole.rank != len(indices):
            raise Refuse("elements of more than 0 dimensions")
        for axis, size in zip(axes, whole.shape):
            count = self.space.levels[axis].count
            if dims.dim_eq(size, count) is not True:
                raise Refuse(f"`{whole.text}` has a dimension of {size}, the loop runs {count} times")
        value = self.ctx.value(base)
        self.grad |= value.requires_grad is not False
        if whole.rank == 2 and layout.is_contiguous(whole.shape, value.strides) is not True:
            self.layout_known = False
        return self._leaf(node, whole.text, whole.prec, whole.dtype, whole.device, axes)

    def _leaf(self, node: ast.AST, text: str, prec: int, dtype: DType, device, axes: tuple) -> Vec:
        """The whole tensor ``text``, placed along the output axes it spans."""
        self.axes.update(axes)
        if len(axes) == 1:
            self.leaves[node] = (axes[0], text)
        if axes == (0,):
            text, prec = f"{wrap(text, prec, ATOM)}[:, None]", ATOM
        return Vec(text, prec, True, dtype=dtype, shape=(), device=device, base=text, fresh=False)


def grid_indices(node: ast.Subscript) -> tuple:
    """``a[i]`` -> (a, (i,)); ``m[i, j]`` and ``m[i][j]`` -> (m, (i, j)); anything else -> (None, ())."""
    index = node.slice
    if isinstance(index, ast.Name):
        inner = node.value
        if isinstance(inner, ast.Subscript) and isinstance(inner.slice, ast.Name):
            return inner.value, (inner.slice.id, index.id)
        return inner, (index.id,)
    if isinstance(index, ast.Tuple) and len(index.elts) == 2 and all(isinstance(e, ast.Name) for e in index.elts):
        return node.value, (index.elts[0].id, index.elts[1].id)
    return None, ()


def no_raising_ops(node: ast.AST) -> None:
    """Code the loop may skip for some elements (an untaken branch) is computed for all of them vectorized:
    an integer division by zero or a negative integer power it never reached would raise."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, (ast.FloorDiv, ast.Mod, ast.Pow)):
            raise Refuse("a branch that may raise where the loop would not compute it")


def row_ordered(shape, strides) -> bool:
    """An element-wise op (TensorIterator) lays its result out in the order of its operands' dims, and a
    clone or a cast (``preserve_format``) that of its input: a result is row-major (contiguous) when every
    operand is *row-ordered*: at most one dim; or row-major; or, sizes and strides known, the strides of
    its dims of more than one element decrease outwards, a broadcast (stride 0) one aside (``x[::2]``,
    ``v.expand(n, d)``). A matrix product or a reduction makes a new row-major tensor whatever its inputs."""
    if shape is None:
        return False
    if len(shape) <= 1 or layout.is_contiguous(shape, strides) is True:
        return True
    if strides is None or not all(type(d) is int for d in (*shape, *strides)):
        return False
    spread = [stride for size, stride in zip(shape, strides) if size > 1 and stride != 0]
    return all(outer > inner for outer, inner in zip(spread, spread[1:]))


def _row_major(values) -> bool:
    return all(v.row_major for v in values if v.is_tensor)


def _exact(values) -> None:
    if any(not v.exact_cast for v in values):
        raise Refuse("a Python-level choice between values of different types, used in arithmetic")


def broadcast(a: tuple, b: tuple) -> tuple:
    """The broadcast shape of ``a`` and ``b``, when it is certain for every value of the symbols."""
    result = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if dims.dim_eq(x, y) is True:
            result.append(x)
        elif x == 1:
            result.append(y)
        elif y == 1:
            result.append(x)
        else:
            raise Refuse("shapes that may not broadcast")
    return tuple(reversed(result))


def _precedence(node: ast.AST) -> int:
    if isinstance(node, ast.BinOp):
        return _BINOPS.get(type(node.op), (None, 0))[1]
    if isinstance(node, ast.UnaryOp):
        return NOT if isinstance(node.op, ast.Not) else UNARY
    if isinstance(node, ast.Compare):
        return COMPARE
    if isinstance(node, ast.BoolOp):
        return AND if isinstance(node.op, ast.And) else OR
    if isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr)):
        return 0
    return ATOM
