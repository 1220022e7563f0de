"""Torch factories, tensor methods and ``torch.*`` functions: how each one reads its arguments."""

from __future__ import annotations

import math

from typing import Optional

from torchwise.analysis import dtypes, layout, shapes
from torchwise.analysis.dims import Sym, dim_eq, fmt_dim
from torchwise.analysis.dtypes import DType
from torchwise.analysis.legacy import LEGACY_CONSTRUCTORS
from torchwise.analysis.ops_einops import sublist_as_equation
from torchwise.analysis.tensors import (
    TENSOR_METHODS, TORCH_FUNCTIONS, Call, certainly_raises, combine_devices, derived, device_arg, dims_of, dtype_arg, elementwise,
    factory_dims, inplace_result, int_of, literal_data, make_tensor, matmul_values, normalize_device, same_device, size_of,
    size_value,
)
from torchwise.analysis.values import VALUES_INDICES, DtypeValue, NdarrayValue, ScalarValue, SeqValue, SymbolicValue, TensorValue


def shaped(fn, *args):
    """``fn(*args)`` of the shapes module, or None where the result is unknown or PyTorch raises."""
    try:
        return fn(*args)
    except shapes.ShapeError:
        return None


def _register(table: dict, *names):
    def wrap(fn):
        for name in names:
            table[name] = fn
        return fn
    return wrap


# -- common keyword arguments of factories -----------------------------------------------------------------------
def _requires_grad(call: Call) -> Optional[bool]:
    value = call.kwargs.get("requires_grad")
    if "requires_grad" not in call.kwargs:
        return False
    if isinstance(value, ScalarValue) and value.kind == "bool" and value.value is not None:
        return value.value
    return None


def _dtype(inf, call: Call, default: Optional[DType], why: Optional[str], position=None):
    """The dtype= argument (why: "dtype= given"), else the default and its reason."""
    if call.given(position, "dtype"):
        given = call.get(position, "dtype")
        if isinstance(given, ScalarValue) and given.kind == "none":
            return default, why
        dtype = dtype_arg(given)
        return dtype, (f"dtype={dtype.torch_name} given" if dtype else None)
    return default, why


def _device(inf, call: Call, default="default", position=None) -> Optional[str]:
    if call.given(position, "device"):
        given = call.get(position, "device")
        if isinstance(given, ScalarValue) and given.kind == "none":
            return inf.default_device
        return device_arg(given)
    return inf.default_device if default == "default" else default


def _float_default(inf):
    return inf.default_float, (inf.default_float_why if inf.default_float else None)


# -- factories ----------------------------------------------------------------------------------------------------
@_register(TORCH_FUNCTIONS, "torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn")
def _sized_factory(inf, call: Call):
    size = call.kwargs.get("size")
    shape = factory_dims([size]) if size is not None else (factory_dims(call.args) if not call.starred else None)
    dtype, why = _dtype(inf, call, *_float_default(inf))
    if _callee(call) in ("rand", "randn") and dtype is not None and not (dtypes.is_floating(dtype)
                                                                        or dtypes.is_complex(dtype)):
        return None  # random floats have no integer kernels
    return make_tensor(inf, dtype, shape, _device(inf, call), _requires_grad(call), why, "new memory")


def _callee(call: Call) -> str:
    func = call.node.func
    return getattr(func, "attr", None) or getattr(func, "id", "")


@_register(TORCH_FUNCTIONS, "torch.full")
def _full(inf, call: Call):
    shape = factory_dims([call.get(0, "size")]) if call.given(0, "size") else None
    fill = call.get(1, "fill_value")
    default, why = None, None
    if isinstance(fill, ScalarValue) and fill.kind in ("bool", "int", "float", "complex"):
        if fill.kind == "float":
            default, why = _float_default(inf)
        else:
            default = dtypes.python_scalar_dtype(fill.kind, inf.default_float or DType.float32)
            why = f"inferred from the Python {fill.kind} fill value"
    dtype, why = _dtype(inf, call, default, why)
    return make_tensor(inf, dtype, shape, _device(inf, call), _requires_grad(call), why, "new memory")


@_register(TORCH_FUNCTIONS, "torch.randint")
def _randint(inf, call: Call):
    # randint(high, size) or randint(low, high, size)
    size = call.kwargs.get("size")
    if size is None:
        positional = [a for a in call.args]
        size = positional[-1] if len(positional) in (2, 3) else None
    shape = factory_dims([size]) if size is not None else None
    dtype, why = _dtype(inf, call, DType.int64, "randint makes int64 unless dtype= says otherwise")
    return make_tensor(inf, dtype, shape, _device(inf, call), _requires_grad(call), why, "new memory")


@_register(TORCH_FUNCTIONS, "torch.cdist")
def _cdist(inf, call: Call):
    # cdist(x1 (P, M), x2 (R, M), p=2.0): a new (P, R) tensor of x1's float dtype; both float32 or both float64
    # (mixed raises, half has no kernel), one device, the same number of columns
    if call.starred or not 2 <= len(call.args) <= 3 or set(call.kwargs) - {"p"}:
        return None
    x1, x2 = call.get(0, "x1"), call.get(1, "x2")
    if not (isinstance(x1, TensorValue) and isinstance(x2, TensorValue) and x1.shape is not None
            and x2.shape is not None and len(x1.shape) == len(x2.shape) == 2):
        return None
    if x1.dtype not in (DType.float32, DType.float64) or x2.dtype is not x1.dtype:
        return None
    if x1.device is None or x1.device != x2.device or dim_eq(x1.shape[1], x2.shape[1]) is not True:
        return None
    shape = (x1.shape[0], x2.shape[0])
    return derived(inf, x1, x2, shape=shape, strides=layout.contiguous_strides(shape),
                   why="cdist keeps its inputs' dtype")


@_register(TORCH_FUNCTIONS, "torch.randperm")
def _randperm(inf, call: Call):
    # randperm(n): the ints 0..n-1 shuffled, int64 unless dtype= says otherwise
    if call.starred or len(call.args) != 1 or not call.given(0, "n"):
        return None
    n = call.get(0, "n")
    if isinstance(n, SeqValue) or isinstance(n, ScalarValue) and (
            n.kind != "int" or n.value is None or type(n.value) is int and n.value < 0):
        return None  # randperm takes one int >= 0, never a shape
    shape = factory_dims([n])
    dtype, why = _dtype(inf, call, DType.int64, "randperm makes int64 unless dtype= says otherwise")
    return make_tensor(inf, dtype, shape, _device(inf, call), _requires_grad(call), why, "new memory")


@_register(TORCH_FUNCTIONS, "torch.arange")
def _arange(inf, call: Call):
    numbers = [call.get(i) for i in range(min(len(call.args), 3))]
    for name in ("start", "end", "step"):
        if name in call.kwargs:
            numbers.append(call.kwargs[name])
    # a value known by name: an int, or a float (unless it is used as a size somewhere: an int)
    symbolic = any(isinstance(n, SymbolicValue) and not n.is_int for n in numbers)
    numbers = [ScalarValue("int", n.dim) if isinstance(n, SymbolicValue) else n for n in numbers]
    kinds = {n.kind for n in numbers if isinstance(n, ScalarValue)}
    if not numbers or len(kinds) != 1 and kinds - {"int", "float"} or any(not isinstance(n, ScalarValue)
                                                                            for n in numbers):
        return None
    if symbolic and kinds <= {"int"}:
        default, why = None, None  # int64 if the named size is an int, the default float if it is a float
    elif kinds <= {"int"}:
        default, why = DType.int64, "arange of Python ints gives int64"
    else:
        default, why = _float_default(inf)
    dtype, why = _dtype(inf, call, default, why)
    length = None
    if not call.kwargs.keys() & {"start", "end", "step"}:
        values = [n.value for n in numbers]
        if all(type(v) in (int, float) for v in values):
            start, end, step = (values if len(values) == 3 else [*values, 1] if len(values) == 2
                                else [0, values[0], 1])
            if step == 0 or (end - start) * step < 0:
                return None  # upper bound and lower bound inconsistent with step sign
            length = max(0, math.ceil((end - start) / step))  # PyTorch's size, computed in double
        elif len(values) == 1 and kinds == {"int"} and values[0] is not None:
            length = values[0]  # a symbolic size
        elif len(values) in (2, 3) and kinds == {"int"} and values[0] == 0 and (len(values) == 2 or values[2] == 1) \
                and values[1] is not None:
            length = values[1]  # arange(0, t): t sizes
    shape = (length if length is not None else Sym.fresh("n"),)
    return make_tensor(inf, dtype, shape, _device(inf, call), _requires_grad(call), why, "new memory")


@_register(TORCH_FUNCTIONS, "torch.linspace", "torch.logspace")
def _linspace(inf, call: Call):
    steps = int_of(call.get(2, "steps"))
    dtype, why = _dtype(inf, call, *_float_default(inf))
    if dtype == DType.bool:
        return None
    shape = (steps,) if steps is not None else None
    return make_tensor(inf, dtype, shape, _device(inf, call), _requires_grad(call), why, "new memory")


@_register(TORCH_FUNCTIONS, "torch.eye")
def _eye(inf, call: Call):
    n = int_of(call.get(0, "n"))
    m = int_of(call.get(1, "m")) if call.given(1, "m") else n
    dtype, why = _dtype(inf, call, *_float_default(inf))
    shape = (n, m) if n is not None and m is not None else None
    return make_tensor(inf, dtype, shape, _device(inf, call), _requires_grad(call), why, "new memory")


@_register(TORCH_FUNCTIONS, "torch.tensor")
def _tensor(inf, call: Call):
    data = call.get(0, "data")
    device = _device(inf, call)
    grad = _requires_grad(call)
    if isinstance(data, NdarrayValue):
        dtype, why = _dtype(inf, call, data.dtype, _from_ndarray_why(data))
        return make_tensor(inf, dtype, data.shape, device, grad, why, "copies the ndarray",
                           strides=_ndarray_strides(data))
    if isinstance(data, TensorValue):
        dtype, why = _dtype(inf, call, data.dtype, data.why)
        return make_tensor(inf, dtype, data.shape, device if call.given(None, "device") else data.device, grad,
                           why, "copies the tensor")
    literal = literal_data(data)
    if literal is None:
        return _tensor_of_scalars(inf, call, data, device, grad)
    shape, kinds = literal
    default = dtypes.torch_tensor_literal_dtype(kinds, inf.default_float or DType.float32) if kinds else \
        inf.default_float
    if inf.default_float is None and kinds & {"float", "complex"} or not kinds and inf.default_float is None:
        default = None
    dtype, why = _dtype(inf, call, default, _literal_why(kinds, default, inf))
    return make_tensor(inf, dtype, shape, device, grad, why, "copies the data")


def _tensor_of_scalars(inf, call: Call, data, device, grad):
    """``torch.tensor([loss_a, loss_b])`` of 0-d tensors: their values copied (the graph is cut, TW106), in the
    dtype they promote to."""
    items = data.items if isinstance(data, SeqValue) and data.kind in ("list", "tuple") else None
    if not items or not all(isinstance(t, TensorValue) and t.shape == () and t.dtype is not None for t in items):
        return None
    dtype = items[0].dtype
    for item in items[1:]:
        dtype = dtypes.promote_types(dtype, item.dtype)
    dtype, why = _dtype(inf, call, dtype, "promoted from the elements' dtypes")
    return make_tensor(inf, dtype, (len(items),), device, grad, why, "copies the values")


def _literal_why(kinds, dtype, inf) -> Optional[str]:
    if dtype is None:
        return None
    if not kinds:
        return "an empty list gets the default dtype"
    widest = max(kinds, key=["bool", "int", "float", "complex"].index)
    if widest == "bool":
        return "Python bools infer bool"
    if widest == "int":
        return "Python ints infer int64"
    if widest == "float":
        return f"Python floats infer the default dtype {dtype.short}" + _default_note(inf)
    return f"Python complex numbers infer {dtype.short}"


def _default_note(inf) -> str:
    why = inf.default_float_why or ""
    return f" ({why})" if "set_default_dtype" in why else ""


def _from_ndarray_why(array: NdarrayValue) -> Optional[str]:
    if array.dtype is None:
        return None
    note = f"inherits {array.dtype.short} from the ndarray"
    if array.why:
        note += f" ({array.why})"
    return note


@_register(TORCH_FUNCTIONS, "torch.as_tensor", "torch.asarray")
def _as_tensor(inf, call: Call):
    data = call.get(0, "data")
    if isinstance(data, NdarrayValue):
        dtype, why = _dtype(inf, call, data.dtype, _from_ndarray_why(data))
        device = _device(inf, call)
        shares = dtype == data.dtype and device == "cpu" and not call.given(None, "dtype")
        return make_tensor(inf, dtype, data.shape, device, False, why,
                           "shares memory with the ndarray" if shares else "copies the ndarray",
                           strides=_ndarray_strides(data))
    if isinstance(data, TensorValue):
        return data.with_(memory="returns the same tensor (no copy)")
    result = _tensor(inf, call)
    return result


@_register(TORCH_FUNCTIONS, "torch.from_numpy")
def _from_numpy(inf, call: Call):
    data = call.get(0)
    if not isinstance(data, NdarrayValue):
        return None
    return make_tensor(inf, data.dtype, data.shape, "cpu", False, _from_ndarray_why(data),
                       "shares memory with the ndarray", strides=_ndarray_strides(data))


def _ndarray_strides(array: NdarrayValue):
    """Row-major, except that an empty array's strides come out as zeros in PyTorch: unknown."""
    if array.shape is None or any(d == 0 for d in array.shape):
        return None
    return "contiguous"


def _like(inf, call: Call, fill_kind=None):
    source = call.get(0, "input")
    if not isinstance(source, TensorValue):
        return None
    dtype, why = _dtype(inf, call, source.dtype, source.why)
    device = _device(inf, call, default=source.device)
    if _callee(call) in ("rand_like", "randn_like") and dtype is not None and not dtypes.is_floating(dtype):
        return None
    # *_like keeps the input's layout (memory_format=torch.preserve_format).
    strides = layout.after_clone(source.shape, source.strides) if source.shape is not None else None
    return make_tensor(inf, dtype, source.shape, device, _requires_grad(call), why, "new memory", strides=strides)


for _name in ("zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like", "randint_like"):
    TORCH_FUNCTIONS[f"torch.{_name}"] = _like


def _new_factory(inf, receiver: TensorValue, call: Call):
    shape = factory_dims(call.args) if not call.starred and call.args else factory_dims([call.kwargs.get("size")]) \
        if "size" in call.kwargs else None
    dtype, why = _dtype(inf, call, receiver.dtype, receiver.why)
    return make_tensor(inf, dtype, shape, _device(inf, call, default=receiver.device), _requires_grad(call), why,
                       "new memory")


for _name in ("new_zeros", "new_ones", "new_empty"):
    TENSOR_METHODS[_name] = _new_factory


@_register(TENSOR_METHODS, "new_full")
def _new_full(inf, receiver, call: Call):
    shape = factory_dims([call.get(0, "size")])
    dtype, why = _dtype(inf, call, receiver.dtype, receiver.why)
    return make_tensor(inf, dtype, shape, _device(inf, call, default=receiver.device), _requires_grad(call), why)


@_register(TENSOR_METHODS, "new_tensor")
def _new_tensor(inf, receiver, call: Call):
    literal = literal_data(call.get(0, "data"))
    if literal is None:
        return None
    dtype, why = _dtype(inf, call, receiver.dtype, "new_tensor keeps the receiver's dtype")
    return make_tensor(inf, dtype, literal[0], _device(inf, call, default=receiver.device), _requires_grad(call),
                       why, "copies the data")


# -- conversions ---------------------------------------------------------------------------------------------------
@_register(TENSOR_METHODS, "to")
def _to(inf, receiver: TensorValue, call: Call):
    dtype, device = receiver.dtype, receiver.device
    why = receiver.why
    given = [(value, "either") for value in call.args] + \
        [(call.kwargs[name], name) for name in ("dtype", "device") if name in call.kwargs]
    for value, role in given:
        if value is None or isinstance(value, SymbolicValue):
            # given, but not known: `x.to(device)` of a parameter may move x anywhere (or cast it)
            dtype = None if role in ("either", "dtype") else dtype
            device = None if role in ("either", "device") else device
            why = None if dtype is None else why
            continue
        if isinstance(value, TensorValue):
            dtype, device, why = value.dtype, value.device, "converted with .to(other)"
            continue
        as_dtype = dtype_arg(value) if not (isinstance(value, ScalarValue) and value.kind == "str"
                                            and dtypes.parse_dtype_string(value.value) is None) else None
        if as_dtype is not None and not (isinstance(value, ScalarValue)):
            dtype, why = as_dtype, f"converted with .to({as_dtype.torch_name})"
            continue
        as_device = device_arg(value)
        if isinstance(value, (ScalarValue,)) or type(value).__name__ == "DeviceValue":
            device = as_device
            continue
        return None  # an argument we cannot read: the result could be anything
    if (call.starred or len(call.args) > 2) and not call.kwargs:
        return None
    same = dtype == receiver.dtype and device == receiver.device and dtype is not None and device is not None
    if same:
        return receiver  # .to() of what it already is returns the tensor itself
    if dtype is not None and not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype)):
        receiver = receiver.with_(requires_grad=False, is_leaf=True)  # integer tensors never require grad
    return receiver.with_(dtype=dtype, device=device, why=why, memory=None,
                          strides=layout.after_clone(receiver.shape, receiver.strides)
                          if receiver.shape is not None else None,
                          is_leaf=receiver.is_leaf if same else (None if receiver.requires_grad is None
                                                                   else not receiver.requires_grad))


def _cast(dtype: DType):
    def cast(inf, receiver: TensorValue, call: Call):
        if receiver.dtype == dtype:
            return receiver  # the same tensor
        converted = _copied(receiver)
        if not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype)):
            converted = converted.with_(requires_grad=False, is_leaf=True)  # integer tensors never require grad
        return converted.with_(dtype=dtype, why=f"converted with .{call.node.func.attr}()",
                               strides=None if receiver.dtype is None else converted.strides)
    return cast


for _method in ("float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char", "cfloat",
                "cdouble"):
    _target = dtypes.parse_cast_method(_method)
    if _target is not None:
        TENSOR_METHODS[_method] = _cast(_target)


def _copied(receiver: TensorValue) -> TensorValue:
    """A converted copy: computed from the input (not a leaf when it requires grad), laid out like it."""
    grad = receiver.requires_grad
    return receiver.with_(is_leaf=None if grad is None else not grad, memory=None,
                          strides=layout.after_clone(receiver.shape, receiver.strides)
                          if receiver.shape is not None else None)


@_register(TENSOR_METHODS, "cuda")
def _cuda(inf, receiver, call: Call):
    index = call.get(0, "device")
    device = "cuda"
    if isinstance(index, ScalarValue) and index.kind == "int" and isinstance(index.value, int):
        device = f"cuda:{index.value}"
    elif index is not None:
        device = device_arg(index)
    if same_device(receiver.device, device) is True:
        return receiver
    return _copied(receiver).with_(device=device)


@_register(TENSOR_METHODS, "cpu")
def _cpu(inf, receiver, call: Call):
    if receiver.device == "cpu":
        return receiver
    return _copied(receiver).with_(device="cpu")


@_register(TENSOR_METHODS, "type")
def _type(inf, receiver, call: Call):
    """``t.type(torch.float16)`` / ``t.type("torch.cuda.HalfTensor")``: a cast (and a move, for a cuda type name);
    ``t.type()`` is the type's name."""
    if not call.args and not call.kwargs:
        return ScalarValue("str")
    target = call.get(0, "dtype")
    device = None
    if isinstance(target, ScalarValue) and isinstance(target.value, str):
        legacy = LEGACY_CONSTRUCTORS.get(target.value)
        if legacy is None or legacy[0] is None:
            return None  # not a tensor type's name (PyTorch raises), or torch.Tensor
        dtype, device = dtypes.parse_torch_dtype(legacy[0]), legacy[1] or "cpu"  # a CPU type name moves to the CPU
    elif isinstance(target, DtypeValue):
        dtype = target.dtype
    else:
        return None
    if dtype is not None and device is None:
        return _cast(dtype)(inf, receiver, call)
    if dtype == receiver.dtype and device is not None and same_device(receiver.device, device) is True:
        return receiver  # already that type: the same tensor
    moved = _copied(receiver).with_(dtype=dtype, why="converted with .type()" if dtype is not None else None)
    return moved.with_(device=device) if device is not None else moved


@_register(TENSOR_METHODS, "type_as")
def _type_as(inf, receiver, call: Call):
    other = call.get(0)
    return receiver.with_(dtype=other.dtype, why="converted with .type_as(other)", memory=None) \
        if isinstance(other, TensorValue) else None


@_register(TENSOR_METHODS, "clone")
def _clone(inf, receiver, call: Call):
    if call.kwargs.get("memory_format") is not None:
        return derived(inf, receiver, strides=None)
    return derived(inf, receiver, strides=layout.after_clone(receiver.shape, receiver.strides)
                   if receiver.shape is not None else None)


@_register(TENSOR_METHODS, "detach")
def _detach(inf, receiver, call: Call):
    return receiver.with_(requires_grad=False, is_leaf=True, memory="shares memory with the original")


@_register(TENSOR_METHODS, "contiguous")
def _contiguous(inf, receiver, call: Call):
    strides = layout.after_contiguous(receiver.shape, receiver.strides) if receiver.shape is not None else None
    return receiver.with_(strides=strides, memory=None)


@_register(TENSOR_METHODS, "requires_grad_")
def _requires_grad_(inf, receiver, call: Call):
    flag = call.get(0, "requires_grad")
    value = True if flag is None else (flag.value if isinstance(flag, ScalarValue) and flag.kind == "bool" else None)
    return receiver.with_(requires_grad=value)


@_register(TENSOR_METHODS, "numpy")
def _numpy(inf, receiver, call: Call):
    return NdarrayValue(receiver.dtype, receiver.shape, "from a tensor")


@_register(TENSOR_METHODS, "item")
def _item(inf, receiver, call: Call):
    if receiver.dtype is None:
        return None
    category = dtypes.category(receiver.dtype).name
    kind = {"BOOL": "bool", "INTEGRAL": "int", "FLOATING": "float", "COMPLEX": "complex"}[category]
    return ScalarValue(kind)


@_register(TENSOR_METHODS, "tolist")
def _tolist(inf, receiver, call: Call):
    return SeqValue("list") if receiver.shape else None


@_register(TENSOR_METHODS, "size")
def _size(inf, receiver, call: Call):
    if not call.given(0, "dim"):
        return size_value(receiver.shape)
    dim = int_of(call.get(0, "dim"))
    if receiver.shape is None or not isinstance(dim, int):
        return ScalarValue("int")
    if not receiver.shape:
        return None  # a 0-d tensor has no dimension to ask about
    try:
        return ScalarValue("int", receiver.shape[shapes.wrap_dim(dim, len(receiver.shape))])
    except shapes.ShapeError:
        certainly_raises(inf)  # `x.size(2)` of a 2-d x
        return None


@_register(TENSOR_METHODS, "dim", "ndimension")
def _dim(inf, receiver, call: Call):
    return ScalarValue("int", receiver.rank)


@_register(TENSOR_METHODS, "numel", "nelement")
def _numel(inf, receiver, call: Call):
    return ScalarValue("int", shapes.numel(receiver.shape))


@_register(TENSOR_METHODS, "is_contiguous", "is_floating_point", "is_complex", "equal", "allclose")
def _python_bool(inf, receiver, call: Call):
    """Questions about a tensor answered with a Python bool (``equal``/``allclose`` of another tensor)."""
    others = call.args + list(call.kwargs.values())
    if call.starred or any(not isinstance(o, (TensorValue, ScalarValue)) for o in others):
        return None
    return ScalarValue("bool")


@_register(TENSOR_METHODS, "backward")
def _backward(inf, receiver, call: Call):
    return ScalarValue("none")  # (gradients land in the leaves' .grad; the call itself returns None)


# -- in place -----------------------------------------------------------------------------------------------------
def _inplace(inf, receiver, call: Call):
    """``t.fill_(x)``, ``t.normal_()``: written into ``t``: dtype, shape and device stay (or PyTorch raises).
    The in-place twins of the table's ops (``t.add_(x)``) are read the same way by the dispatch."""
    return inplace_result(inf, receiver, call.args)


for _name in ("copy", "normal", "uniform", "fill", "zero", "index_fill", "scatter", "index_add", "addmm", "addcmul",
              "addcdiv", "bernoulli", "random", "exponential", "masked_scatter", "index_copy", "put"):
    TENSOR_METHODS[_name + "_"] = _inplace


def _dim_argument(call: Call, position=0):
    """The dim= argument: None (all), an int, a tuple of ints; "?" when given but unknown."""
    if not call.given(position, "dim"):
        return None
    value = call.get(position, "dim")
    if isinstance(value, ScalarValue) and value.kind == "none":
        return None
    as_int = int_of(value)
    if isinstance(as_int, int):
        return as_int
    if isinstance(value, SeqValue) and value.items is not None:
        dims = [int_of(v) for v in value.items]
        if all(isinstance(d, int) for d in dims):
            return tuple(dims)
    return "?"



# -- matmul family -------------------------------------------------------------------------------------------------
def _matmul_method(kind):
    def method(inf, receiver, call: Call):
        return matmul_values(inf, receiver, call.get(0), kind)
    return method


for _kind in ("matmul", "mm", "bmm", "dot", "mv"):
    TENSOR_METHODS[_kind] = _matmul_method(_kind)
    TORCH_FUNCTIONS[f"torch.{_kind}"] = (lambda kind: lambda inf, call: matmul_values(
        inf, call.get(0), call.get(1), kind))(_kind)


@_register(TORCH_FUNCTIONS, "torch.einsum")
def _einsum(inf, call: Call):
    if isinstance(call.get(0), TensorValue):  # the sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2])
        call = sublist_as_equation(call)
        if call is None:
            return None
    equation = call.get(0)
    operands = call.args[1:]
    if len(operands) == 1 and isinstance(operands[0], SeqValue) and operands[0].items is not None:
        operands = list(operands[0].items)
    if not (isinstance(equation, ScalarValue) and isinstance(equation.value, str)) or call.starred or not operands \
            or not all(isinstance(o, TensorValue) for o in operands):
        return None
    shape = shaped(shapes.einsum, equation.value, [o.shape for o in operands])
    if shape is None:
        return None  # unknown, or PyTorch raises (a rule reports it)
    dtypes_seen = {o.dtype for o in operands}
    if len(dtypes_seen) > 1 or DType.bool in dtypes_seen:
        return None  # einsum does not promote, and has no bool products
    dtype = dtypes_seen.pop()
    if dtype is not None and not dtypes.is_floating(dtype):
        dtype = None  # integer einsums may sum into int64
    base = operands[0]
    # einsum may return a view of its input ('ij->ji' is a transpose): its layout is unknown.
    return derived(inf, base, *operands[1:], dtype=dtype, shape=shape, device=combine_devices(operands), strides=None)


# -- shape ops -----------------------------------------------------------------------------------------------------
def _resized(receiver: TensorValue, call: Call, shape_fn):
    """(the sizes the call asks for, the resulting shape) of view/reshape/expand/repeat, or None when
    either is unknown or PyTorch raises (a rule reports that)."""
    sizes = _sizes(call)
    if sizes is None or receiver.shape is None:
        return None
    shape = shaped(shape_fn, receiver.shape, sizes)
    return (sizes, shape) if shape is not None else None


def _sizes(call: Call) -> Optional[tuple]:
    if call.starred or call.kwargs.keys() - {"size", "shape"}:
        return None
    if call.kwargs:
        return dims_of([next(iter(call.kwargs.values()))])
    return dims_of(call.args) if call.args else None


def _with_layout(inf, receiver: TensorValue, shape, strides):
    return TensorValue(receiver.dtype, shape, receiver.device, strides, receiver.requires_grad,
                       None if receiver.requires_grad is None else not receiver.requires_grad, receiver.why,
                       "a view: shares memory with its input")


@_register(TENSOR_METHODS, "view")
def _view(inf, receiver, call: Call):
    if call.args and dtype_arg(call.args[0]) is not None and len(call.args) == 1:
        return None  # view(dtype) reinterprets bytes
    resized = _resized(receiver, call, shapes.reshape)
    if resized is None:
        return None
    requested, shape = resized
    strides = None
    if receiver.strides is not None:
        strides = layout.view_strides(receiver.shape, receiver.strides, shape)
        if strides is None:
            return None  # PyTorch raises: TW301 reports it
        if strides is layout.UNDECIDED:
            strides = None
    return _with_layout(inf, receiver, shape, strides)


@_register(TENSOR_METHODS, "reshape")
def _reshape(inf, receiver, call: Call):
    resized = _resized(receiver, call, shapes.reshape)
    if resized is None:
        return None
    requested, shape = resized
    strides = layout.reshape_strides(receiver.shape, receiver.strides, shape)
    viewable = layout.can_view(receiver.shape, receiver.strides, shape) if receiver.strides is not None else None
    memory = {True: "a view: shares memory with its input", False: "a copy (the input's layout cannot be viewed)"}
    return _with_layout(inf, receiver, shape, strides).with_(memory=memory.get(viewable))


def _layout_op(shape_fn, stride_fn):
    def op(inf, receiver, call: Call):
        if receiver.shape is None:
            return None
        args = [int_of(a) for a in call.args]
        if call.starred or any(not isinstance(a, int) for a in args) or call.kwargs:
            return None
        try:
            shape = shape_fn(receiver.shape, *args)
        except (shapes.ShapeError, TypeError):
            return None
        if shape is None:
            return None
        strides = None
        if receiver.strides is not None:
            try:
                strides = stride_fn(receiver.shape, receiver.strides, *args)
            except (shapes.ShapeError, TypeError, ValueError):
                strides = None
        return _with_layout(inf, receiver, shape, strides)
    return op


TENSOR_METHODS["transpose"] = TENSOR_METHODS["swapaxes"] = TENSOR_METHODS["swapdims"] = _layout_op(
    shapes.transpose, layout.transpose_strides)
TENSOR_METHODS["t"] = _layout_op(shapes.t, layout.t_strides)
TENSOR_METHODS["unsqueeze"] = _layout_op(shapes.unsqueeze, layout.unsqueeze_strides)


@_register(TENSOR_METHODS, "permute")
def _permute(inf, receiver, call: Call):
    dims = dims_of(call.args) if call.args else dims_of([call.kwargs.get("dims")])
    if dims is None or receiver.shape is None or not all(isinstance(d, int) for d in dims):
        return None
    shape = shaped(shapes.permute, receiver.shape, dims)
    if shape is None:
        return None  # unknown, or PyTorch raises (a rule reports it)
    strides = layout.permute_strides(receiver.shape, receiver.strides, dims)
    return _with_layout(inf, receiver, shape, strides)


@_register(TENSOR_METHODS, "squeeze")
def _squeeze(inf, receiver, call: Call):
    dim = _dim_argument(call)
    if dim == "?" or receiver.shape is None:
        return None
    shape = shaped(shapes.squeeze, receiver.shape, dim)
    if shape is None:
        return None  # unknown, or PyTorch raises (a rule reports it)
    strides = layout.squeeze_strides(receiver.shape, receiver.strides, dim)
    return _with_layout(inf, receiver, shape, strides)


@_register(TENSOR_METHODS, "flatten")
def _flatten(inf, receiver, call: Call):
    start = int_of(call.get(0, "start_dim")) if call.given(0, "start_dim") else 0
    end = int_of(call.get(1, "end_dim")) if call.given(1, "end_dim") else -1
    if not isinstance(start, int) or not isinstance(end, int) or receiver.shape is None:
        return None
    return flatten_value(inf, receiver, start, end)


def flatten_value(inf, receiver: TensorValue, start: int, end: int):
    """``flatten(start, end)``: the tensor itself when there is nothing to merge, else a view or a copy."""
    shape = shaped(shapes.flatten, receiver.shape, start, end)
    if shape is None:
        return None
    rank = len(receiver.shape)
    if rank and shapes.wrap_dim(start, rank) == shapes.wrap_dim(end, rank):
        return receiver  # PyTorch returns the input itself
    try:
        strides = layout.flatten_strides(receiver.shape, receiver.strides, start, end)
    except shapes.ShapeError:
        return None
    return _with_layout(inf, receiver, shape, strides)


@_register(TENSOR_METHODS, "expand")
def _expand(inf, receiver, call: Call):
    resized = _resized(receiver, call, shapes.expand)
    if resized is None:
        return None
    sizes, shape = resized
    strides = layout.expand_strides(receiver.shape, receiver.strides, sizes)
    return _with_layout(inf, receiver, shape, strides)


@_register(TENSOR_METHODS, "expand_as")
def _expand_as(inf, receiver, call: Call):
    other = call.get(0)
    if not isinstance(other, TensorValue) or other.shape is None:
        return None
    return _expand(inf, receiver, Call(call.node, [size_value(other.shape)], {}, False, call.env))


@_register(TENSOR_METHODS, "repeat")
def _repeat(inf, receiver, call: Call):
    resized = _resized(receiver, call, shapes.repeat)
    if resized is None:
        return None
    sizes, shape = resized
    return derived(inf, receiver, shape=shape)


@_register(TENSOR_METHODS, "view_as", "reshape_as")
def _view_as(inf, receiver, call: Call):
    other = call.get(0)
    if not isinstance(other, TensorValue) or other.shape is None:
        return None
    handler = _view if call.node.func.attr == "view_as" else _reshape
    return handler(inf, receiver, Call(call.node, [size_value(other.shape)], {}, False, call.env))


def transpose_attribute(inf, receiver: TensorValue, name: str):
    if receiver.shape is None:
        return None
    try:
        if name in ("T", "H"):
            if len(receiver.shape) != 2:
                return None  # .T on other ranks is deprecated (reverses all dims)
            shape = shapes.t(receiver.shape)
            strides = layout.t_strides(receiver.shape, receiver.strides)
        else:
            if len(receiver.shape) < 2:
                return None
            shape = shapes.mT(receiver.shape)
            rank = len(receiver.shape)
            strides = layout.mT_strides(receiver.shape, receiver.strides)
    except shapes.ShapeError:
        return None
    return _with_layout(inf, receiver, shape, strides)


# -- joining and splitting -------------------------------------------------------------------------------------------
def _tensor_list(value) -> Optional[list]:
    if isinstance(value, SeqValue) and value.items is not None and all(isinstance(i, TensorValue) for i in value.items):
        return list(value.items)
    return None


@_register(TORCH_FUNCTIONS, "torch.cat", "torch.concat", "torch.concatenate", "torch.stack")
def _cat(inf, call: Call):
    given = call.get(0, "tensors")
    tensors = _tensor_list(given)
    dim = int_of(call.get(1, "dim")) if call.given(1, "dim") else 0
    if tensors is None and isinstance(given, SeqValue) and isinstance(given.element, TensorValue) \
            and isinstance(dim, int):
        return _joined_alike(inf, call, given, dim)
    if tensors is None and isinstance(dim, int):
        return _joined_partly(inf, call, given, dim)
    if not tensors or not isinstance(dim, int):
        return None
    fn = shapes.stack if _callee_name(call) == "stack" else shapes.cat
    try:
        shape = fn([t.shape for t in tensors], dim)
    except shapes.ShapeError:
        return None
    dtype, why = None, None
    known = [t.dtype for t in tensors]
    if all(d is not None for d in known):
        dtype = known[0]
        for d in known[1:]:
            dtype = dtypes.promote_types(dtype, d)
        why = tensors[0].why if len(set(known)) == 1 else "promoted across the inputs"
    devices = {t.device for t in tensors}
    return derived(inf, tensors[0], *tensors[1:], dtype=dtype, shape=shape, why=why,
                   device=devices.pop() if len(devices) == 1 else None)


@_register(TORCH_FUNCTIONS, "torch.nn.utils.rnn.pad_sequence")
def _pad_sequence(inf, call: Call):
    """``pad_sequence(seqs, batch_first=True)``: sequences ``(L_i, *rest)`` of one ``rest``, padded to the longest:
    ``(B, L, *rest)``, or ``(L, B, *rest)`` without ``batch_first``; the first sequence's dtype. ``L`` is the
    longest length where every length is known or all are one, else a size of its own; an empty list raises."""
    if call.starred or len(call.args) > 4 or call.kwargs.keys() - {"sequences", "batch_first", "padding_value",
                                                                   "padding_side"}:
        return None
    flag = call.get(1, "batch_first") if call.given(1, "batch_first") else ScalarValue("bool", False)
    if not (isinstance(flag, ScalarValue) and flag.kind == "bool" and isinstance(flag.value, bool)):
        return None
    given = call.get(0, "sequences")
    tensors = _tensor_list(given)
    if tensors:
        count = len(tensors)
    elif isinstance(given, SeqValue) and given.items is None and isinstance(given.element, TensorValue):
        tensors = [given.element]  # alike items (appended in a loop): how many is the list's length
        count = given.length if given.length is not None else Sym.fresh("n")
    else:
        return None
    if any(t.shape is None or not t.shape for t in tensors) \
            or any(len(t.shape) != len(tensors[0].shape) for t in tensors):
        return None  # (0-d sequences raise; ranks that differ raise or broadcast)
    rest = tensors[0].shape[1:]
    if any(not all(dim_eq(a, b) for a, b in zip(t.shape[1:], rest)) for t in tensors[1:]):
        return None
    lengths = [t.shape[0] for t in tensors]
    if given.items is None:
        longest = lengths[0] if isinstance(lengths[0], int) else Sym.fresh("n")  # (one symbol, a size per item)
    elif all(isinstance(n, int) for n in lengths):
        longest = max(lengths)
    else:
        longest = lengths[0] if all(dim_eq(n, lengths[0]) for n in lengths) else Sym.fresh("n")
    shape = (count, longest, *rest) if flag.value else (longest, count, *rest)
    dtypes_seen = {t.dtype for t in tensors}
    devices = {t.device for t in tensors}
    return derived(inf, tensors[0], *tensors[1:], dtype=dtypes_seen.pop() if len(dtypes_seen) == 1 else None,
                   shape=shape, device=devices.pop() if len(devices) == 1 else None)


@_register(TORCH_FUNCTIONS, "torch.meshgrid")
def _meshgrid(inf, call: Call):
    """``torch.meshgrid(a, b, indexing="ij")``: one expanded view per input, each of shape ``(len(a), len(b), ...)``
    (``"xy"`` swaps the first two); the inputs are 0-d or 1-d, of one dtype and one device."""
    if call.starred or call.kwargs.keys() - {"indexing"}:
        return None
    given = call.args
    if len(given) == 1 and isinstance(given[0], SeqValue):
        given = list(given[0].items) if given[0].items is not None else None
    indexing = call.kwargs.get("indexing")
    mode = indexing.value if isinstance(indexing, ScalarValue) and isinstance(indexing.value, str) else \
        "ij" if indexing is None else None
    if not given or mode not in ("ij", "xy") or not all(isinstance(t, TensorValue) for t in given):
        return None
    if any(t.shape is None or len(t.shape) > 1 for t in given):
        return None  # another rank raises; an unknown one leaves the grid unknown
    known = {t.dtype for t in given}
    if None not in known and len(known) > 1:
        return None  # "meshgrid expects all tensors to have the same dtype"
    # As PyTorch does it: "xy" swaps the first two inputs, then each grid is `t.view(1, .., n, .., 1).expand(grid)`.
    order = list(range(len(given)))
    if mode == "xy" and len(given) >= 2:
        order[0], order[1] = 1, 0
    grid = tuple(given[i].shape[0] if given[i].shape else 1 for i in order)
    grids = [None] * len(given)
    for at, i in enumerate(order):
        t = given[i]
        view = tuple(size if d == at else 1 for d, size in enumerate(grid))
        strides = layout.view_strides(t.shape, t.strides, view)
        strides = layout.expand_strides(view, strides, grid) if isinstance(strides, tuple) else None
        grids[i] = derived(inf, t, shape=grid, strides=strides).with_(
            memory="a view: shares memory with its input", saved_by=None)
    return SeqValue("tuple", tuple(grids))


def _joined_partly(inf, call: Call, given, dim: int):
    """``torch.cat((x, context), dim=1)`` with ``context`` unknown: where the call returns, the result has the rank
    of the known tensors and their sizes outside ``dim`` (``stack``: their shape, one more dim of the list's
    length). Only for known ranks of at least 2: a 1-d ``(0,)`` tensor is the one cat lets through whatever."""
    if not isinstance(given, SeqValue) or not given.items:
        return None
    known = [t for t in given.items if isinstance(t, TensorValue) and t.shape is not None]
    if not known or len(known) == len(given.items) or any(
            not (t is None or isinstance(t, (TensorValue, SymbolicValue))) for t in given.items):
        return None
    stack = _callee_name(call) == "stack"
    if any(len(t.shape) < 2 for t in known) and not stack:
        return None
    try:
        shape = (shapes.stack if stack else shapes.cat)([t.shape for t in known], dim)
    except shapes.ShapeError:
        return None
    d = shapes.wrap_dim(dim, len(shape))
    shape = shape[:d] + ((len(given.items) if stack else Sym.fresh("n")),) + shape[d + 1:]
    made = derived(inf, known[0], *known[1:], dtype=None, shape=shape, device=None, strides=None, why=None)
    return made if made.requires_grad else made.with_(requires_grad=None, is_leaf=None)  # the others may need grad


def _joined_alike(inf, call: Call, items: SeqValue, dim: int):
    """``torch.stack(outs)`` of a list whose items are all alike (appended in a loop, a comprehension): ``n`` of
    them, ``n`` known from the loop or a size of its own (not 0: stacking nothing raises)."""
    element = items.element
    if element.shape is None:
        return None
    count = items.length if items.length is not None else Sym.fresh("n")
    stack = _callee_name(call) == "stack"
    try:
        d = shapes.wrap_dim(dim, len(element.shape) + (1 if stack else 0), scalar_as_1d=not stack)
    except shapes.ShapeError:
        return None
    if stack:
        shape = (*element.shape[:d], count, *element.shape[d:])
    elif not element.shape:
        return None  # zero-dimensional tensors cannot be concatenated
    else:
        shape = (*element.shape[:d], count * element.shape[d], *element.shape[d + 1:])
    return derived(inf, element, shape=shape, why=element.why, strides=None if not stack else "contiguous")


def _callee_name(call: Call) -> str:
    func = call.node.func
    return getattr(func, "attr", None) or getattr(func, "id", "")


def _pieces(kind):
    def split(inf, receiver, call: Call):
        if receiver.shape is None:
            return None
        dim = int_of(call.get(1, "dim")) if call.given(1, "dim") else 0
        first = call.get(0)
        if not isinstance(dim, int):
            return None
        try:
            if kind == "unbind":
                dim = int_of(call.get(0, "dim")) if call.given(0, "dim") else 0
                parts = shapes.unbind(receiver.shape, dim)
            elif kind == "chunk":
                chunks = int_of(first)
                parts = shapes.chunk(receiver.shape, chunks, dim) if isinstance(chunks, int) else None
            else:
                size = size_of(first)
                if size is None and isinstance(first, SeqValue) and first.items is not None:
                    size = [int_of(i) for i in first.items]
                    if any(s is None for s in size):
                        return None
                parts = shapes.split(receiver.shape, size, dim) if size is not None else None
        except shapes.ShapeError:
            return None
        if parts is None:
            return SeqValue("tuple")
        strides = receiver.strides  # the pieces are narrowed views: the same strides (less the dim, unbound)
        if strides is not None and kind == "unbind":
            d = shapes.wrap_dim(dim, len(strides))
            strides = strides[:d] + strides[d + 1:]
        return SeqValue("tuple", tuple(_with_layout(inf, receiver, p, strides) for p in parts))
    return split


TENSOR_METHODS["split"] = _pieces("split")
TENSOR_METHODS["chunk"] = _pieces("chunk")
TENSOR_METHODS["unbind"] = _pieces("unbind")


def _values_indices(inf, receiver: TensorValue, shape) -> SeqValue:
    """The ``(values, indices)`` named tuple of topk / kthvalue: values as the input, indices int64."""
    values = derived(inf, receiver, shape=shape, why=receiver.why)
    indices = derived(inf, receiver, dtype=DType.int64, shape=shape, why="indices are int64").with_(
        requires_grad=False, is_leaf=True)
    return SeqValue("tuple", (values, indices), fields=VALUES_INDICES)


def _picked_dim(receiver: TensorValue, call: Call, position: int) -> Optional[int]:
    """The dim= of topk / kthvalue (default -1) wrapped into range; None when unknown or out of range."""
    dim = int_of(call.get(position, "dim")) if call.given(position, "dim") else -1
    if not isinstance(dim, int) or receiver.shape is None or not receiver.shape:
        return None
    try:
        return shapes.wrap_dim(dim, len(receiver.shape))
    except shapes.ShapeError:
        return None


def _orderable(receiver: TensorValue) -> bool:
    return receiver.dtype is None or not (receiver.dtype == DType.bool or dtypes.is_complex(receiver.dtype))


@_register(TENSOR_METHODS, "topk")
def _topk(inf, receiver: TensorValue, call: Call):
    """``x.topk(k, dim=-1)``: the k largest (or smallest) along dim; k must fit in that dim."""
    k, d = int_of(call.get(0, "k")), _picked_dim(receiver, call, 1)
    if d is None or not _orderable(receiver):
        return None
    if k is None:
        k = Sym.fresh("k")  # any k that works is a size of the result (any other raises)
    size = receiver.shape[d]
    if isinstance(k, int) and (k < 0 or isinstance(size, int) and k > size):
        return None  # selected index k out of range
    return _values_indices(inf, receiver, receiver.shape[:d] + (k,) + receiver.shape[d + 1:])


@_register(TENSOR_METHODS, "kthvalue")
def _kthvalue(inf, receiver: TensorValue, call: Call):
    """``x.kthvalue(k, dim=-1, keepdim=False)``: the k-th smallest along dim (1 <= k <= that size)."""
    k, d = int_of(call.get(0, "k")), _picked_dim(receiver, call, 1)
    keepdim = call.get(2, "keepdim") if call.given(2, "keepdim") else ScalarValue("bool", False)
    if d is None or not _orderable(receiver) or not (
            isinstance(keepdim, ScalarValue) and keepdim.kind == "bool" and keepdim.value is not None):
        return None
    size = receiver.shape[d]
    if isinstance(k, int) and (k < 1 or isinstance(size, int) and k > size):
        return None  # kthvalue(): selected number k out of range
    shape = receiver.shape[:d] + ((1,) if keepdim.value else ()) + receiver.shape[d + 1:]
    return _values_indices(inf, receiver, shape)


# -- legacy constructors: what they build (TW101/TW102 say why not to) ---------------------------------------------------
def _legacy(dtype: Optional[DType], device: Optional[str]):
    def build(inf, call: Call):
        if call.kwargs.keys() - {"device"} or call.starred:
            return None
        real_dtype = dtype or inf.default_float
        real_device = device or _device(inf, call)
        if len(call.args) == 1 and isinstance(call.get(0), SeqValue) and literal_data(call.get(0)) is not None:
            shape = literal_data(call.get(0))[0]  # data; a single int is a size (torch.FloatTensor(16) is (16,))
            return make_tensor(inf, real_dtype, shape, real_device, False, "the legacy type's dtype", "copies the data")
        shape = dims_of(call.args) if call.args else (0,)
        if shape is None or not all(isinstance(int_of(a), int) or isinstance(int_of(a), Sym) for a in call.args):
            return None
        return make_tensor(inf, real_dtype, shape, real_device, False, "the legacy type's dtype",
                           "uninitialized memory")
    return build


for _qualname, (_dtype_name, _device_name) in LEGACY_CONSTRUCTORS.items():
    TORCH_FUNCTIONS[_qualname] = _legacy(dtypes.parse_torch_dtype(_dtype_name) if _dtype_name else None, _device_name)


def describe_dim(dim) -> str:
    return fmt_dim(dim)


def _math_float(inf, call: Call):
    """``math.sqrt(d)``: a Python float (of a number; anything else raises)."""
    return ScalarValue("float") if call.args and all(
        isinstance(a, (ScalarValue, SymbolicValue)) for a in call.args) and not call.kwargs else None


for _name in ("sqrt", "log", "exp", "log2", "log10", "pow", "cos", "sin", "tan", "atan", "erf"):
    TORCH_FUNCTIONS[f"math.{_name}"] = _math_float


_FLOAT_INFO = ("max", "min", "eps", "tiny", "smallest_normal", "resolution")


@_register(TORCH_FUNCTIONS, "torch.finfo")
def _finfo(inf, call: Call):
    """``torch.finfo(x.dtype)``: its limits are Python floats (``-torch.finfo(dots.dtype).max``), read as the
    fields of a record; the dtype itself is not checked (an integer dtype raises there, nothing follows)."""
    return _number_info(call, ScalarValue("float"), _FLOAT_INFO)


@_register(TORCH_FUNCTIONS, "torch.iinfo")
def _iinfo(inf, call: Call):
    """``torch.iinfo(torch.int64).max``: Python ints."""
    return _number_info(call, ScalarValue("int"), ("max", "min"))


def _number_info(call: Call, limit: ScalarValue, limits: tuple) -> Optional[SeqValue]:
    if call.starred or len(call.args) > 1 or call.kwargs.keys() - {"type"}:
        return None
    return SeqValue("info", (limit,) * len(limits) + (ScalarValue("int"),), fields=limits + ("bits",))


@_register(TORCH_FUNCTIONS, "torch.is_tensor", "torch.is_storage")
def _is_tensor(inf, call: Call):
    return ScalarValue("bool") if len(call.args) == 1 and not call.kwargs and not call.starred else None


@_register(TORCH_FUNCTIONS, "torch.equal", "torch.allclose")
def _tensors_equal(inf, call: Call):
    others = call.args[2:] + list(call.kwargs.values())
    if call.starred or len(call.args) < 2 or not all(isinstance(a, TensorValue) for a in call.args[:2]) \
            or not all(isinstance(o, ScalarValue) for o in others):
        return None
    return ScalarValue("bool")


@_register(TORCH_FUNCTIONS, "torch.set_default_dtype")
def _set_default_dtype(inf, call: Call):
    inf.set_default_dtype(dtype_arg(call.get(0, "d")), call.node.lineno)
    return None


@_register(TORCH_FUNCTIONS, "torch.device")
def _device_call(inf, call: Call):
    from torchwise.analysis.values import DeviceValue

    kind = call.get(0, "type")
    index = call.get(1, "index")
    if isinstance(kind, ScalarValue) and kind.kind == "str":
        device = normalize_device(kind.value)
        if device and index is not None:
            position = int_of(index)
            device = f"{device}:{position}" if isinstance(position, int) and ":" not in device else None
        return DeviceValue(device)
    return DeviceValue(None)


@_register(TORCH_FUNCTIONS, "torch.pow")
def _pow(inf, call: Call):
    base, exponent = call.get(0, "input"), call.get(1, "exponent")
    if isinstance(base, TensorValue):
        return elementwise(inf, [base, exponent], "pow") if exponent is not None else None
    if isinstance(base, ScalarValue) and isinstance(exponent, TensorValue):
        result = elementwise(inf, [base, exponent], "pow")
        # pow(scalar, x)'s backward reads its result (d/dx a**x = a**x * ln a).
        return result.with_(saved_by="pow") if result is not None and result.requires_grad else result
    return None


@_register(TORCH_FUNCTIONS, "torch.nn.Parameter", "torch.nn.parameter.Parameter")
def _parameter(inf, call: Call):
    data = call.get(0, "data")
    flag = call.get(1, "requires_grad")
    grad = True if flag is None else (flag.value if isinstance(flag, ScalarValue) and flag.kind == "bool" else None)
    if not isinstance(data, TensorValue):
        return TensorValue(requires_grad=grad, is_leaf=True)
    return data.with_(requires_grad=grad, is_leaf=True, memory="shares memory with its data", saved_by=None)
