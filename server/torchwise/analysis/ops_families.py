"""The facts of a call of a table op: one transfer function per family of ``optable``.

A row says little (its family, its promotion kind, its signature and tags); everything else
comes from here: broadcasting, promotion, the reduced or kept shape, the errors PyTorch raises
(``None``: the engine claims nothing where PyTorch raises, a rule reports it), grad and layout.
"""

from __future__ import annotations

from typing import Optional

from torchwise.analysis import dtypes, optable, shapes
from torchwise.analysis.dtypes import DType, DTypeError
from torchwise.analysis.optable import REQUIRED, Family, Op, Promote, Unbound
from torchwise.analysis.tensors import (
    _CLASH, Call, broadcast_values, constant, derived, elementwise, elementwise_dtype, int_of, output_strides,
    result_grad,
)
from torchwise.analysis.values import VALUES_INDICES, DtypeValue, ScalarValue, SeqValue, SymbolicValue, TensorValue


def apply(inf, op: Op, call: Call, receiver=None):
    """The value of ``op`` called with ``call``'s arguments (``receiver``: a method's tensor)."""
    if call.starred:
        return None
    try:
        bound = optable.bind(op.signature, call.args, call.kwargs, receiver, missing=_default)
    except Unbound:
        return None  # PyTorch raises a TypeError
    for param in op.signature.params:
        given = bound.get(param.name)
        if param.type == "Tensor" and given is not None and not isinstance(given, (TensorValue, SymbolicValue)):
            return None  # a number where a tensor is required raises a TypeError
    try:
        result = _FAMILIES[op.family](inf, op, bound)
    except DTypeError:
        return None  # the operands do not promote: PyTorch raises
    if op.has("saves_output") and isinstance(result, TensorValue) and result.requires_grad:
        return result.with_(saved_by=op.name)
    return result


def _default(param: optable.Param):
    if param.default is REQUIRED:
        raise Unbound(param.name)
    if isinstance(param.default, tuple):
        return SeqValue("tuple", tuple(constant(v) for v in param.default))
    return constant(param.default)


def _none(value) -> bool:
    return isinstance(value, ScalarValue) and value.kind == "none"


def _given_dtype(bound: dict):
    """dtype= as given: a DType, None when not given, "?" when given but unknown."""
    value = bound.get("dtype")
    if value is None:
        return "?" if "dtype" in bound else None
    if _none(value):
        return None
    return value.dtype if isinstance(value, DtypeValue) and value.dtype is not None else "?"


# -- dtypes ---------------------------------------------------------------------------------------------------
def _unary_dtype(inf, op: Op, dtype: Optional[DType]):
    """(result dtype, why) of a one-input op, or ("raises", None); dtype None: unknown."""
    if dtype is None:
        return None, None
    promote = op.promote
    if dtype == DType.bool and op.has("no_bool") or dtypes.is_complex(dtype) and op.has("no_complex"):
        return "raises", None
    if promote is Promote.INT_TO_FLOAT:
        if dtypes.is_floating(dtype) or dtypes.is_complex(dtype):
            return dtype, "keep"
        if inf.default_float is None:
            return None, None
        return inf.default_float, f"{op.name}() of {dtype.short} gives the default float dtype"
    if promote is Promote.FLOAT_ONLY:
        return (dtype, "keep") if dtypes.is_floating(dtype) else ("raises", None)
    if promote is Promote.COMPLEX_TO_FLOAT:
        real = {DType.complex64: DType.float32, DType.complex128: DType.float64, DType.complex32: DType.float16}
        return (real[dtype], None) if dtype in real else (dtype, "keep")
    if promote is Promote.BOOL_TO_LONG:
        return (DType.int64, None) if dtype == DType.bool else (dtype, "keep")
    if promote is Promote.ALWAYS_BOOL:
        return DType.bool, None
    if promote is Promote.SUM:
        if dtypes.is_integral(dtype, include_bool=True):
            return DType.int64, f"{op.name} of integers accumulates in int64"
        return dtype, "keep"
    if promote is Promote.INDEX:
        return DType.int64, "indices are int64"
    if promote is Promote.ANY_ALL:
        return (DType.uint8 if dtype == DType.uint8 else DType.bool), None
    return dtype, "keep"  # DEFAULT, KEEP


def _result_dtype(inf, op: Op, bound: dict, dtype: Optional[DType], grad: Optional[bool] = False):
    """A reduction's or scan's dtype, with dtype= overriding the promotion where the op takes it."""
    given = _given_dtype(bound)
    if given == "?":
        return None, None
    if given is not None and dtype is not None and (
            dtype == DType.bool and op.has("no_bool") or dtypes.is_complex(dtype) and op.has("no_complex")):
        return "raises", None
    if given is not None and dtype is not None and dtypes.is_complex(dtype) and not dtypes.is_complex(given):
        return "raises", None  # a complex input with a real dtype=: the ops disagree on whether that raises
    if given is not None:
        if op.promote is Promote.FLOAT_ONLY and not (dtypes.is_floating(given) or dtypes.is_complex(given)):
            return "raises", None
        if op.has("float_input") and (dtype is None or not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype))):
            return ("raises" if dtype is not None else None), None
        if not (dtypes.is_floating(given) or dtypes.is_complex(given)) and grad is not False:
            # "Autograd not support dtype": an integer result of a tensor that requires grad raises
            return ("raises" if grad and inf.grad_enabled is True else None), None
        return given, f"dtype={given.torch_name} given"
    return _unary_dtype(inf, op, dtype)


def _made(inf, op: Op, base: TensorValue, dtype, why, shape="keep", others=()):
    if dtype == "raises":
        return None
    return derived(inf, base, *others, dtype=dtype, shape=shape, why=base.why if why == "keep" else why)


# -- families -------------------------------------------------------------------------------------------------
def pointwise(inf, op: Op, bound: dict):
    first = bound.get(op.inputs[0])
    kernel = op.kernel
    if kernel is None:  # one tensor input
        if not isinstance(first, TensorValue):
            return None
        dtype, why = _unary_dtype(inf, op, first.dtype)
        if op.has("rank2") and first.shape is not None and len(first.shape) < 2:
            return None  # tril/triu of fewer than two dims raise
        return _made(inf, op, first, dtype, why)
    return _KERNELS[kernel](inf, op, bound)


def _binary(inf, op: Op, bound: dict):
    names = op.inputs
    values = [bound.get(names[0]), bound.get(names[1])]
    if not isinstance(values[0], TensorValue):
        return None
    kernel = op.kernel
    if kernel == "div" and op.name in ("div", "divide", "true_divide"):
        mode = bound.get("rounding_mode")
        if mode is None:
            return None
        if not _none(mode):
            if not (isinstance(mode, ScalarValue) and mode.value in ("floor", "trunc")):
                return None
            kernel = "floordiv"
    alpha = bound.get("alpha")
    float_alpha = False
    if alpha is not None and not (isinstance(alpha, ScalarValue) and alpha.value == 1):
        if not isinstance(alpha, ScalarValue) or alpha.kind not in ("bool", "int", "float"):
            return None
        float_alpha = alpha.kind == "float"
    result_dtype = DType.bool if op.promote is Promote.ALWAYS_BOOL else None
    result = elementwise(inf, values, kernel if kernel != "logical" else "compare", result_dtype=result_dtype)
    if result is None:
        return None
    if op.name == "hypot" and not all(isinstance(v, TensorValue) and v.dtype is not None
                                      and dtypes.is_floating(v.dtype) for v in values):
        return None  # hypot has floating kernels only
    if op.has("integral") and result.dtype is not None and not dtypes.is_integral(result.dtype, include_bool=True):
        return None  # bitwise ops of floats raise
    if float_alpha and (result.dtype is None or dtypes.is_integral(result.dtype, include_bool=True)):
        return None  # "For integral input tensors, argument alpha must not be a floating point number"
    if op.has("no_complex") and (result.dtype is None or dtypes.is_complex(result.dtype)):
        return None  # no complex kernel (or the dtype, hence the kernel, is unknown)
    return result


def _lerp(inf, op: Op, bound: dict):
    start, end, weight = bound.get("input"), bound.get("end"), bound.get("weight")
    if not (isinstance(start, TensorValue) and isinstance(end, TensorValue)):
        return None
    result = elementwise(inf, [start, end, weight], "add")
    if result is None or result.dtype is None or not dtypes.is_floating(result.dtype) \
            or start.dtype != end.dtype:
        return None  # lerp needs floating inputs of one dtype
    return result


def _clamp(inf, op: Op, bound: dict):
    x = bound.get("input")
    if not isinstance(x, TensorValue):
        return None
    bounds = [bound.get(name) for name in ("min", "max") if name in bound]
    given = [b for b in bounds if not _none(b)]
    if not given or any(b is None for b in given):
        return None  # clamp() with neither bound raises; an unknown bound may be anything
    if x.dtype == DType.bool or (x.dtype is not None and dtypes.is_complex(x.dtype)):
        return None
    # clamp promotes with its bounds since torch 1.13: clamp(int_tensor, min=0.5) is float.
    return elementwise(inf, [x, *given], "max")


def _where(inf, op: Op, bound: dict):
    condition, a, b = bound.get("condition"), bound.get("input"), bound.get("other")
    if not isinstance(condition, TensorValue) or a is None or b is None:
        return None
    if condition.dtype is not None and condition.dtype not in (DType.bool, DType.uint8):
        return None  # where expects a bool condition
    result = elementwise(inf, [a, b], "add")
    if result is None:
        return None
    shape = None
    if condition.shape is not None and result.shape is not None:
        try:
            shape = shapes.broadcast(condition.shape, result.shape)
        except shapes.ShapeError:
            return None
    return result.with_(shape=shape, strides=output_strides(shape, condition, a, b))


def _masked_fill(inf, op: Op, bound: dict):
    x, mask, value = bound.get("input"), bound.get("mask"), bound.get("value")
    if not isinstance(x, TensorValue) or value is None or isinstance(value, SymbolicValue):
        return None
    if not isinstance(mask, TensorValue):
        # The mask only decides whether the call raises (a bool tensor broadcasting to the input's shape):
        # where it returns, the result is the input's shape and dtype.
        return derived(inf, x, *[v for v in (value,) if isinstance(v, TensorValue)])
    if mask.dtype is not None and mask.dtype != DType.bool:
        return None  # masked_fill only takes a bool mask
    if isinstance(value, TensorValue) and (value.shape is None or value.shape != ()):
        return None  # a tensor value must be 0-d
    if x.shape is None or mask.shape is None:
        return None
    try:
        shape = shapes.broadcast(x.shape, mask.shape)  # out of place, the input and the mask broadcast together
    except shapes.ShapeError:
        return None
    return derived(inf, x, *[v for v in (value,) if isinstance(v, TensorValue)], shape=shape)


_KERNELS = {"add": _binary, "sub": _binary, "mul": _binary, "div": _binary, "pow": _binary, "mod": _binary,
            "floordiv": _binary, "max": _binary, "and": _binary, "compare": _binary, "order": _binary,
            "logical": _binary, "lerp": _lerp, "clamp": _clamp, "where": _where, "masked_fill": _masked_fill}


def _dims(value, rank: Optional[int]):
    """A dim argument: None (every dim), a tuple of ints, or "?" (given but unknown)."""
    if value is None:
        return "?"
    if _none(value):
        return None
    single = int_of(value)
    if isinstance(single, int):
        return (single,)
    if isinstance(value, SeqValue) and value.items is not None:
        items = [int_of(v) for v in value.items]
        return tuple(items) if all(isinstance(i, int) for i in items) else "?"
    return "?"


def _flag(value) -> Optional[bool]:
    return value.value if isinstance(value, ScalarValue) and value.kind == "bool" else None


def reduction(inf, op: Op, bound: dict):
    inputs = [bound.get(name) for name in op.inputs]
    if not all(isinstance(t, TensorValue) for t in inputs):
        return None
    x = inputs[0]
    if op.name in ("max", "min") and not isinstance(bound.get("dim"), ScalarValue):
        # `x.max(y)`, `torch.max(x, y)` with a tensor: the element-wise maximum, not a reduction;
        # an unknown second argument may be either.
        return elementwise(inf, [x, bound["dim"]], "max") if isinstance(bound.get("dim"), TensorValue) else None
    shape = x.shape
    if len(inputs) > 1:  # cosine_similarity, pairwise_distance: the inputs broadcast first
        shape = broadcast_values(inf, inputs)
        if shape is _CLASH:
            return None
    dtype = x.dtype
    if len(inputs) > 1:
        if op.has("no_bool") and any(t.dtype == DType.bool for t in inputs):
            return None  # pairwise_distance subtracts: bools raise
        if op.has("promote_types"):  # cosine_similarity promotes the tensors' dtypes, 0-d or not
            known = [t.dtype for t in inputs]
            dtype = None if None in known else dtypes.promote_types(*known)
        else:
            dtype = elementwise_dtype(inf, inputs)[0]
    grad = result_grad(inf, *inputs)
    dtype, why = _result_dtype(inf, op, bound, dtype, grad)
    if dtype == "raises":
        return None
    if op.name == "norm" and dtype is not None and dtypes.is_complex(dtype):
        dtype = {DType.complex64: DType.float32, DType.complex128: DType.float64}.get(dtype)
    if op.name == "norm" and shape is not None and any(isinstance(d, int) and d == 0 for d in shape):
        p = bound.get("p")
        if not (isinstance(p, ScalarValue) and (p.value == "fro" or isinstance(p.value, (int, float))
                                                and not isinstance(p.value, bool) and p.value > 0)):
            return None  # a norm of order <= 0 (or unknown) of an empty tensor raises
    out_shape = _reduced_shape(op, bound, shape)
    if out_shape == "raises":
        return None
    base = x.with_(shape=shape) if len(inputs) > 1 else x
    value = derived(inf, base, *inputs[1:], dtype=dtype, shape=out_shape, why=x.why if why == "keep" else why)
    if op.has("values_indices") and (_dims(bound.get("dim"), None) is not None or op.name == "mode"):
        indices = derived(inf, base, dtype=DType.int64, shape=out_shape, why="indices are int64").with_(
            requires_grad=False, is_leaf=True)
        return SeqValue("tuple", (value, indices), fields=VALUES_INDICES)
    return value


def _reduced_shape(op: Op, bound: dict, shape):
    """The reduced shape, None when unknown, or "raises"."""
    if shape is None:
        return None
    if op.name == "pairwise_distance":
        keep = _flag(bound.get("keepdim"))
        dims, keepdim = ((-1,), keep) if keep is not None else ("?", None)
    else:
        dims = _dims(bound.get("dim"), len(shape)) if "dim" in bound else None
        keepdim = _flag(bound.get("keepdim")) if "keepdim" in bound else False
    if dims == "?" or keepdim is None:
        return None
    if dims == () and op.name in ("amax", "amin"):
        dims = None  # amax(dim=()) reduces every dim
    if op.has("needs_elements") and _reduces_empty(shape, dims):
        return "raises"
    try:
        return shapes.reduce(shape, dims if dims is None else list(dims), keepdim)
    except shapes.ShapeError:
        return "raises"


def _reduces_empty(shape, dims) -> bool:
    try:
        picked = range(len(shape)) if dims is None else [shapes.wrap_dim(d, len(shape)) for d in dims]
        return any(isinstance(shape[d], int) and shape[d] == 0 for d in picked)
    except (shapes.ShapeError, IndexError):
        return False


def scan(inf, op: Op, bound: dict):
    x = bound.get(op.inputs[0])
    if not isinstance(x, TensorValue):
        return None
    dim_names = [name for name in op.dims if name in bound]
    for name in dim_names:
        dims = _dims(bound[name], None)
        if dims is None and op.name in ("softmax", "log_softmax"):
            return None  # F.softmax without a dim picks one implicitly (deprecated): claim nothing
        if dims == "?":
            return None  # an unknown dim may be out of range
        if dims is not None and x.shape is not None:
            try:
                for d in dims:
                    shapes.wrap_dim(d, len(x.shape), scalar_as_1d=not op.has("no_scalar_dim"))
            except shapes.ShapeError:
                return None
    if op.has("rank2") and x.shape is not None and len(x.shape) < 2:
        return None
    dtype, why = _result_dtype(inf, op, bound, x.dtype, result_grad(inf, x))
    if dtype == "raises":
        return None
    value = derived(inf, x, dtype=dtype, why=x.why if why == "keep" else why)
    if op.has("values_indices"):
        indices = derived(inf, x, dtype=DType.int64, why="indices are int64").with_(requires_grad=False,
                                                                                    is_leaf=True)
        return SeqValue("tuple", (value, indices), fields=VALUES_INDICES)
    return value


_FAMILIES = {Family.POINTWISE: pointwise, Family.REDUCTION: reduction, Family.SCAN: scan}
