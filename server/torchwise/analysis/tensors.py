"""Building tensor facts: the vocabulary every op module shares.

How arguments are read (``Call``, ``int_of``, ``dims_of``, dtype and device arguments), how a result
is made (``make_tensor`` for new memory, ``derived`` for a computed tensor: grad, layout, device),
and the element-wise machinery (broadcasting, PyTorch's type promotion, devices, in-place fits).
The op modules (``ops_families``, ``ops_tensor``, ``ops_nn``, ``ops_numpy``) build on this; the
dispatch from a call to its op lives in ``ops``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from torchwise.analysis import dtypes, layout, shapes
from torchwise.analysis.dims import Sym
from torchwise.analysis.dtypes import DType
from torchwise.analysis.values import DeviceValue, DtypeValue, ScalarValue, SeqValue, SymbolicValue, TensorValue


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


def certainly_raises(inf) -> None:
    """Tell the inference that the op being evaluated raises whatever its unknown sizes are (what decides a
    parameter's rank by trial); other evaluators of ops (the vectorizer's oracle, tests) ignore it."""
    tell = getattr(inf, "certainly_raises", None)
    if tell is not None:
        tell()


def constant(value):
    if value is None:
        return ScalarValue("none", None)
    kind = {bool: "bool", int: "int", float: "float", complex: "complex", str: "str"}.get(type(value))
    return ScalarValue(kind, value) if kind else None


def int_of(value):
    """The int (or symbolic dim) a value certainly is, else None. A symbolic value counts: read as a size it is
    its symbol (were it not an int, the op reading it would raise)."""
    if isinstance(value, ScalarValue) and value.kind == "int" and value.value is not None:
        return value.value
    if isinstance(value, SymbolicValue):
        return value.dim
    return None


def size_of(value):
    """An int where a sequence is accepted too (``torch.zeros(n)``, ``split(n)``, ``kernel_size=k``): a value
    known only by its name counts only when it is known to be an int (``torch.zeros(shape)`` may get a tuple)."""
    if isinstance(value, SymbolicValue) and not value.is_int:
        return None
    return int_of(value)


def dims_of(values) -> Optional[tuple]:
    """A size given as ``3, 4`` or ``(3, 4)`` or ``x.shape``: its dims, when every one is known."""
    if len(values) == 1 and isinstance(values[0], SeqValue):
        values = values[0].items
        if values is None:
            return None
    if len(values) == 1:
        dim = size_of(values[0])  # one size, or a whole shape given by name
        return None if dim is None else (dim,)
    dims = tuple(int_of(v) for v in values)
    return None if any(d is None for d in dims) else dims


def factory_dims(values) -> Optional[tuple]:
    """The shape a factory makes from ``3, n`` or ``(3, n)``: like ``dims_of``, and where there are several sizes
    a size not known is a size all the same (a fresh symbol): each must be an int of at least 0, or the factory
    raises. One size not known may be a whole shape (``torch.zeros(shape)``): no rank then."""
    dims = dims_of(values)
    if dims is not None:
        return dims
    if len(values) == 1 and isinstance(values[0], SeqValue):
        values = values[0].items
    if values is None or len(values) < 2 or any(isinstance(v, SeqValue) for v in values):
        return None
    return tuple(Sym.fresh("n") if d is None else d for d in map(int_of, values))


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


def literal_data(value):
    """(shape, kinds) of nested lists/tuples of Python numbers, or None."""
    if isinstance(value, ScalarValue) and value.kind in ("bool", "int", "float", "complex"):
        return (), {value.kind}
    if isinstance(value, SymbolicValue) and value.is_int:
        return (), {"int"}  # `[2 * window_size - 1, 1]`: a size
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


def size_value(shape, kind="size"):
    if shape is None:
        return SeqValue(kind)
    return SeqValue(kind, tuple(ScalarValue("int", d) for d in shape))


def row_of(tensor: TensorValue):
    """``t[i]`` for an int ``i``: the tensor without its first dimension."""
    if tensor.shape is None or len(tensor.shape) == 0:
        return None
    strides = tensor.strides[1:] if tensor.strides is not None else None
    return TensorValue(tensor.dtype, tensor.shape[1:], tensor.device, strides, tensor.requires_grad,
                       None if tensor.requires_grad is None else not tensor.requires_grad, tensor.why, None)


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


def inplace_fits(inf, current: TensorValue, operand_value, op: str) -> Optional[bool]:
    """Whether ``current <op>= operand`` can work: the result must fit back into ``current``. None: it cannot
    be told (a dtype unknown); where the line runs on, it worked, so ``current`` keeps its dtype and shape."""
    if current.requires_grad and inf.grad_enabled is not False and (
            current.is_leaf or (current.memory or "").startswith("a view")):
        return False  # a leaf that requires grad (TW302), or a view that may be of one
    if current.strides is not None and current.shape is not None and any(
            stride == 0 and not (isinstance(size, int) and size <= 1)
            for stride, size in zip(current.strides, current.shape)):
        return False  # expanded memory: several elements share one location, PyTorch refuses to write
    if current.dtype is None:
        return None
    other = operand_value.dtype if isinstance(operand_value, TensorValue) else (
        dtypes.python_scalar_dtype(operand_value.kind) if isinstance(operand_value, ScalarValue)
        and operand_value.kind in dtypes.PYTHON_SCALAR_TYPES else None)
    if other is None:
        return None
    if dtypes.category(other) > dtypes.category(current.dtype):
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
    # A product is computed into new memory, row-major whatever its inputs' layouts (checked with real torch).
    strides = None if shape is None or any(isinstance(d, int) and d == 0 for d in shape) else contiguous_strides(shape)
    return TensorValue(dtype, shape, combine_devices([left, right]), strides, grad,
                       None if grad is None else not grad, left.why if dtype else None, None)


MATMUL_KINDS = {"matmul": shapes.matmul, "mm": shapes.mm, "bmm": shapes.bmm, "dot": shapes.dot, "mv": shapes.mv}


# The hand-written transfer functions of the irregular ops (the CUSTOM rows of ``optable``, and ops outside
# the table), by qualified name (``torch.cat``) and by method name (``view``); ops_tensor fills them.
TORCH_FUNCTIONS: dict = {}
TENSOR_METHODS: dict = {}
