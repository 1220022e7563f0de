"""The numpy calls that feed tensors: creation with numpy's own default dtypes, and ``.astype``."""

from __future__ import annotations

from typing import Optional

from torchwise.analysis import dtypes, shapes
from torchwise.analysis.dtypes import DType
from torchwise.analysis.tensors import Call, dims_of, int_of, literal_data, numpy_dtype_arg
from torchwise.analysis.values import NdarrayValue, ScalarValue, SeqValue, TensorValue

_FLOAT64_WHY = "numpy's default float64"


def _dtype(call: Call, default: Optional[DType], why: Optional[str], position=None):
    if call.given(position, "dtype"):
        given = call.get(position, "dtype")
        if isinstance(given, ScalarValue) and given.kind == "none":
            return default, why
        dtype = numpy_dtype_arg(given)
        return dtype, (f"dtype={dtype.short} given" if dtype else None)
    return default, why


def _shape_arg(value) -> Optional[tuple]:
    if value is None:
        return None
    if isinstance(value, ScalarValue):
        dim = int_of(value)
        return (dim,) if dim is not None else None
    return dims_of([value])


def numpy_call(inf, name: str, call: Call):
    if name in ("array", "asarray", "ascontiguousarray"):
        data = call.get(0, "object")
        if isinstance(data, NdarrayValue):
            dtype, why = _dtype(call, data.dtype, data.why, 1)
            return NdarrayValue(dtype, data.shape, why)
        if isinstance(data, TensorValue):
            return None
        literal = literal_data(data)
        if literal is None:
            return None
        shape, kinds = literal
        default = dtypes.numpy_array_literal_dtype(kinds) if kinds else DType.float64
        why = {DType.float64: _FLOAT64_WHY, DType.int64: "numpy's default int64"}.get(default)
        dtype, why = _dtype(call, default, why, 1)
        return NdarrayValue(dtype, shape, why)
    if name in ("zeros", "ones", "empty"):
        dtype, why = _dtype(call, DType.float64, _FLOAT64_WHY, 1)
        return NdarrayValue(dtype, _shape_arg(call.get(0, "shape")), why)
    if name == "full":
        fill = call.get(1, "fill_value")
        default = None
        if isinstance(fill, ScalarValue) and fill.kind in ("bool", "int", "float"):
            default = dtypes.numpy_default_for(fill.kind)
        dtype, why = _dtype(call, default, None, 2)
        return NdarrayValue(dtype, _shape_arg(call.get(0, "shape")), why)
    if name in ("zeros_like", "ones_like", "empty_like"):
        source = call.get(0)
        if isinstance(source, NdarrayValue):
            dtype, why = _dtype(call, source.dtype, source.why, 1)
            return NdarrayValue(dtype, source.shape, why)
        return None
    if name in ("random.rand", "random.randn"):
        shape = dims_of(call.args) if call.args else ()
        return NdarrayValue(DType.float64, shape, _FLOAT64_WHY)
    if name in ("random.random", "random.random_sample", "random.uniform", "random.normal", "random.standard_normal"):
        size = call.get(None, "size") if name != "random.random" else call.get(0, "size")
        if name in ("random.uniform", "random.normal"):
            size = call.get(2, "size")
        shape = _shape_arg(size) if size is not None else ()
        return NdarrayValue(DType.float64, shape, _FLOAT64_WHY)
    if name == "random.randint":
        size = call.get(2, "size")
        dtype, why = _dtype(call, DType.int64, "numpy's default int64", 3)
        return NdarrayValue(dtype, _shape_arg(size) if size is not None else (), why)
    if name in ("arange",):
        numbers = [a for a in call.args]
        kinds = {n.kind for n in numbers if isinstance(n, ScalarValue)}
        if not numbers or len(kinds) != 1 or not kinds <= {"int", "float"}:
            return None
        default = DType.int64 if kinds == {"int"} else DType.float64
        dtype, why = _dtype(call, default, {DType.float64: _FLOAT64_WHY}.get(default, "numpy's default int64"))
        return NdarrayValue(dtype, None, why)
    if name == "linspace":
        steps = int_of(call.get(2, "num")) if call.given(2, "num") else 50
        dtype, why = _dtype(call, DType.float64, _FLOAT64_WHY)
        return NdarrayValue(dtype, (steps,) if steps is not None else None, why)
    if name == "eye":
        n = int_of(call.get(0, "N"))
        dtype, why = _dtype(call, DType.float64, _FLOAT64_WHY)
        return NdarrayValue(dtype, (n, n) if n is not None and not call.given(1, "M") else None, why)
    return None


def ndarray_method(inf, name: str, receiver: NdarrayValue, call: Call):
    if name == "astype":
        dtype = numpy_dtype_arg(call.get(0, "dtype"))
        return NdarrayValue(dtype, receiver.shape, f"converted with .astype({dtype.short})" if dtype else None)
    if name in ("copy",):
        return receiver
    if name == "reshape":
        requested = dims_of(call.args) if call.args else None
        if requested is None or receiver.shape is None:
            return NdarrayValue(receiver.dtype, None, receiver.why)
        try:
            return NdarrayValue(receiver.dtype, shapes.reshape(receiver.shape, requested), receiver.why)
        except shapes.ShapeError:
            return None
    if name in ("sum", "mean", "std", "var", "max", "min", "prod"):
        return _reduction(name, receiver, call)
    if name == "tolist":
        return SeqValue("list")
    return None


def _reduction(name: str, array: NdarrayValue, call: Call):
    """``a.mean(axis=0)``: an array; with no axis numpy returns a numpy scalar, which is neither."""
    axis = int_of(call.get(0, "axis")) if call.given(0, "axis") else None
    if axis is None or call.starred or set(call.kwargs) - {"axis", "keepdims"}:
        return None
    keepdims = call.kwargs.get("keepdims")
    keep = keepdims.value if isinstance(keepdims, ScalarValue) and keepdims.kind == "bool" else (
        False if keepdims is None else None)
    if keep is None:
        return None
    shape = None
    if array.shape is not None:
        try:
            shape = shapes.reduce(array.shape, axis, keep)
        except shapes.ShapeError:
            return None
    dtype = array.dtype
    if name in ("mean", "std", "var") and dtype is not None and not dtypes.is_floating(dtype):
        dtype = DType.float64  # numpy averages integers in float64
    return NdarrayValue(dtype, shape, array.why)
