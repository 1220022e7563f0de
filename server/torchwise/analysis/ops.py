"""What PyTorch (and numpy) operations do to the facts of their operands.

Each op is a small transfer function from argument values to a result value.
Shape arithmetic lives in ``shapes``/``layout``, dtype rules in ``dtypes``; this
module only reads arguments the way PyTorch's signatures do and combines them.
Anything not listed here returns ``None`` (unknown), never a guess.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from torchwise.analysis import dtypes, layout, shapes
from torchwise.analysis.dims import Sym, dim_eq
from torchwise.analysis.dtypes import DType
from torchwise.analysis.values import (
    DeviceValue, DtypeValue, InstanceValue, ModuleValue, NdarrayValue, ScalarValue, SeqValue, TensorValue, join,
)

MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
MODULE_CONVERSIONS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16"})
INPLACE_SHAPE_METHODS = frozenset({
    "resize_", "resize_as_", "unsqueeze_", "squeeze_", "t_", "transpose_", "set_", "as_strided_",
    "swapdims_", "swapaxes_",
})


@dataclass
class Call:
    node: ast.Call
    args: list
    kwargs: dict
    starred: bool
    env: object

    def get(self, position: Optional[int], name: Optional[str] = None):
        """An argument given by position or by keyword, or None."""
        if name is not None and name in self.kwargs:
            return self.kwargs[name]
        if position is not None and position < len(self.args) and not self.starred:
            return self.args[position]
        return None

    def given(self, position: Optional[int], name: Optional[str] = None) -> bool:
        return (name is not None and name in self.kwargs) or (position is not None and position < len(self.args))

    @property
    def arg_nodes(self) -> list:
        return self.node.args


# -- small readers -----------------------------------------------------------------------------------
def constant(value):
    if value is None:
        return ScalarValue("none", None)
    kind = {bool: "bool", int: "int", float: "float", complex: "complex", str: "str"}.get(type(value))
    return ScalarValue(kind, value) if kind else None


def int_of(value):
    """The int (or symbolic dim) a value certainly is, else None."""
    if isinstance(value, ScalarValue) and value.kind == "int" and value.value is not None:
        return value.value
    return None


def dims_of(values) -> Optional[tuple]:
    """A size given as ``3, 4`` or ``(3, 4)`` or ``x.shape``: its dims, when every one is known."""
    if len(values) == 1 and isinstance(values[0], SeqValue):
        values = values[0].items
        if values is None:
            return None
    dims = tuple(int_of(v) for v in values)
    return None if any(d is None for d in dims) else dims


def dtype_arg(value) -> Optional[DType]:
    """A torch dtype argument (torch rejects strings such as "float32")."""
    return value.dtype if isinstance(value, DtypeValue) else None


def numpy_dtype_arg(value) -> Optional[DType]:
    """A numpy dtype argument: ``np.float32``, ``torch``-free strings such as ``"float32"`` or ``"f4"``."""
    if isinstance(value, DtypeValue):
        return value.dtype
    if isinstance(value, ScalarValue) and value.kind == "str":
        return dtypes.parse_dtype_string(value.value)
    if isinstance(value, ScalarValue) and value.kind == "none":
        return None
    return None


def device_arg(value) -> Optional[str]:
    if isinstance(value, DeviceValue):
        return value.device
    if isinstance(value, ScalarValue) and value.kind == "str":
        return normalize_device(value.value)
    if isinstance(value, TensorValue):  # .to(other) takes its device
        return value.device
    return None


def normalize_device(text) -> Optional[str]:
    if not isinstance(text, str):
        return None
    text = text.strip()
    kind, _, index = text.partition(":")
    if kind not in ("cpu", "cuda", "mps", "xpu", "meta") or (index and not index.isdigit()):
        return None
    return "cpu" if kind == "cpu" else text


def same_device(a: Optional[str], b: Optional[str]) -> Optional[bool]:
    """Certainly the same device (True), certainly different (False), or unknown (None).

    "cuda" means the current CUDA device, which may be "cuda:0" or any other index.
    """
    if a is None or b is None:
        return None
    if a == b:
        return True
    if a.split(":")[0] != b.split(":")[0]:
        return False
    if ":" in a and ":" in b:
        return False
    return None


def contiguous_strides(shape):
    return layout.contiguous_strides(shape) if shape is not None else None


def make_tensor(inf, dtype, shape, device, requires_grad=False, why=None, memory=None, strides="contiguous"):
    if requires_grad and dtype is not None and not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype)):
        return None  # only floating point and complex tensors can require gradients
    if strides == "contiguous":
        strides = contiguous_strides(shape)
    leaf = None if requires_grad is None else True
    return TensorValue(dtype, shape, device, strides, requires_grad, leaf, why, memory)


def result_grad(inf, *tensors) -> Optional[bool]:
    """Whether an op's result requires grad: if any input does, unless grad is off (``torch.no_grad()``)."""
    if inf.grad_enabled is False:
        return False
    flags = [t.requires_grad for t in tensors if isinstance(t, TensorValue)]
    if any(f is True for f in flags) and inf.grad_enabled is None:
        return None
    if any(f is True for f in flags):
        return True
    if all(f is False for f in flags):
        return False
    return None


def output_strides(shape, *inputs):
    """Strides of a new tensor an op computes from ``inputs``.

    PyTorch lays the output out like its inputs (TensorIterator follows their stride order), so
    it is row-major only when every input is; otherwise the layout is left unknown.
    """
    if shape is None or any(isinstance(d, int) and d == 0 for d in shape):
        return None  # empty results keep their inputs' dim order, whatever the strides say
    for value in inputs:
        if isinstance(value, TensorValue) and value.shape != ():
            if value.strides is None or value.shape is None:
                return None
            if layout.is_contiguous(value.shape, value.strides) is not True:
                return None
    return contiguous_strides(shape)


def derived(inf, base: TensorValue, *others, dtype="keep", shape="keep", strides="contiguous",
            why="keep", device="keep", saved_by=None) -> TensorValue:
    """A new tensor computed from ``base`` (and ``others``): not a leaf, grad if any input has it."""
    grad = result_grad(inf, base, *others)
    result_dtype = base.dtype if dtype == "keep" else dtype
    if result_dtype is not None and not (dtypes.is_floating(result_dtype) or dtypes.is_complex(result_dtype)):
        grad = False  # integer and bool results never require grad
    new_shape = base.shape if shape == "keep" else shape
    return TensorValue(
        base.dtype if dtype == "keep" else dtype,
        new_shape,
        base.device if device == "keep" else device,
        output_strides(new_shape, base, *others) if strides == "contiguous" else strides,
        grad,
        None if grad is None else not grad,
        (base.why if dtype == "keep" else None) if why == "keep" else why,
        None,
    )


def _default_float(inf) -> tuple[Optional[DType], Optional[str]]:
    return inf.default_float, inf.default_float_why


# -- literals and nested lists ---------------------------------------------------------------------------
def literal_data(value):
    """(shape, kinds) of nested lists/tuples of Python numbers, or None."""
    if isinstance(value, ScalarValue) and value.kind in ("bool", "int", "float", "complex"):
        return (), {value.kind}
    if isinstance(value, SeqValue) and value.kind in ("list", "tuple") and value.items is not None:
        if not value.items:
            return (0,), set()
        parts = [literal_data(item) for item in value.items]
        if any(p is None for p in parts):
            return None
        inner = {p[0] for p in parts}
        if len(inner) != 1:
            return None
        kinds = set().union(*(p[1] for p in parts))
        return (len(value.items), *inner.pop()), kinds
    return None


# -- attributes ---------------------------------------------------------------------------------------------
def qualified_constant(qualname: str):
    if qualname.startswith("torch."):
        dtype = dtypes.parse_torch_dtype(qualname[len("torch."):])
        if dtype is not None:
            return DtypeValue(dtype)
    if qualname.startswith("numpy."):
        dtype = dtypes.parse_numpy_dtype(qualname[len("numpy."):])
        if dtype is not None:
            return DtypeValue(dtype)
    if qualname in ("math.pi", "math.e", "torch.pi", "numpy.pi"):
        return ScalarValue("float")
    return None


def attribute(inf, node: ast.Attribute, receiver):
    name = node.attr
    if isinstance(receiver, TensorValue):
        if name == "shape":
            return size_value(receiver.shape)
        if name == "dtype":
            return DtypeValue(receiver.dtype) if receiver.dtype is not None else None
        if name == "device":
            return DeviceValue(receiver.device)
        if name == "ndim":
            return ScalarValue("int", receiver.rank)
        if name in ("T", "mT", "H", "mH"):
            return _method_t(inf, receiver, name)
        if name in ("data",):
            return receiver.with_(requires_grad=False, is_leaf=True, why=receiver.why, memory=None)
        if name == "grad":
            return receiver.with_(requires_grad=False, is_leaf=True, memory=None) if receiver.shape is not None \
                else None
        if name in ("requires_grad", "is_leaf", "is_cuda"):
            return ScalarValue("bool")
        return None
    if isinstance(receiver, NdarrayValue):
        if name == "shape":
            return size_value(receiver.shape, kind="tuple")
        if name == "dtype":
            return DtypeValue(receiver.dtype) if receiver.dtype is not None else None
        if name == "T" and receiver.shape is not None:
            return NdarrayValue(receiver.dtype, tuple(reversed(receiver.shape)), receiver.why)
        if name in ("ndim", "size"):
            return ScalarValue("int", receiver.shape and len(receiver.shape) if name == "ndim" else None)
        return None
    if isinstance(receiver, ModuleValue):
        return receiver.param(name) or _module_setting(receiver, name)
    if isinstance(receiver, DeviceValue) and name == "type" and receiver.device:
        return ScalarValue("str", receiver.device.split(":")[0])
    return None


def _module_setting(module: ModuleValue, name: str):
    value = module.setting(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return ScalarValue("int", value)
    return None


def size_value(shape, kind="size"):
    if shape is None:
        return SeqValue(kind)
    return SeqValue(kind, tuple(ScalarValue("int", d) for d in shape))


# -- unpacking and iteration ----------------------------------------------------------------------------------
def unpack(inf, value, count: int):
    if isinstance(value, SeqValue) and value.items is not None and len(value.items) == count:
        return list(value.items)
    if isinstance(value, TensorValue) and value.shape and isinstance(value.shape[0], int) \
            and value.shape[0] == count:
        return [row_of(value)] * count
    return None


def row_of(tensor: TensorValue):
    """``t[i]`` for an int ``i``: the tensor without its first dimension."""
    if tensor.shape is None or len(tensor.shape) == 0:
        return None
    strides = tensor.strides[1:] if tensor.strides is not None else None
    return TensorValue(tensor.dtype, tensor.shape[1:], tensor.device, strides, tensor.requires_grad,
                       None if tensor.requires_grad is None else not tensor.requires_grad, tensor.why, None)


def iteration_item(inf, iter_node: ast.expr, iterable, env):
    if isinstance(iterable, TensorValue):
        return row_of(iterable)
    if isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Name) \
            and iter_node.func.id == "range" and env.scope.owner_of("range") is None:
        return ScalarValue("int")
    if isinstance(iterable, SeqValue) and iterable.items:
        item = iterable.items[0]
        for other in iterable.items[1:]:
            item = join(item, other)
        return item
    if isinstance(iterable, SeqValue) and iterable.kind == "list-of":
        return iterable.items
    return None


def list_of_unknown_length(element):
    return SeqValue("list")


# -- subscripts -------------------------------------------------------------------------------------------
def subscript(inf, node: ast.Subscript, receiver, index, env):
    if isinstance(receiver, SeqValue):
        position = int_of(index)
        if receiver.items is not None and isinstance(position, int) and -len(receiver.items) <= position \
                < len(receiver.items):
            return receiver.items[position]
        if receiver.items is not None and isinstance(node.slice, ast.Slice):
            bounds = [_int_or_none(inf, part) for part in (node.slice.lower, node.slice.upper, node.slice.step)]
            if all(b is None or isinstance(b, int) for b in bounds) and bounds[2] != 0:
                return SeqValue(receiver.kind, tuple(receiver.items[slice(*bounds)]))
        return None
    if isinstance(receiver, TensorValue):
        result = index_tensor(inf, node, receiver)
        return result
    if isinstance(receiver, NdarrayValue):
        return None
    return None


def _int_or_none(inf, node):
    if node is None:
        return None
    value = inf.values.get(node)
    return int_of(value) if value is not None else "?"


def index_items(inf, node: ast.Subscript):
    """The index as a list of items for ``shapes.index``, or None when an item is unknown."""
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    items = []
    for part in parts:
        if isinstance(part, ast.Slice):
            bounds = []
            for bound in (part.lower, part.upper, part.step):
                if bound is None:
                    bounds.append(None)
                    continue
                value = int_of(inf.values.get(bound))
                if not isinstance(value, int):
                    return None
                bounds.append(value)
            items.append(slice(*bounds))
        elif isinstance(part, ast.Constant) and part.value is None:
            items.append(None)
        elif isinstance(part, ast.Constant) and part.value is Ellipsis:
            items.append(Ellipsis)
        else:
            value = inf.values.get(part)
            if isinstance(value, ScalarValue) and value.kind == "int":
                items.append(value.value if value.value is not None else Sym.fresh("i"))
            elif isinstance(value, TensorValue) and value.dtype == DType.bool and value.shape is not None:
                items.append(shapes.Mask(value.shape))
            else:
                return None
    return items


def index_tensor(inf, node: ast.Subscript, tensor: TensorValue):
    items = index_items(inf, node)
    if items is None or tensor.shape is None:
        return None
    try:
        shape = shapes.index(tensor.shape, items)
    except shapes.ShapeError:
        return None
    if shape is None:
        return None
    basic = not any(isinstance(i, shapes.Mask) for i in items)
    strides = layout.index_strides(tensor.shape, tensor.strides, items) if basic and tensor.strides else None
    return TensorValue(tensor.dtype, shape, tensor.device, strides if basic else None,
                       tensor.requires_grad, None if tensor.requires_grad is None else not tensor.requires_grad,
                       tensor.why, "a view: shares memory with its input" if basic else None)


# -- arithmetic ----------------------------------------------------------------------------------------------
_ARITHMETIC = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
               ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
               ast.LShift: "lshift", ast.RShift: "rshift"}


def operand(value) -> Optional[dtypes.Operand]:
    if isinstance(value, TensorValue):
        if value.dtype is None or value.shape is None:
            return None
        return dtypes.Operand.zero_dim(value.dtype) if len(value.shape) == 0 else dtypes.Operand.tensor(value.dtype)
    if isinstance(value, ScalarValue) and value.kind in ("bool", "int", "float", "complex"):
        return dtypes.Operand.scalar(value.kind)
    return None


def elementwise_dtype(inf, values, op: str = "add") -> tuple[Optional[DType], Optional[str]]:
    operands = [operand(v) for v in values]
    if any(o is None for o in operands):
        return None, None
    default = inf.default_float
    if default is None and any(o.python_type in ("float", "complex") for o in operands):
        return None, None
    result = dtypes.result_type(operands, default_float=default or DType.float32)
    why = None
    tensor_dtypes = [v.dtype for v in values if isinstance(v, TensorValue)]
    if op == "div" and not (dtypes.is_floating(result) or dtypes.is_complex(result)):
        if default is None:
            return None, None
        result = default
        why = "`/` is true division: integers give the default float dtype"
    elif len(set(tensor_dtypes)) > 1:
        why = "promoted from " + " and ".join(sorted({d.short for d in tensor_dtypes})) + " (type promotion)"
    elif tensor_dtypes and result != tensor_dtypes[0]:
        scalar = next(v for v in values if isinstance(v, ScalarValue))
        why = f"a Python {scalar.kind} operand promotes {tensor_dtypes[0].short} to {result.short}"
    return result, why


def combine_devices(values) -> Optional[str]:
    """The device of an element-wise result; a 0-d CPU tensor may join any device."""
    devices = []
    for v in values:
        if isinstance(v, TensorValue):
            if v.shape == () and v.device == "cpu":
                continue
            devices.append(v.device)
    if not devices:
        return "cpu" if any(isinstance(v, TensorValue) for v in values) else None
    first = devices[0]
    return first if all(d == first for d in devices) else None


_CLASH = object()
_BOOL_KERNELS = frozenset({"add", "mul", "and", "or", "xor", "compare", "order", "max", "min"})
_NEEDS_ORDER = frozenset({"floordiv", "mod", "max", "min", "order"})


def broadcast_values(inf, values):
    """The broadcast shape, None when unknown, or _CLASH when PyTorch raises."""
    tensor_shapes = [v.shape for v in values if isinstance(v, TensorValue)]
    if any(s is None for s in tensor_shapes):
        return None
    try:
        return shapes.broadcast(*tensor_shapes)
    except shapes.ShapeError:
        return _CLASH


def elementwise(inf, values, op="add", result_dtype=None):
    tensors = [v for v in values if isinstance(v, TensorValue)]
    if not tensors:
        return None
    if any(not (isinstance(v, (TensorValue, ScalarValue))) for v in values):
        return None
    shape = broadcast_values(inf, values)
    if shape is _CLASH:
        return None  # PyTorch raises here (TW501): nothing downstream is known
    if op == "sub" and any((isinstance(v, TensorValue) and v.dtype == DType.bool)
                           or (isinstance(v, ScalarValue) and v.kind == "bool") for v in values):
        return None  # subtraction with a bool raises (use ~ or logical_not)
    if op == "pow" and all(v.dtype == DType.bool for v in tensors) and all(
            isinstance(v, TensorValue) or v.kind == "bool" for v in values):
        return None  # bool ** bool raises
    if len({v.device for v in tensors if v.shape != () or v.device != "cpu"}) > 1 and \
            any(same_device(a.device, b.device) is False for a in tensors for b in tensors):
        return None  # mixed devices raise (TW204)
    dtype, why = elementwise_dtype(inf, values, op)
    if dtype == DType.bool and op not in _BOOL_KERNELS:
        return None  # floor division, remainder, power... have no bool kernels
    if any(v.dtype is not None and dtypes.is_complex(v.dtype) for v in tensors) and op in _NEEDS_ORDER:
        return None  # complex numbers have no floor and no order
    if result_dtype is not None:
        dtype, why = result_dtype, None
    grad = result_grad(inf, *tensors)
    if dtype is not None and not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype)):
        grad = False  # integer and bool results never require grad
    return TensorValue(dtype, shape, combine_devices(values), output_strides(shape, *tensors), grad,
                       None if grad is None else not grad, why, None)


def binary(inf, node, op, left, right):
    if isinstance(op, ast.MatMult):
        return matmul_values(inf, left, right)
    name = _ARITHMETIC.get(type(op))
    if name is None:
        return None
    if isinstance(left, TensorValue) or isinstance(right, TensorValue):
        if isinstance(left, NdarrayValue) or isinstance(right, NdarrayValue):
            return None
        return elementwise(inf, [left, right], name)
    if isinstance(left, NdarrayValue) or isinstance(right, NdarrayValue):
        return ndarray_binary(left, right)
    if isinstance(left, ScalarValue) and isinstance(right, ScalarValue):
        return scalar_binary(name, left, right)
    if isinstance(left, SeqValue) and isinstance(right, SeqValue) and name == "add" and left.kind == right.kind \
            and left.kind in ("list", "tuple", "size"):
        if left.items is not None and right.items is not None:
            return SeqValue(left.kind, left.items + right.items)
        return SeqValue(left.kind)
    return None


def scalar_binary(name, left: ScalarValue, right: ScalarValue):
    numeric = ("bool", "int", "float", "complex")
    if left.kind not in numeric or right.kind not in numeric:
        if name == "add" and left.kind == right.kind == "str":
            return ScalarValue("str")
        return None
    order = {"bool": 0, "int": 1, "float": 2, "complex": 3}
    kind = max(left.kind, right.kind, key=order.get)
    if kind == "bool" and name in ("add", "sub", "mul", "floordiv", "mod", "pow"):
        kind = "int"
    if name == "div":
        kind = "complex" if kind == "complex" else "float"
    if kind == "int" and name in ("add", "sub", "mul", "floordiv") and left.value is not None \
            and right.value is not None:
        try:
            a, b = left.value, right.value
            if name == "add":
                return ScalarValue("int", a + b)
            if name == "sub":
                return ScalarValue("int", a - b)
            if name == "mul":
                return ScalarValue("int", a * b)
            if isinstance(a, int) and isinstance(b, int) and b != 0:
                return ScalarValue("int", a // b)
            if isinstance(b, int) and b > 0:
                quotient = a // b
                return ScalarValue("int", quotient) if quotient is not None else ScalarValue("int")
        except (TypeError, ZeroDivisionError):
            pass
    return ScalarValue(kind)


def ndarray_binary(left, right):
    arrays = [v for v in (left, right) if isinstance(v, NdarrayValue)]
    if any(not isinstance(v, (NdarrayValue, ScalarValue)) for v in (left, right)):
        return None
    shape = None
    if all(a.shape is not None for a in arrays):
        try:
            shape = shapes.broadcast(*[a.shape for a in arrays])
        except shapes.ShapeError:
            return None
    dtype = arrays[0].dtype if len({a.dtype for a in arrays}) == 1 else None
    return NdarrayValue(dtype, shape)


def inplace_binary(inf, stmt, current: TensorValue, operand_value):
    """``t += x``: the result keeps ``t``'s dtype, shape and device (PyTorch raises otherwise)."""
    name = _ARITHMETIC.get(type(stmt.op))
    if name is None or not inplace_fits(inf, current, operand_value, name):
        return None
    return inplace_result(inf, current, [operand_value])


def inplace_fits(inf, current: TensorValue, operand_value, op: str) -> bool:
    """Whether ``current <op>= operand`` can work: the result must fit back into ``current``."""
    if current.requires_grad and inf.grad_enabled is not False and (
            current.is_leaf or (current.memory or "").startswith("a view")):
        return False  # a leaf that requires grad (TW302), or a view that may be of one
    if current.strides is not None and current.shape is not None and any(
            stride == 0 and not (isinstance(size, int) and size <= 1)
            for stride, size in zip(current.strides, current.shape)):
        return False  # expanded memory: several elements share one location, PyTorch refuses to write
    if current.dtype is None:
        return False  # cannot tell whether the result fits back: claim nothing
    other = operand_value.dtype if isinstance(operand_value, TensorValue) else (
        dtypes.python_scalar_dtype(operand_value.kind) if isinstance(operand_value, ScalarValue)
        and operand_value.kind in dtypes.PYTHON_SCALAR_TYPES else None)
    if other is None or dtypes.category(other) > dtypes.category(current.dtype):
        return False  # a higher category (int += float) cannot be cast back, whatever the shapes
    if op == "div" and not (dtypes.is_floating(current.dtype) or dtypes.is_complex(current.dtype)):
        return False  # true division of integers gives floats: `int_tensor /= 2` raises
    full = elementwise(inf, [current, operand_value], op) if isinstance(operand_value, (TensorValue, ScalarValue)) \
        else None
    if full is None:
        return operand_value is None or not isinstance(operand_value, (TensorValue, ScalarValue))
    if current.shape is not None and full.shape is not None and len(full.shape) != len(current.shape):
        return False
    if current.shape is not None and full.shape is not None and any(
            isinstance(a, int) and isinstance(b, int) and a != b for a, b in zip(current.shape, full.shape)):
        return False  # the broadcast result does not fit the target
    if current.dtype is not None and full.dtype is not None and \
            dtypes.category(full.dtype) > dtypes.category(current.dtype):
        return False  # result type float can't be cast to the desired output type Long
    return True


def inplace_result(inf, current: TensorValue, operands) -> TensorValue:
    """The tensor after an in-place op: the same tensor, now computed from ``operands`` too."""
    if current.requires_grad:
        return current.with_(memory=current.memory)  # still the same (leaf or not) tensor
    grad = result_grad(inf, current, *[o for o in operands if isinstance(o, TensorValue)])
    if grad is False:
        return current
    return current.with_(requires_grad=grad, is_leaf=None if grad is None else False, saved_by=None)


def unary(inf, node: ast.UnaryOp, value):
    if isinstance(value, TensorValue):
        if isinstance(node.op, ast.Not):
            return ScalarValue("bool")
        if isinstance(node.op, ast.USub) and value.dtype == DType.bool:
            return None  # -bool raises (use ~)
        return derived(inf, value)
    if isinstance(value, ScalarValue):
        if isinstance(node.op, ast.Not):
            return ScalarValue("bool")
        if value.kind in ("int", "float", "complex") and isinstance(node.op, ast.USub):
            try:
                return ScalarValue(value.kind, -value.value if value.value is not None else None)
            except TypeError:
                return ScalarValue(value.kind)
        if value.kind == "bool" and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            return ScalarValue("int")
        return ScalarValue(value.kind) if value.kind in ("int", "float", "complex") else None
    if isinstance(value, NdarrayValue):
        return value
    return None


def compare(inf, node: ast.Compare, values):
    identity = isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn))
    if len(values) == 2 and any(isinstance(v, TensorValue) for v in values) and not identity:
        kind = "compare" if isinstance(node.ops[0], (ast.Eq, ast.NotEq)) else "order"
        return elementwise(inf, values, kind, result_dtype=DType.bool)
    if identity or all(isinstance(v, ScalarValue) for v in values):
        return ScalarValue("bool")
    return None  # an unknown operand may be a tensor, and then the result is one too


# -- matmul family --------------------------------------------------------------------------------------------
def matmul_values(inf, left, right, kind="matmul"):
    if not (isinstance(left, TensorValue) and isinstance(right, TensorValue)):
        return None
    shape = None
    if left.shape is not None and right.shape is not None:
        try:
            shape = MATMUL_KINDS[kind](left.shape, right.shape)
        except shapes.ShapeError:
            return None
    if left.dtype is not None and right.dtype is not None and left.dtype != right.dtype:
        return None  # products do not promote: PyTorch raises (TW504)
    if left.dtype == DType.bool:
        return None  # no bool matrix products
    if same_device(left.device, right.device) is False:
        return None  # TW204
    dtype = left.dtype if left.dtype is not None and left.dtype == right.dtype else None
    grad = result_grad(inf, left, right)
    return TensorValue(dtype, shape, combine_devices([left, right]), output_strides(shape, left, right), grad,
                       None if grad is None else not grad, left.why if dtype else None, None)


MATMUL_KINDS = {"matmul": shapes.matmul, "mm": shapes.mm, "bmm": shapes.bmm, "dot": shapes.dot, "mv": shapes.mv}


# -- calls -----------------------------------------------------------------------------------------------------
def call_qualified(inf, qualname: str, call: Call):
    handler = TORCH_FUNCTIONS.get(qualname)
    if handler is not None:
        return handler(inf, call)
    if qualname.startswith("torch.nn.functional."):
        name = qualname.rsplit(".", 1)[1]
        return saving_output(inf, name, functional(inf, name, call))
    if qualname.startswith("torch.nn.") and qualname.count(".") == 2:
        return layer(inf, qualname.rsplit(".", 1)[1], call)
    if qualname.startswith("torch.") and qualname.count(".") == 1:
        name = qualname[len("torch."):]
        if call.args and isinstance(call.args[0], TensorValue):
            # torch.<op>(t, ...) mirrors t.<op>(...) for the ops we know as methods.
            method = TENSOR_METHODS.get(name)
            if method is not None:
                return saving_output(inf, name, method(inf, call.args[0], _shifted(call)))
        return None
    if qualname.startswith("numpy."):
        return numpy_call(inf, qualname[len("numpy."):], call)
    return None


def _shifted(call: Call) -> Call:
    return Call(call.node, call.args[1:], call.kwargs, call.starred, call.env)


# Ops whose backward reads their own output: changing that output in place breaks backward (TW303).
# Each one is checked against real autograd in tests/test_truth_autograd.py.
SAVES_OUTPUT = frozenset({"exp", "exp2", "expm1", "sigmoid", "tanh", "softmax", "log_softmax", "relu", "sqrt",
                          "rsqrt", "reciprocal"})


def saving_output(inf, name: str, result):
    if name in SAVES_OUTPUT and isinstance(result, TensorValue) and result.requires_grad:
        return result.with_(saved_by=name)
    return result


def call_method(inf, name: str, receiver, call: Call):
    if isinstance(receiver, TensorValue):
        handler = TENSOR_METHODS.get(name)
        return saving_output(inf, name, handler(inf, receiver, call)) if handler is not None else None
    if isinstance(receiver, NdarrayValue):
        return ndarray_method(inf, name, receiver, call)
    if isinstance(receiver, ModuleValue):
        if name in ("to", "cuda", "cpu", "float", "double", "half", "train", "eval", "requires_grad_"):
            return module_converted(receiver, name, call)
        if name == "forward":
            return call_module(inf, receiver, call)
        if name == "parameters":
            return None
        return None
    if isinstance(receiver, InstanceValue) and name in ("to", "cuda", "cpu", "train", "eval"):
        return receiver
    if isinstance(receiver, SeqValue) and name in ("index", "count"):
        return ScalarValue("int")
    return None


def call_value(inf, callee, call: Call):
    if isinstance(callee, ModuleValue):
        return call_module(inf, callee, call)
    return None


def call_builtin(inf, name: str, call: Call):
    arg = call.get(0)
    if name == "len":
        if isinstance(arg, TensorValue):
            if arg.shape == ():
                return None  # len() of a 0-d tensor raises
            return ScalarValue("int", arg.shape[0] if arg.shape else None)
        if isinstance(arg, SeqValue) and arg.items is not None:
            return ScalarValue("int", len(arg.items))
        return ScalarValue("int")
    if name in ("int", "float", "bool", "complex", "str"):
        if name == "int" and isinstance(arg, ScalarValue) and arg.kind == "int":
            return arg
        return ScalarValue(name)
    if name in ("list", "tuple") and isinstance(arg, SeqValue):
        return SeqValue(name, arg.items)
    if name in ("max", "min", "sum", "abs", "round") and all(isinstance(a, ScalarValue) for a in call.args) \
            and call.args:
        kinds = {a.kind for a in call.args}
        if kinds <= {"int"}:
            return ScalarValue("int")
        if kinds <= {"int", "float"}:
            return ScalarValue("float")
    return None


# -- annotations ---------------------------------------------------------------------------------------------
_JAXTYPING_DTYPES = {"Float": None, "Float32": DType.float32, "Float64": DType.float64, "Float16": DType.float16,
                     "BFloat16": DType.bfloat16, "Int": None, "Int64": DType.int64, "Int32": DType.int32,
                     "Bool": DType.bool, "UInt8": DType.uint8, "Shaped": None, "Num": None, "Real": None}


def from_annotation(inf, annotation: ast.expr, scope, name: str):
    """A parameter's value from its annotation: ``torch.Tensor``, jaxtyping ``Float[Tensor, "b n"]``, ``int``."""
    qualname = scope.qualname(annotation)
    if qualname in ("torch.Tensor", "torch.FloatTensor"):
        return TensorValue(DType.float32 if qualname == "torch.FloatTensor" else None)
    if isinstance(annotation, ast.Name) and annotation.id == "int" and scope.owner_of("int") is None:
        return ScalarValue("int", Sym.var(name))
    if isinstance(annotation, ast.Name) and annotation.id in ("float", "bool", "str") \
            and scope.owner_of(annotation.id) is None:
        return ScalarValue(annotation.id)
    if isinstance(annotation, ast.Subscript):
        base = scope.qualname(annotation.value)
        if base and base.startswith("jaxtyping."):
            return _jaxtyping(inf, base.rsplit(".", 1)[1], annotation, scope)
    return None


def _jaxtyping(inf, kind: str, annotation: ast.Subscript, scope):
    if kind not in _JAXTYPING_DTYPES or not isinstance(annotation.slice, ast.Tuple) \
            or len(annotation.slice.elts) != 2:
        return None
    array, spec = annotation.slice.elts
    if scope.qualname(array) != "torch.Tensor" or not isinstance(spec, ast.Constant) \
            or not isinstance(spec.value, str):
        return None
    dims = []
    for token in spec.value.split():
        if token.isdigit():
            dims.append(int(token))
        elif token.isidentifier():
            dims.append(Sym.var(token))
        else:
            return TensorValue(_JAXTYPING_DTYPES[kind])  # variadic or named-expression dims: rank unknown
    return TensorValue(_JAXTYPING_DTYPES[kind], tuple(dims))


# The tables below are filled in by the ops_* modules (factories, tensor methods, layers).
TORCH_FUNCTIONS: dict = {}
TENSOR_METHODS: dict = {}


def functional(inf, name, call):
    from torchwise.analysis import ops_nn

    return ops_nn.functional(inf, name, call)


def layer(inf, name, call):
    from torchwise.analysis import ops_nn

    return ops_nn.layer(inf, name, call)


def call_module(inf, module, call):
    from torchwise.analysis import ops_nn

    return ops_nn.call_module(inf, module, call)


def module_converted(module, name, call):
    from torchwise.analysis import ops_nn

    return ops_nn.module_converted(module, name, call)


def numpy_call(inf, name, call):
    from torchwise.analysis import ops_numpy

    return ops_numpy.numpy_call(inf, name, call)


def ndarray_method(inf, name, receiver, call):
    from torchwise.analysis import ops_numpy

    return ops_numpy.ndarray_method(inf, name, receiver, call)


def _method_t(inf, receiver, name):
    from torchwise.analysis import ops_tensor

    return ops_tensor.transpose_attribute(inf, receiver, name)


def _register() -> None:
    from torchwise.analysis import ops_tensor  # noqa: F401  (fills the tables)


_register()
