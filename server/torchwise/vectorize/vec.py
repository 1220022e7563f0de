"""The values of a batched loop body, and the facts arithmetic the vectorizer shares.

A ``Vec`` is one translated expression: its vectorized text and two sets of facts, one element's and the
whole tensor's (with one leading dimension per loop). The helpers here build and compare those facts
(indexing, transposing, moving the loop dim), and name the few op facts the table does not hold yet
(``_PURE_*``, ``_RANDOM``: which calls are pure, which draw random numbers).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from torchwise.analysis import dims, layout, shapes
from torchwise.analysis.dtypes import DType
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue
from torchwise.vectorize.expr import ARITH, ATOM, BAND, BOR, BXOR, POWER, TERM, Refuse, row_ordered, wrap


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}


_BINOP_PREC = {"+": ARITH, "-": ARITH, "*": TERM, "/": TERM, "//": TERM, "%": TERM, "@": TERM, "**": POWER,
               "&": BAND, "|": BOR, "^": BXOR}


_COMPARES = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}


# -- vectorizer-only facts (requests for the op table are in the closing note) ---------------------------
# Pure calls the table has no row for, allowed in loop-invariant code (they run once instead of N times).
_PURE_FACTORIES = frozenset({"tensor", "as_tensor", "zeros", "ones", "full", "empty", "arange", "eye", "linspace",
                             "zeros_like", "ones_like", "full_like", "empty_like", "numel", "is_tensor",
                             "result_type", "finfo", "iinfo", "diag", "trace", "sqrt", "allclose", "equal"})


# Calls that draw random numbers: one draw per element is not one draw per tensor (the loop must stay).
_RANDOM = frozenset({"rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
                     "rand_like", "randn_like", "randint_like"})


_PURE_METHODS = frozenset({"item", "size", "numel", "dim", "tolist", "new_tensor", "new_zeros", "new_ones",
                           "new_full", "type_as", "view_as", "reshape_as", "expand_as", "is_contiguous", "nelement",
                           "element_size", "stride", "storage_offset", "is_floating_point", "diag", "trace",
                           "T", "float", "allclose", "equal", "numpy"})


_PURE_BUILTINS = frozenset({"abs", "float", "int", "len", "min", "max", "round", "bool", "range", "tuple", "list",
                            "isinstance", "sum", "all", "any", "divmod", "pow"})


_PURE_MODULES = ("math.",)


# `max()` / `min()` over all dims of a slice are `amax` / `amin` over its dims (the same NaN and gradient rules);
# `prod`, `argmax`, `argmin` over all dims take one dim: a slice of several dims is flattened first.
_ALL_DIMS_RENAMED = {"max": "amax", "min": "amin"}


_ONE_DIM_ONLY = frozenset({"prod", "argmax", "argmin", "median", "nanmedian", "mode", "logcumsumexp"})


_NO_DIM_MEANS_LAST = frozenset({"sort", "argsort", "topk", "mode"})


@dataclass(frozen=True)
class Vec:
    """One translated expression: its vectorized text, and its facts per element and as a whole."""

    text: str
    prec: int
    elem: object  # one element's facts: TensorValue, ScalarValue (a Python number), SeqValue (a tuple)
    whole: object = None  # the vectorized text's facts (batched values only)
    deps: frozenset = frozenset()  # the loop levels it varies along
    lost: int = 0  # leading size-1 dims of the element that the whole leaves out (broadcasting makes them moot)
    keepdim: Optional[str] = None  # a reduction of a slice: the same with keepdim=True
    kept: int = 0  # ... and the number of element dims that keeps
    base: Optional[str] = None  # a bare walk over a tensor: the tensor's own text (the data itself)
    fresh: bool = True  # vectorized, it is new memory
    exact_cast: bool = True  # casting it is the same as casting each element's value
    moved: Optional[tuple] = None  # (text, its facts, k): the whole is that tensor with its dim k moved first
    keepdim_moved: Optional[tuple] = None  # the keepdim form, as `moved`
    ragged: Optional[tuple] = None  # `x[b, :n[b]]`: (the whole `x` text, its facts, the mask text); only summed
    parts: Optional[tuple] = None  # a tuple result (values, indices): its items as Vecs
    python: bool = False  # per element a Python number
    free: bool = False  # its dtype is unknown, but provably the same per element and vectorized
    bound: Optional[float] = None  # a Python float per element: a bound on its magnitude, when one is known

    @property
    def batched(self) -> bool:
        return bool(self.deps)

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.elem, TensorValue) and not self.python

    @property
    def dtype(self):
        return self.whole.dtype if self.python else getattr(self.elem, "dtype", None)

    @property
    def rank(self) -> int:
        """The element rank the whole represents (leading ones left out excluded)."""
        if isinstance(self.elem, TensorValue) and not self.python:
            return len(self.elem.shape) - self.lost
        return 0

    @property
    def shape(self) -> tuple:
        return tuple(self.elem.shape[self.lost:]) if self.is_tensor else ()

    @property
    def batch_dims(self) -> int:
        """How many loop dimensions the whole text has (leading ones may be left out)."""
        return len(self.whole.shape) - self.rank if self.batched else 0

    @property
    def row_major(self) -> bool:
        value = self.whole if self.batched else self.elem
        return isinstance(value, TensorValue) and row_ordered(value.shape, value.strides)

    def atom(self) -> str:
        return wrap(self.text, self.prec, ATOM)


def _known(value: TensorValue) -> bool:
    return isinstance(value, TensorValue) and value.dtype is not None and value.shape is not None \
        and value.device is not None


def _shaped(value) -> bool:
    """A tensor whose shape is known (its dtype and device may not be: a parameter known only by rank)."""
    return isinstance(value, TensorValue) and value.shape is not None


def stacks_samples(whole, elem, count) -> bool:
    """``whole`` (an op's facts on the batch) is certainly ``count`` results ``elem`` (its facts on one sample)
    stacked: one more dim in front, ``count`` long, the others and the dtype the sample's."""
    return _shaped(whole) and _shaped(elem) and elem.dtype is not None and whole.dtype == elem.dtype \
        and len(whole.shape) == len(elem.shape) + 1 and _certain(dims.dim_eq(whole.shape[0], count)) \
        and all(_certain(dims.dim_eq(a, b)) for a, b in zip(whole.shape[1:], elem.shape))


# -- helpers -----------------------------------------------------------------------------------------------
def flatten_subscript(node: ast.Subscript):
    """``m[i][j]`` -> (m, [i, j]) when every inner index selects (no slice, no tuple): the same as ``m[i, j]``."""
    parts = []
    while isinstance(node, ast.Subscript) and isinstance(node.value, ast.Subscript):
        if isinstance(node.slice, (ast.Slice, ast.Tuple)) or isinstance(node.value.slice, (ast.Slice, ast.Tuple)):
            return None
        parts.insert(0, node.slice)
        node = node.value
    if not parts or not isinstance(node, ast.Subscript):
        return None
    parts.insert(0, node.slice)
    return node.value, parts


class _SymSlice:
    """A slice with symbolic bounds, for shape arithmetic only."""

    def __init__(self, start, stop, step, count):
        self.start, self.stop, self.step, self.count = start, stop, step, count


_UNKNOWN = object()


def _dims_value(value):
    if isinstance(value, ScalarValue) and value.kind == "int" and type(value.value) is int:
        return value.value
    if isinstance(value, ScalarValue) and value.kind == "none":
        return None
    if isinstance(value, SeqValue) and value.items is not None and all(
            isinstance(i, ScalarValue) and type(i.value) is int for i in value.items):
        return tuple(i.value for i in value.items)
    return _UNKNOWN


def _dims_facts(dim):
    if dim is None:
        return ScalarValue("none")
    if isinstance(dim, tuple):
        return SeqValue("tuple", tuple(ScalarValue("int", d) for d in dim))
    return ScalarValue("int", dim)


def _flag(value) -> Optional[bool]:
    return value.value if isinstance(value, ScalarValue) and value.kind == "bool" else None


def _reduced_count(whole_dims: dict, rank: int) -> int:
    for dims_ in whole_dims.values():
        if dims_ is None:
            continue
        return len(dims_) if isinstance(dims_, tuple) else 1
    return 0


def _same_promotion(operands: list) -> bool:
    """Type promotion gives the same dtype per element and vectorized *whatever the dtypes are*: it depends on
    the dtypes and on which priority group each operand is in (dim tensors, 0-d tensors, numbers); vectorized,
    a batched operand is always a dim tensor. The groups stay in the same order when the batched operands are
    all of one group per element and, if they are 0-d, no loop-invariant tensor is there to rank against them."""
    batched = [v for v in operands if v.batched]
    if any(v.python for v in batched):
        return False
    groups = {bool(getattr(v.elem, "shape", ())) for v in batched}
    if len(groups) != 1:
        return False
    invariants = [v for v in operands if not v.batched and v.is_tensor]
    return not (groups == {False} and invariants)


def _exactly(text: str, dtype: DType) -> bool:
    """A Python number literal that ``dtype`` holds exactly (so torch's rounding of it changes nothing)."""
    import struct

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError):
        return False
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if dtype is DType.float64:
        return float(value) == value
    try:
        return struct.unpack("<f", struct.pack("<f", float(value)))[0] == value
    except OverflowError:
        return False


def _slot_key(parts: list) -> str:
    return "|".join(ast.dump(p) for p in parts)


def _certain(answer) -> bool:
    return answer is True


def _int(ctx, node):
    from torchwise.vectorize.space import int_value

    return int_value(ctx, node)


def _row(whole: TensorValue) -> TensorValue:
    return _drop(whole, 1)


def _drop(whole: TensorValue, count: int) -> TensorValue:
    strides = None if whole.strides is None else tuple(whole.strides[count:])
    return TensorValue(whole.dtype, tuple(whole.shape[count:]), whole.device, strides, whole.requires_grad,
                       None if whole.requires_grad is None else not whole.requires_grad, whole.why, None)


def _index(whole: TensorValue, items: list) -> TensorValue:
    concrete = []
    for item in items:
        concrete.append(slice(None) if isinstance(item, _SymSlice) else item)
    shape = list(whole.shape)
    try:
        result = shapes.index(tuple(shape), [i if not isinstance(i, _SymSlice) else slice(None) for i in items])
    except shapes.ShapeError:
        raise Refuse("an index outside the tensor") from None
    if result is None:
        raise Refuse("an index not understood")
    result = list(result)
    # symbolic slices: their length is the loop count
    position = 0
    for item in items:
        if item is None:
            position += 1
        elif isinstance(item, _SymSlice):
            result[position] = item.count
            position += 1
        elif isinstance(item, slice):
            position += 1
    strides = None
    if whole.strides is not None:
        stepped = [slice(None, None, i.step) if isinstance(i, _SymSlice) else i for i in items]
        try:
            strides = layout.index_strides(tuple(whole.shape), whole.strides, stepped)
        except Exception:  # noqa: BLE001
            strides = None
    return whole.with_(shape=tuple(result), strides=strides, memory=None)


def _unmoved(facts: TensorValue, k: int) -> TensorValue:
    """The facts of a tensor whose dim ``k`` was moved first (``facts``), in its own dim order."""
    order = list(range(1, k + 1)) + [0] + list(range(k + 1, len(facts.shape)))
    return facts.with_(shape=tuple(facts.shape[d] for d in order),
                       strides=None if facts.strides is None else tuple(facts.strides[d] for d in order))


def _transposed(facts: TensorValue, a: int, b: int) -> TensorValue:
    shape = list(facts.shape)
    a, b = a % len(shape), b % len(shape)
    shape[a], shape[b] = shape[b], shape[a]
    strides = None
    if facts.strides is not None:
        strides = list(facts.strides)
        strides[a], strides[b] = strides[b], strides[a]
        strides = tuple(strides)
    return facts.with_(shape=tuple(shape), strides=strides)


def _reduce_facts(facts, dim: int):
    if not isinstance(facts, TensorValue) or facts.shape is None:
        return None
    shape = tuple(s for i, s in enumerate(facts.shape) if i != dim)
    return facts.with_(shape=shape, strides=layout.contiguous_strides(shape))


def _effective_rank(vec: Vec) -> int:
    """An invariant tensor's rank without its leading size-1 dims (they only add leading ones per element)."""
    shape = list(vec.shape)
    while shape and type(shape[0]) is int and shape[0] == 1:
        shape.pop(0)
    return len(shape)


def _either(a, b):
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    return None


def _logical(values):
    a, b = values
    if isinstance(a, ScalarValue) and isinstance(b, ScalarValue):
        return ScalarValue("bool")
    if isinstance(a, TensorValue) and isinstance(b, TensorValue) and a.shape == () and b.shape == ():
        return a.with_(requires_grad=False)
    if isinstance(a, TensorValue) and isinstance(b, TensorValue):
        try:
            shape = shapes.broadcast(a.shape, b.shape)
        except shapes.ShapeError:
            return None
        from torchwise.analysis.tensors import output_strides

        return a.with_(shape=shape, strides=output_strides(shape, a, b), requires_grad=False)
    return None


def _unplaced(vec: Vec):
    """(text, facts) of a bare walk before ``None`` dims were added for later loops."""
    if vec.base is None:
        return None
    text = vec.base
    facts = vec.whole
    if text.endswith("[:, None]"):
        return text[: -len("[:, None]")], facts.with_(shape=facts.shape[:1] + facts.shape[2:],
                                                     strides=None if facts.strides is None
                                                     else facts.strides[:1] + facts.strides[2:])
    return text, facts


def _compare_node(symbol: str) -> ast.Compare:
    op = {">": ast.Gt(), "<": ast.Lt()}[symbol]
    return ast.Compare(left=ast.Constant(0), ops=[op], comparators=[ast.Constant(0)])


def _matmul_node() -> ast.BinOp:
    return ast.BinOp(left=ast.Constant(0), op=ast.MatMult(), right=ast.Constant(0))


def _mul_node() -> ast.BinOp:
    return ast.BinOp(left=ast.Constant(0), op=ast.Mult(), right=ast.Constant(0))


def _clip(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
