"""The one op table: what every PyTorch op torchwise knows is, said once, for every reader.

Like ``native_functions.yaml`` and ``torch._refs``, a row names an op's *family* and its
type-promotion kind, and gives its signature; the family supplies the rest:

- the facts engine (``ops_families``) computes result dtype, shape, layout and errors from it;
- the rules read its tags (which ops are element-wise, which save their output for backward,
  which have an in-place twin);
- the vectorizer reads its batching rule: what ``op(x[i], ...)`` becomes on the whole ``x``
  (element-wise ops batch as they are, a ``dim=`` argument moves by one, a few ops become others).

Only the irregular ops (views, factories, ``cat``, products, layers) have a hand-written shape
function, in ``ops_tensor``/``ops_nn``; their rows still give the signature and the batching rule.
Every row is checked against real torch by ``tests/test_optable_truth.py`` (generated inputs of
every dtype and several shapes), and the rows were chosen by how often real code calls them
(``benchmarks/fact_coverage.py`` over ``../shared/corpus``).

Pure data and a signature binder: no engine imports, so any module can read it.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass
from typing import Iterable, Optional

REQUIRED = object()  # a parameter without a default


class Promote(enum.Enum):
    """How an op's result dtype follows from its inputs (``torch._prims_common.ELEMENTWISE_TYPE_PROMOTION_KIND``,
    plus the reduction kinds)."""

    DEFAULT = "default"  # PyTorch's promotion; ints stay ints (add, maximum)
    INT_TO_FLOAT = "int_to_float"  # integers and bools give the default float (exp, sqrt, true division)
    ALWAYS_BOOL = "always_bool"  # comparisons, isnan: the operands still promote, and may raise
    COMPLEX_TO_FLOAT = "complex_to_float"  # abs: a complex input gives its real type
    BOOL_TO_LONG = "bool_to_long"  # square: bools give int64
    KEEP = "keep"  # exactly the input's dtype (flip, roll, clone)
    SUM = "sum"  # integers and bools accumulate in int64 (sum, prod, cumsum); dtype= overrides
    FLOAT_ONLY = "float_only"  # floating inputs keep their dtype, others raise (mean, softmax); dtype= overrides
    INDEX = "index"  # int64 indices (argmax, argsort, count_nonzero)
    ANY_ALL = "any_all"  # bool; a uint8 input stays uint8


class Family(enum.Enum):
    POINTWISE = "pointwise"  # broadcast the tensor inputs, promote, same layout as the inputs
    REDUCTION = "reduction"  # over `dim` (None: all), `keepdim`; several tensor inputs broadcast first
    SCAN = "scan"  # along `dim`, same shape (softmax, cumsum, flip)
    CUSTOM = "custom"  # its own shape function in ops_tensor / ops_nn (views, factories, products...)


class Batch(enum.Enum):
    """What ``op(x[i], ...)`` for each ``i`` is as one op on the stacked ``x`` (functorch's batching rules)."""

    POINTWISE = "pointwise"  # the same op; loop-invariant operands broadcast as they are
    DIM = "dim"  # the same op with its dim arguments moved one to the right (non-negative ones)
    SIZES = "sizes"  # the batch dimension is prepended to a size argument (view, reshape, expand)
    SPECIAL = "special"  # a per-op rule in the vectorizer (dot -> @, mv -> @, t -> transpose(1, 2))
    NONE = "none"  # no batched form known


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # "Tensor", "Tensor|Scalar", "Scalar", "int", "int?", "int[]", "int[]?", "bool", "float", "dtype?", ...
    default: object = REQUIRED  # a Python constant, or REQUIRED
    kw_only: bool = False

    @property
    def tensor(self) -> bool:
        return self.type.startswith("Tensor")


@dataclass(frozen=True)
class Signature:
    name: str
    params: tuple  # (Param, ...)

    @staticmethod
    def parse(text: str) -> "Signature":
        """``sum(Tensor input, int[]? dim=None, bool keepdim=False, *, dtype? dtype=None)``."""
        name, _, rest = text.partition("(")
        params, kw_only = [], False
        for part in _split_params(rest.rstrip().removesuffix(")")):
            if part == "*":
                kw_only = True
                continue
            declared, _, default = part.partition("=")
            kind, _, pname = declared.strip().rpartition(" ")
            value = ast.literal_eval(default.strip()) if default else REQUIRED
            params.append(Param(pname, kind or "any", value, kw_only))
        return Signature(name.strip(), tuple(params))

    def param(self, name: str) -> Optional[Param]:
        return next((p for p in self.params if p.name == name), None)

    @property
    def tensor_params(self) -> tuple:
        return tuple(p.name for p in self.params if p.tensor)


def _split_params(text: str) -> list:
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


class Unbound(Exception):
    """The call does not fit the signature (PyTorch raises a TypeError): claim nothing."""


def bind(signature: Signature, args: list, kwargs: dict, receiver=None, missing=None) -> dict:
    """Arguments by parameter name, the way PyTorch's argument parser reads them.

    ``receiver`` is the tensor of a method call (the first parameter); a parameter not given gets
    ``missing(param)`` (by default its declared default, or it raises Unbound when required)."""
    params = list(signature.params)
    bound: dict = {}
    if receiver is not None:
        bound[params[0].name] = receiver
        params = params[1:]
    positional = [p for p in params if not p.kw_only]
    if len(args) > len(positional):
        raise Unbound(f"{signature.name}() takes at most {len(positional)} positional arguments")
    for param, value in zip(positional, args):
        bound[param.name] = value
    for name, value in kwargs.items():
        if name in bound or signature.param(name) is None:
            raise Unbound(f"{signature.name}() got an unexpected or repeated argument '{name}'")
        bound[name] = value
    for param in params:
        if param.name not in bound:
            if missing is not None:
                bound[param.name] = missing(param)
            elif param.default is REQUIRED:
                raise Unbound(f"{signature.name}() missing required argument '{param.name}'")
    return bound


@dataclass(frozen=True)
class Op:
    """One row. ``forms``: "function" (``torch.name``), "method" (``t.name``), "functional"
    (``torch.nn.functional.name``), "inplace" (``t.name_``)."""

    name: str
    family: Family
    signature: Signature
    promote: Promote = Promote.DEFAULT
    forms: frozenset = frozenset({"function", "method"})
    tags: frozenset = frozenset()
    batch: Batch = Batch.POINTWISE
    kernel: Optional[str] = None  # for element-wise ops: the kernel's dtype rules (see ops.elementwise)
    dims: tuple = ("dim",)  # the parameters a Batch.DIM rule moves

    def has(self, tag: str) -> bool:
        return tag in self.tags

    @property
    def inputs(self) -> tuple:
        return self.signature.tensor_params


# Tags:
#   saves_output    its backward reads its own output: changing that in place breaks backward (TW303)
#   no_bool         no kernel for bool inputs (PyTorch raises)
#   no_complex      no kernel for complex inputs (no order, no rounding)
#   needs_elements  a reduction over an empty dim raises (max, argmax, amax)
#   values_indices  returns (values, indices) when a dim is given (max(dim), sort, cummax)
#   random          draws random numbers (dropout): a rewrite must keep the draws
#   rank2           needs at least two dims (tril, triu)
#   integral        integer and bool inputs only (bitwise ops)
#   float_input     a floating (or complex) input even when dtype= is given (nanmean, norm)
#   no_scalar_dim   a 0-d input has no dim 0 to name (roll)
#   promote_types   the tensor inputs promote as dtypes, 0-d or not (cosine_similarity)
ROWS: list = []
_BY_FORM: dict = {"function": {}, "method": {}, "functional": {}, "inplace": {}}


def _row(op: Op) -> Op:
    ROWS.append(op)
    for form in op.forms:
        _BY_FORM[form].setdefault(op.name, op)
    return op


def _rows(names: str, family: Family, signature: str, **options) -> list:
    """One row per name of ``names`` ("exp exp2 expm1"), all with ``signature`` (``NAME`` stands for the name);
    ``alias=a:b`` names share b's row."""
    made = []
    for name in names.split():
        made.append(_row(Op(name, family, Signature.parse(signature.replace("NAME", name)), **options)))
    return made


def _alias(alias: str, of: str, forms: Iterable[str] = ("function", "method")) -> None:
    for form in forms:
        op = _BY_FORM[form].get(of)
        if op is not None:
            _BY_FORM[form].setdefault(alias, op)


_TENSOR_METHOD = frozenset({"function", "method", "inplace"})
_WITH_F = frozenset({"function", "method", "inplace", "functional"})
P, R, S, C = Family.POINTWISE, Family.REDUCTION, Family.SCAN, Family.CUSTOM

# -- element-wise: unary ---------------------------------------------------------------------------------
_rows("exp exp2 expm1 sqrt rsqrt reciprocal", P, "NAME(Tensor input)", promote=Promote.INT_TO_FLOAT,
      forms=_TENSOR_METHOD, tags=frozenset({"saves_output"}))
_rows("tanh sigmoid", P, "NAME(Tensor input)", promote=Promote.INT_TO_FLOAT, forms=_WITH_F,
      tags=frozenset({"saves_output"}))
_rows("log log2 log10 log1p sin cos tan asin acos atan sinh cosh asinh acosh atanh sinc", P, "NAME(Tensor input)",
      promote=Promote.INT_TO_FLOAT, forms=_TENSOR_METHOD)
_rows("erf erfc erfinv lgamma digamma i0", P, "NAME(Tensor input)", promote=Promote.INT_TO_FLOAT,
      forms=_TENSOR_METHOD, tags=frozenset({"no_complex"}))
_rows("logit", P, "logit(Tensor input, float? eps=None)", promote=Promote.INT_TO_FLOAT, forms=_TENSOR_METHOD,
      tags=frozenset({"no_complex"}))
_rows("abs", P, "abs(Tensor input)", promote=Promote.COMPLEX_TO_FLOAT, forms=_TENSOR_METHOD,
      tags=frozenset({"no_bool"}))
_rows("neg", P, "neg(Tensor input)", forms=_TENSOR_METHOD, tags=frozenset({"no_bool"}))
_rows("floor ceil round trunc", P, "NAME(Tensor input)", forms=_TENSOR_METHOD,
      tags=frozenset({"no_bool", "no_complex"}))
_rows("frac", P, "frac(Tensor input)", promote=Promote.FLOAT_ONLY, forms=_TENSOR_METHOD)
_rows("sign", P, "sign(Tensor input)", forms=_TENSOR_METHOD, tags=frozenset({"no_complex"}))
_rows("sgn", P, "sgn(Tensor input)", forms=_TENSOR_METHOD)
_rows("square", P, "square(Tensor input)", promote=Promote.BOOL_TO_LONG, forms=_TENSOR_METHOD)
_rows("relu", P, "relu(Tensor input)", forms=_WITH_F, tags=frozenset({"no_bool", "no_complex", "saves_output"}))
_rows("nan_to_num", P, "nan_to_num(Tensor input, float? nan=0.0, float? posinf=None, float? neginf=None)",
      forms=_TENSOR_METHOD, promote=Promote.KEEP)
_rows("isnan isinf isfinite isreal logical_not", P, "NAME(Tensor input)", promote=Promote.ALWAYS_BOOL)
_rows("isposinf isneginf signbit", P, "NAME(Tensor input)", promote=Promote.ALWAYS_BOOL, tags=frozenset({"no_complex"}))
_alias("negative", "neg", ("function", "method"))
_alias("absolute", "abs", ("function", "method"))
_alias("arcsin", "asin")
_alias("arccos", "acos")
_alias("arctan", "atan")
_alias("fix", "trunc")

# -- element-wise: binary and more -------------------------------------------------------------------------
_rows("add", P, "add(Tensor input, Tensor|Scalar other, *, Scalar alpha=1)", forms=_TENSOR_METHOD, kernel="add")
_rows("sub", P, "sub(Tensor input, Tensor|Scalar other, *, Scalar alpha=1)", forms=_TENSOR_METHOD, kernel="sub")
_rows("mul", P, "mul(Tensor input, Tensor|Scalar other)", forms=_TENSOR_METHOD, kernel="mul")
_rows("div", P, "div(Tensor input, Tensor|Scalar other, *, str? rounding_mode=None)", forms=_TENSOR_METHOD,
      kernel="div", promote=Promote.INT_TO_FLOAT)
_rows("pow", P, "pow(Tensor input, Tensor|Scalar exponent)", forms=_TENSOR_METHOD, kernel="pow")
_rows("remainder fmod", P, "NAME(Tensor input, Tensor|Scalar other)", forms=_TENSOR_METHOD, kernel="mod")
_rows("floor_divide", P, "floor_divide(Tensor input, Tensor|Scalar other)", forms=_TENSOR_METHOD,
      kernel="floordiv")
_rows("maximum minimum fmax fmin", P, "NAME(Tensor input, Tensor other)", kernel="max")
_rows("atan2 hypot", P, "NAME(Tensor input, Tensor other)", forms=_TENSOR_METHOD, kernel="div",
      promote=Promote.INT_TO_FLOAT, tags=frozenset({"no_complex"}))
_rows("copysign xlogy", P, "NAME(Tensor input, Tensor|Scalar other)", forms=_TENSOR_METHOD, kernel="div",
      promote=Promote.INT_TO_FLOAT, tags=frozenset({"no_complex"}))
_rows("bitwise_and bitwise_or bitwise_xor", P, "NAME(Tensor input, Tensor|Scalar other)", forms=_TENSOR_METHOD,
      kernel="and", tags=frozenset({"integral"}))
_rows("eq ne", P, "NAME(Tensor input, Tensor|Scalar other)", forms=_TENSOR_METHOD,
      promote=Promote.ALWAYS_BOOL, kernel="compare")
_rows("lt le gt ge", P, "NAME(Tensor input, Tensor|Scalar other)", forms=_TENSOR_METHOD,
      promote=Promote.ALWAYS_BOOL, kernel="order")
_rows("logical_and logical_or logical_xor", P, "NAME(Tensor input, Tensor other)", forms=_TENSOR_METHOD,
      promote=Promote.ALWAYS_BOOL, kernel="logical")
_rows("lerp", P, "lerp(Tensor input, Tensor end, Tensor|Scalar weight)", forms=_TENSOR_METHOD, kernel="lerp",
      promote=Promote.FLOAT_ONLY)
_rows("clamp", P, "clamp(Tensor input, Tensor|Scalar? min=None, Tensor|Scalar? max=None)", forms=_TENSOR_METHOD,
      kernel="clamp", tags=frozenset({"no_bool", "no_complex"}))
_rows("clamp_min", P, "clamp_min(Tensor input, Tensor|Scalar min)", forms=_TENSOR_METHOD, kernel="clamp",
      tags=frozenset({"no_bool", "no_complex"}))
_rows("clamp_max", P, "clamp_max(Tensor input, Tensor|Scalar max)", forms=_TENSOR_METHOD, kernel="clamp",
      tags=frozenset({"no_bool", "no_complex"}))
_rows("where", P, "where(Tensor condition, Tensor|Scalar input, Tensor|Scalar other)", forms=frozenset({"function"}),
      kernel="where")
_rows("masked_fill", P, "masked_fill(Tensor input, Tensor mask, Tensor|Scalar value)", forms=_TENSOR_METHOD,
      kernel="masked_fill", promote=Promote.KEEP)
for _a, _b in (("subtract", "sub"), ("multiply", "mul"), ("divide", "div"), ("true_divide", "div"),
               ("clip", "clamp"), ("greater", "gt"), ("less", "lt"), ("greater_equal", "ge"), ("less_equal", "le"),
               ("not_equal", "ne"), ("arctan2", "atan2")):
    _alias(_a, _b)

# -- activations (torch.nn.functional) ---------------------------------------------------------------------
_F = frozenset({"functional"})
_rows("gelu", P, "gelu(Tensor input, str approximate='none')", forms=_F, promote=Promote.FLOAT_ONLY)
_rows("silu mish hardswish hardsigmoid logsigmoid selu softsign tanhshrink", P, "NAME(Tensor input)",
      forms=_F, promote=Promote.FLOAT_ONLY)
_rows("relu6", P, "relu6(Tensor input, bool inplace=False)", forms=_F, tags=frozenset({"no_bool", "no_complex"}))
_rows("elu celu", P, "NAME(Tensor input, float alpha=1.0, bool inplace=False)", forms=_F,
      promote=Promote.FLOAT_ONLY)
_rows("leaky_relu", P, "leaky_relu(Tensor input, float negative_slope=0.01, bool inplace=False)", forms=_F,
      promote=Promote.FLOAT_ONLY)
_rows("softplus", P, "softplus(Tensor input, float beta=1.0, float threshold=20.0)", forms=_F,
      promote=Promote.FLOAT_ONLY)
_rows("hardtanh", P, "hardtanh(Tensor input, float min_val=-1.0, float max_val=1.0, bool inplace=False)", forms=_F,
      promote=Promote.FLOAT_ONLY)
_rows("dropout", P, "dropout(Tensor input, float p=0.5, bool training=True, bool inplace=False)", forms=_F,
      promote=Promote.FLOAT_ONLY, tags=frozenset({"random"}), batch=Batch.NONE)
_rows("threshold", P, "threshold(Tensor input, float threshold, float value, bool inplace=False)", forms=_F,
      tags=frozenset({"no_bool", "no_complex"}))
_rows("hardshrink softshrink", P, "NAME(Tensor input, float lambd=0.5)", forms=_F, promote=Promote.FLOAT_ONLY)
_rows("rrelu", P, "rrelu(Tensor input, float lower=0.125, float upper=0.3333333333333333, bool training=False, "
      "bool inplace=False)", forms=_F, promote=Promote.FLOAT_ONLY, tags=frozenset({"random"}), batch=Batch.NONE)

# -- reductions -----------------------------------------------------------------------------------------------
_rows("sum", R, "sum(Tensor input, int[]? dim=None, bool keepdim=False, *, dtype? dtype=None)",
      promote=Promote.SUM, batch=Batch.DIM)
_rows("nansum", R, "nansum(Tensor input, int[]? dim=None, bool keepdim=False, *, dtype? dtype=None)",
      promote=Promote.SUM, batch=Batch.DIM, tags=frozenset({"no_complex"}))
_rows("prod", R, "prod(Tensor input, int? dim=None, bool keepdim=False, *, dtype? dtype=None)",
      promote=Promote.SUM, batch=Batch.DIM)
_rows("mean", R, "mean(Tensor input, int[]? dim=None, bool keepdim=False, *, dtype? dtype=None)",
      promote=Promote.FLOAT_ONLY, batch=Batch.DIM)
_rows("nanmean", R, "nanmean(Tensor input, int[]? dim=None, bool keepdim=False, *, dtype? dtype=None)",
      promote=Promote.FLOAT_ONLY, batch=Batch.DIM, tags=frozenset({"float_input", "no_complex"}))
_rows("std var", R, "NAME(Tensor input, int[]? dim=None, bool unbiased=True, bool keepdim=False, *, "
      "Scalar? correction=None)", promote=Promote.FLOAT_ONLY, batch=Batch.DIM)
_rows("logsumexp", R, "logsumexp(Tensor input, int[] dim, bool keepdim=False)", promote=Promote.INT_TO_FLOAT,
      batch=Batch.DIM)
_rows("amax amin", R, "NAME(Tensor input, int[] dim=(), bool keepdim=False)", promote=Promote.KEEP,
      tags=frozenset({"needs_elements", "no_complex"}), batch=Batch.DIM)
_rows("max min", R, "NAME(Tensor input, int? dim=None, bool keepdim=False)", promote=Promote.KEEP,
      tags=frozenset({"needs_elements", "no_complex", "values_indices"}), batch=Batch.DIM)
_rows("median nanmedian", R, "NAME(Tensor input, int? dim=None, bool keepdim=False)", promote=Promote.KEEP,
      tags=frozenset({"needs_elements", "no_complex", "no_bool", "values_indices"}), batch=Batch.DIM)
_rows("mode", R, "mode(Tensor input, int dim=-1, bool keepdim=False)", promote=Promote.KEEP,
      tags=frozenset({"needs_elements", "no_complex", "values_indices"}), batch=Batch.DIM)
_rows("argmax argmin", R, "NAME(Tensor input, int? dim=None, bool keepdim=False)", promote=Promote.INDEX,
      tags=frozenset({"needs_elements", "no_complex", "no_bool"}), batch=Batch.DIM)
_rows("all any", R, "NAME(Tensor input, int[]? dim=None, bool keepdim=False)", promote=Promote.ANY_ALL,
      batch=Batch.DIM)
_rows("count_nonzero", R, "count_nonzero(Tensor input, int[]? dim=None)", promote=Promote.INDEX, batch=Batch.DIM)
_rows("norm", R, "norm(Tensor input, Scalar|str? p='fro', int[]? dim=None, bool keepdim=False, dtype? dtype=None)",
      promote=Promote.FLOAT_ONLY, batch=Batch.DIM, tags=frozenset({"float_input"}))
_rows("cosine_similarity", R, "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08)",
      forms=frozenset({"function", "functional"}), promote=Promote.FLOAT_ONLY, batch=Batch.DIM,
      tags=frozenset({"promote_types"}))
_rows("pairwise_distance", R, "pairwise_distance(Tensor x1, Tensor x2, float p=2.0, float eps=1e-06, "
      "bool keepdim=False)", forms=frozenset({"function", "functional"}), promote=Promote.FLOAT_ONLY,
      batch=Batch.SPECIAL, tags=frozenset({"no_bool"}))

# -- scans: along a dim, same shape -------------------------------------------------------------------------
_rows("softmax log_softmax", S, "NAME(Tensor input, int dim, *, dtype? dtype=None)", promote=Promote.FLOAT_ONLY,
      forms=frozenset({"function", "method"}), batch=Batch.DIM, tags=frozenset({"saves_output"}))
_rows("cumsum cumprod", S, "NAME(Tensor input, int dim, *, dtype? dtype=None)", promote=Promote.SUM,
      forms=_TENSOR_METHOD, batch=Batch.DIM)
_rows("logcumsumexp", S, "logcumsumexp(Tensor input, int dim)", promote=Promote.FLOAT_ONLY, batch=Batch.DIM)
_rows("cummax cummin", S, "NAME(Tensor input, int dim)", promote=Promote.KEEP,
      tags=frozenset({"values_indices", "no_complex"}), batch=Batch.DIM)
_rows("sort", S, "sort(Tensor input, int dim=-1, bool descending=False)", promote=Promote.KEEP,
      tags=frozenset({"values_indices", "no_complex"}), batch=Batch.DIM)
_rows("argsort", S, "argsort(Tensor input, int dim=-1, bool descending=False)", promote=Promote.INDEX,
      tags=frozenset({"no_complex"}), batch=Batch.DIM)
_rows("flip", S, "flip(Tensor input, int[] dims)", promote=Promote.KEEP, batch=Batch.DIM, dims=("dims",))
_rows("roll", S, "roll(Tensor input, int[] shifts, int[]? dims=None)", promote=Promote.KEEP, batch=Batch.SPECIAL,
      dims=("dims",), tags=frozenset({"no_scalar_dim"}))
_rows("tril triu", S, "NAME(Tensor input, int diagonal=0)", promote=Promote.KEEP, forms=_TENSOR_METHOD,
      tags=frozenset({"rank2"}), batch=Batch.POINTWISE)
_rows("normalize", S, "normalize(Tensor input, float p=2.0, int dim=1, float eps=1e-12)", forms=_F,
      promote=Promote.FLOAT_ONLY, batch=Batch.DIM)
_F_SOFTMAX = "NAME(Tensor input, int? dim=None, int _stacklevel=3, dtype? dtype=None)"
_row(Op("softmin", S, Signature.parse(_F_SOFTMAX.replace("NAME", "softmin")), promote=Promote.FLOAT_ONLY,
        forms=frozenset({"functional"}), batch=Batch.DIM, tags=frozenset({"no_bool"})))  # it negates its input
for _name in ("softmax", "log_softmax"):
    _row(Op(_name, S, Signature.parse(_F_SOFTMAX.replace("NAME", _name)), promote=Promote.FLOAT_ONLY,
            forms=frozenset({"functional"}), batch=Batch.DIM, tags=frozenset({"saves_output"})))

# -- irregular ops: hand-written shape functions (ops_tensor), rows for their signature and batching ----------------
_METHOD = frozenset({"method"})
for _sig, _batch, _dims in (
        ("view(Tensor input, int[] size)", Batch.SIZES, ()),
        ("reshape(Tensor input, int[] shape)", Batch.SIZES, ()),
        ("expand(Tensor input, int[] size)", Batch.SIZES, ()),
        ("transpose(Tensor input, int dim0, int dim1)", Batch.DIM, ("dim0", "dim1")),
        ("swapaxes(Tensor input, int axis0, int axis1)", Batch.DIM, ("axis0", "axis1")),
        ("swapdims(Tensor input, int dim0, int dim1)", Batch.DIM, ("dim0", "dim1")),
        ("permute(Tensor input, int[] dims)", Batch.SPECIAL, ()),
        ("unsqueeze(Tensor input, int dim)", Batch.DIM, ("dim",)),
        ("squeeze(Tensor input, int[]? dim=None)", Batch.SPECIAL, ()),
        ("flatten(Tensor input, int start_dim=0, int end_dim=-1)", Batch.DIM, ("start_dim", "end_dim")),
        ("t(Tensor input)", Batch.SPECIAL, ()),
        ("contiguous(Tensor input)", Batch.POINTWISE, ()),
        ("clone(Tensor input, *, any memory_format=None)", Batch.POINTWISE, ()),
        ("detach(Tensor input)", Batch.POINTWISE, ()),
        ("dot(Tensor input, Tensor tensor)", Batch.SPECIAL, ()),
        ("mv(Tensor input, Tensor vec)", Batch.SPECIAL, ()),
        ("mm(Tensor input, Tensor mat2)", Batch.SPECIAL, ()),
        ("bmm(Tensor input, Tensor mat2)", Batch.SPECIAL, ()),
        ("matmul(Tensor input, Tensor other)", Batch.SPECIAL, ()),
        ("outer(Tensor input, Tensor vec2)", Batch.SPECIAL, ()),
        ("diagonal(Tensor input, int offset=0, int dim1=0, int dim2=1)", Batch.DIM, ("dim1", "dim2")),
        ("split(Tensor input, int|int[] split_size_or_sections, int dim=0)", Batch.DIM, ("dim",)),
        ("chunk(Tensor input, int chunks, int dim=0)", Batch.DIM, ("dim",)),
        ("unbind(Tensor input, int dim=0)", Batch.DIM, ("dim",)),
        ("repeat(Tensor input, int[] repeats)", Batch.NONE, ()),
        ("topk(Tensor input, int k, int dim=-1, bool largest=True, bool sorted=True)", Batch.DIM, ("dim",)),
):
    _signature = Signature.parse(_sig)
    _forms = _METHOD if _signature.name in ("view", "expand", "contiguous", "repeat") else \
        frozenset({"function", "method"})
    _row(Op(_signature.name, C, _signature, promote=Promote.KEEP, forms=_forms, batch=_batch, dims=_dims))
for _name in ("float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char"):
    _row(Op(_name, C, Signature.parse(f"{_name}(Tensor input)"), forms=_METHOD, batch=Batch.POINTWISE))
_row(Op("to", C, Signature.parse("to(Tensor input, any a=None, any b=None, *, any dtype=None, any device=None, "
                                 "bool non_blocking=False, bool copy=False)"), forms=_METHOD, batch=Batch.POINTWISE))
_row(Op("einsum", C, Signature.parse("einsum(str equation, Tensor operands)"), forms=frozenset({"function"}),
        batch=Batch.SPECIAL))
for _sig in ("cat(Tensor tensors, int dim=0)", "stack(Tensor tensors, int dim=0)"):
    _row(Op(Signature.parse(_sig).name, C, Signature.parse(_sig), forms=frozenset({"function"}), batch=Batch.DIM))
_alias("concat", "cat", ("function",))
_alias("concatenate", "cat", ("function",))


# -- lookups -------------------------------------------------------------------------------------------------------
def method(name: str) -> Optional[Op]:
    """The row of ``t.name(...)``; an in-place ``t.name_(...)`` is found under its out-of-place name."""
    return _BY_FORM["method"].get(name)


def function(name: str) -> Optional[Op]:
    """The row of ``torch.name(...)``."""
    return _BY_FORM["function"].get(name)


def functional(name: str) -> Optional[Op]:
    """The row of ``torch.nn.functional.name(...)``; F re-exports many torch functions (F.relu, F.tanh)."""
    return _BY_FORM["functional"].get(name) or (_BY_FORM["function"].get(name)
                                                if name in _F_FROM_TORCH else None)


def inplace(name: str) -> Optional[Op]:
    """The out-of-place row of an in-place method ``t.name(...)`` (``add_`` -> ``add``)."""
    if not name.endswith("_") or name.endswith("__"):
        return None
    return _BY_FORM["inplace"].get(name[:-1])


# torch.nn.functional names that are the torch function itself.
_F_FROM_TORCH = frozenset({"tanh", "sigmoid", "relu"})


def names_with(tag: str, form: Optional[str] = "method") -> frozenset:
    """The names, in one form (None: any form), of the ops with ``tag``."""
    forms = [form] if form is not None else list(_BY_FORM)
    return frozenset(name for f in forms for name, op in _BY_FORM[f].items() if op.has(tag))


def names_of(family: Family, form: str = "method") -> frozenset:
    return frozenset(name for name, op in _BY_FORM[form].items() if op.family is family)


def element_wise_methods() -> frozenset:
    """Methods that broadcast their tensor operands (for the broadcasting rule and hover)."""
    return frozenset(name for name, op in _BY_FORM["method"].items()
                     if op.family is Family.POINTWISE and len(op.inputs) >= 2)


def with_inplace_twin() -> frozenset:
    """Out-of-place methods that have an in-place ``name_`` twin."""
    return frozenset(_BY_FORM["inplace"])


__all__ = ["Batch", "Family", "Op", "Param", "Promote", "REQUIRED", "ROWS", "Signature", "Unbound", "bind",
           "element_wise_methods", "function", "functional", "inplace", "method", "names_of", "names_with",
           "with_inplace_twin"]
