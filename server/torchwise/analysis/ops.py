"""From a call to its op: the dispatch of the facts engine.

A call of a table op (``optable``: element-wise, reductions, scans) is computed by its family
(``ops_families``); the irregular ops have hand-written transfer functions (``ops_tensor`` for
factories, views, products and conversions, ``ops_nn`` for layers and ``torch.nn.functional``,
``ops_numpy``), registered by name. Attributes, subscripts, operators and builtins are read here.
Anything not known returns ``None`` (unknown), never a guess.
"""

from __future__ import annotations

import ast
import operator

from torchwise.analysis import dims, dtypes, layout, ops_families, ops_nn, ops_numpy, ops_tensor, optable, shapes
from torchwise.analysis import ops_einops  # noqa: F401  (registers einops.* in TORCH_FUNCTIONS)
from torchwise.analysis.dims import Sym
from torchwise.analysis.dtypes import DType
from torchwise.analysis.layers import SEQUENCES
from torchwise.analysis.optable import Family
from torchwise.analysis.tensors import (  # noqa: F401  (the vocabulary, re-exported for the rules)
    MATMUL_KINDS, TENSOR_METHODS, TORCH_FUNCTIONS, Call, certainly_raises, constant, derived, device_arg, dims_of, dtype_arg,
    elementwise, inplace_fits, inplace_result, int_of, make_tensor, matmul_values, normalize_device, row_of,
    same_device, size_value,
)
from torchwise.analysis.values import (
    DeviceValue, DtypeValue, EitherValue, InstanceValue, LambdaValue, MappingValue, ModuleValue, NdarrayValue,
    PartialValue,
    ScalarValue, SeqValue, SumValue, SymbolicValue, TensorValue, join,
)

MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
MODULE_CONVERSIONS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16"})
INPLACE_SHAPE_METHODS = frozenset({
    "resize_", "resize_as_", "unsqueeze_", "squeeze_", "t_", "transpose_", "set_", "as_strided_",
    "swapdims_", "swapaxes_",
})


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
            return ops_tensor.transpose_attribute(inf, receiver, name)
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
        return receiver.param(name) or (receiver.child(name) if receiver.kind == "ModuleDict" else None) \
            or _module_setting(receiver, name)
    if isinstance(receiver, SymbolicValue) and isinstance(receiver.dim, Sym) and len(receiver.dim.symbols) == 1 \
            and receiver.dim == Sym.var(next(iter(receiver.dim.symbols))):
        # `config.n_embd` of a config nobody passes facts to: a size named after it (if it is used as one),
        # an int where a config class of this file says so (`n_embd: int = 768`).
        return SymbolicValue(Sym.var(f"{next(iter(receiver.dim.symbols))}.{name}"), inf._read("int field", name))
    if isinstance(receiver, SeqValue) and receiver.fields is not None and name in receiver.fields \
            and receiver.items is not None:
        return receiver.items[receiver.fields.index(name)]  # `x.max(dim=1).values`
    if isinstance(receiver, DeviceValue) and name == "type" and receiver.device:
        return ScalarValue("str", receiver.device.split(":")[0])
    return None


def _module_setting(module: ModuleValue, name: str):
    value = module.setting(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return ScalarValue("int", value)
    return None


# -- unpacking and iteration ----------------------------------------------------------------------------------
def unpack(inf, value, count: int):
    if isinstance(value, SeqValue) and value.items is not None and len(value.items) == count:
        return list(value.items)
    if isinstance(value, SeqValue) and value.items is None and value.length == count and value.element is not None:
        return [value.element] * count
    if isinstance(value, ModuleValue) and value.children is not None and len(value.children) == count:
        return list(value.children)
    if isinstance(value, TensorValue) and value.shape and isinstance(value.shape[0], int) \
            and value.shape[0] == count:
        return [row_of(value)] * count
    return None


def unpack_starred(value, count: int, star: int) -> Optional[list]:
    """``a, *rest, b = value`` (``count`` targets, the starred one at ``star``): what each target gets, the
    starred one a list of what is left between; None unless every item is known and enough are there."""
    if not (isinstance(value, SeqValue) and value.items is not None and value.kind != "iterator") \
            or len(value.items) < count - 1:
        return None
    items, after = list(value.items), count - 1 - star
    middle = SeqValue("list", tuple(items[star:len(items) - after]))
    return items[:star] + [middle] + items[len(items) - after:]


def iteration_item(inf, iter_node: ast.expr, iterable, env):
    if isinstance(iterable, TensorValue):
        return row_of(iterable)
    if isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Name) \
            and iter_node.func.id == "range" and env.scope.owner_of("range") is None:
        return ScalarValue("int")
    if isinstance(iterable, SeqValue):
        return iterable.each
    if isinstance(iterable, ModuleValue) and iterable.kind in SEQUENCES:
        return iterable.each  # `for block in self.h`, `for p in self.slots` (a ParameterList)
    if isinstance(iterable, MappingValue) and iterable.items:
        return ScalarValue("str")
    return None


def _zipped(name: str, args: list) -> Optional[SeqValue]:
    """``zip(a, b)`` / ``enumerate(a)``: an iterator of tuples of what each item of the inputs is."""
    if name == "enumerate":
        if len(args) != 1:
            return None
        args = [None, args[0]]
    elements, lengths = [], []
    for i, arg in enumerate(args):
        if name == "enumerate" and i == 0:
            elements.append(ScalarValue("int"))
            continue
        if isinstance(arg, TensorValue):
            if arg.shape == ():
                return None  # iterating a 0-d tensor raises
            elements.append(row_of(arg))
            lengths.append(arg.shape[0] if arg.shape else None)
        elif isinstance(arg, SeqValue):
            elements.append(arg.each)
            lengths.append(len(arg.items) if arg.items is not None else arg.length)
        elif isinstance(arg, ModuleValue) and arg.kind in SEQUENCES:
            elements.append(arg.each)
            lengths.append(len(arg.children) if arg.children is not None else None)
        else:
            elements.append(None)
            lengths.append(None)
    same = lengths and all(n is not None for n in lengths) and all(n == lengths[0] for n in lengths)
    return SeqValue("iterator", element=SeqValue("tuple", tuple(elements)), length=lengths[0] if same else None)


def iteration_length(inf, iter_node: ast.expr, iterable):
    """How many times a loop over ``iterable`` runs, when known: ``range(n)``, a tensor's first dim, a list."""
    if isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Name) and iter_node.func.id == "range" \
            and len(iter_node.args) == 1 and not iter_node.keywords:
        count = int_of(inf.values.get(iter_node.args[0]))
        return count if count is not None and (not isinstance(count, int) or count >= 0) else None
    if isinstance(iterable, TensorValue) and iterable.shape:
        return iterable.shape[0]
    if isinstance(iterable, SeqValue):
        return len(iterable.items) if iterable.items is not None else iterable.length
    if isinstance(iterable, ModuleValue) and iterable.kind in SEQUENCES and iterable.children is not None:
        return len(iterable.children)
    return None


# -- subscripts -------------------------------------------------------------------------------------------
def subscript(inf, node: ast.Subscript, receiver, index, env):
    if isinstance(receiver, ModuleValue):  # self.layers[0], self.blocks["attn"]
        key = index.value if isinstance(index, ScalarValue) and isinstance(index.value, (int, str)) else None
        return receiver.child(key) if key is not None and not isinstance(key, bool) else None
    if isinstance(receiver, MappingValue):
        key = index.value if isinstance(index, ScalarValue) else None
        return dict(receiver.items).get(key) if isinstance(key, str) else None
    if isinstance(receiver, SeqValue) and receiver.items is None and receiver.element is not None \
            and isinstance(int_of(index), int):
        return receiver.element  # an item of a list made by a comprehension (or PyTorch raises)
    if isinstance(receiver, SeqValue) and receiver.items is None and receiver.element is not None \
            and receiver.kind in ("list", "tuple") and isinstance(node.slice, ast.Slice):
        return SeqValue(receiver.kind, element=receiver.element)  # `rewards[::-1]`: some of those items
    if isinstance(receiver, SeqValue):
        position = int_of(index)
        if receiver.items is not None and isinstance(position, int) and -len(receiver.items) <= position \
                < len(receiver.items):
            return receiver.items[position]
        if receiver.kind == "size" and receiver.items is not None and isinstance(position, int) \
                and not isinstance(node.slice, ast.Slice):
            certainly_raises(inf)  # `x.shape[-2]` of a 1-d x: IndexError
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
                if not isinstance(value, (int, Sym)):
                    return None
                bounds.append(value)  # a symbolic bound (`x[:T]`): the slice's length is then computed or fresh
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
            elif isinstance(value, TensorValue) and value.dtype in _INDEX_DTYPES and value.shape is not None:
                # x[ids]; a 0-d index is an int (PyTorch selects with it: it takes no part in an advanced index)
                items.append(shapes.Gather(value.shape) if value.shape else Sym.fresh("i"))
            elif isinstance(value, SeqValue) and value.kind == "list" and value.items \
                    and all(isinstance(int_of(i), int) and isinstance(i, ScalarValue) for i in value.items):
                items.append(shapes.Take(tuple(int_of(i) for i in value.items)))  # x[:, [-1], :]
            else:
                return None
    return items


_INDEX_DTYPES = (DType.int64, DType.int32)


def index_tensor(inf, node: ast.Subscript, tensor: TensorValue):
    items = index_items(inf, node)
    if items is None or tensor.shape is None:
        return None
    try:
        shape = shapes.index(tensor.shape, items)
    except shapes.ShapeError as error:
        if "indices" in error.data:  # `x[:, :1]` of a 1-d x: more indices than dims, whatever the sizes
            certainly_raises(inf)
        return None
    if shape is None:
        return None
    basic = not any(isinstance(i, (shapes.Mask, shapes.Take, shapes.Gather)) for i in items)
    strides = layout.index_strides(tensor.shape, tensor.strides, items) if basic and tensor.strides else None
    return TensorValue(tensor.dtype, shape, tensor.device, strides if basic else None,
                       tensor.requires_grad, None if tensor.requires_grad is None else not tensor.requires_grad,
                       tensor.why, "a view: shares memory with its input" if basic else None)


# -- arithmetic ----------------------------------------------------------------------------------------------
_ARITHMETIC = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
               ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
               ast.LShift: "lshift", ast.RShift: "rshift"}


def binary(inf, node, op, left, right):
    if isinstance(op, ast.MatMult):
        return matmul_values(inf, left, right)
    name = _ARITHMETIC.get(type(op))
    if name is None:
        return None
    if isinstance(left, SumValue) or isinstance(right, SumValue):
        return _sum_either(inf, node, op, left, right)
    if isinstance(left, TensorValue) or isinstance(right, TensorValue):
        if isinstance(left, NdarrayValue) or isinstance(right, NdarrayValue):
            return None
        # `t / (dim // 4 - 1)`: a size known by name is a Python int
        left, right = (ScalarValue("int", v.dim) if isinstance(v, SymbolicValue) and v.is_int else v
                       for v in (left, right))
        return elementwise(inf, [left, right], name)
    if isinstance(left, NdarrayValue) or isinstance(right, NdarrayValue):
        return ndarray_binary(left, right)
    if name == "mul" and (isinstance(left, SeqValue) or isinstance(right, SeqValue)):
        return _repeated(left, right)
    if isinstance(left, SymbolicValue) or isinstance(right, SymbolicValue):
        return symbolic_arithmetic(name, left, right)
    if isinstance(left, ScalarValue) and isinstance(right, ScalarValue):
        return scalar_binary(name, left, right)
    if isinstance(left, SeqValue) and isinstance(right, SeqValue) and name == "add" and left.kind == right.kind \
            and left.kind in ("list", "tuple", "size"):
        if left.items is not None and right.items is not None:
            return SeqValue(left.kind, left.items + right.items)
        return SeqValue(left.kind)
    return None


def _repeated(left, right):
    """``(1,) * (x.ndim - 1)`` / ``[None] * n``: the items over again, ``n`` times (none for ``n <= 0``); for an
    int not known, a sequence of those items of a length not known."""
    seq, times = (left, right) if isinstance(left, SeqValue) else (right, left)
    if not isinstance(seq, SeqValue) or seq.kind not in ("list", "tuple") or seq.items is None \
            or not isinstance(times, ScalarValue) or times.kind not in ("int", "bool"):
        return None
    count = times.value
    if type(count) is bool:
        count = int(count)
    if type(count) is int:
        length = len(seq.items) * max(count, 0)
        if length > 64:  # ([0] * 1000): what every item is, and how many
            return SeqValue(seq.kind, element=seq.each, length=length)
        return SeqValue(seq.kind, seq.items * max(count, 0))
    return SeqValue(seq.kind, element=seq.each) if seq.items else SeqValue(seq.kind, ())


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
            quotient = dims.floordiv(a, b)  # `C // n_head` stays exact: one symbol for the quotient
            return ScalarValue("int", quotient) if quotient is not None else ScalarValue("int")
        except (TypeError, ZeroDivisionError):
            pass
    return ScalarValue(kind)


def symbolic_arithmetic(name: str, left, right):
    """Size arithmetic with a symbolic value (``3 * config.n_embd``, ``C // self.n_head``): symbolic too, exact."""
    if not all(isinstance(v, (ScalarValue, SymbolicValue)) for v in (left, right)):
        return None
    # int op int is an int (a Python number that is no int makes the result no size at all)
    ints = all(v.kind in ("int", "bool") if isinstance(v, ScalarValue) else v.is_int for v in (left, right))
    if name in ("div", "pow") and (ints or all(isinstance(v, SymbolicValue) and v.is_int
                                                or isinstance(v, ScalarValue) and v.kind in ("int", "float", "bool")
                                                for v in (left, right))):
        # `dim_head ** -0.5`, `C / n_head`: a Python float (an int power of an int stays an int: dim ** 2)
        other = right if isinstance(left, SymbolicValue) else left
        if name == "pow" and isinstance(other, ScalarValue) and other.kind == "int" and isinstance(other.value, int) \
                and other.value >= 0 and isinstance(left, SymbolicValue):
            return SymbolicValue(dims.product([left.dim] * other.value), True) if other.value < 8 else None
        return ScalarValue("float")
    a, b = int_of(left), int_of(right)
    if a is None or b is None:
        return None
    if name == "add":
        return _size_value(a + b, ints)
    if name == "sub":
        return _size_value(a - b, ints)
    if name == "mul":
        return _size_value(a * b, ints)
    if name == "floordiv":
        quotient = dims.floordiv(a, b)
        return _size_value(quotient, ints) if quotient is not None else None
    return None


def _size_value(dim, is_int: bool):
    """A size computed from sizes: a plain int when the symbols cancel (``in_chs // in_chs`` is 1)."""
    if is_int and type(dim) is int:
        return ScalarValue("int", dim)
    return SymbolicValue(dim, is_int)


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
    if name is None:
        return None
    unknown = operand_value is None or isinstance(operand_value, (SymbolicValue, SumValue))
    fits = inplace_fits(inf, current, ScalarValue("bool") if unknown else operand_value, name)
    if fits is False:
        return None  # PyTorch raises: a leaf that requires grad, expanded memory, a result that cannot be cast back
    if unknown or fits is None:
        # `x += self.pos_embedding` with the operand (or a dtype) unknown: where the line runs on, the result fit
        # back into x, which keeps its dtype, shape and device.
        return current if current.requires_grad else current.with_(requires_grad=None, is_leaf=None, saved_by=None)
    return inplace_result(inf, current, [operand_value])


def unary(inf, node: ast.UnaryOp, value):
    if isinstance(value, TensorValue):
        if isinstance(node.op, ast.Not):
            return ScalarValue("bool")
        if isinstance(node.op, ast.USub) and value.dtype == DType.bool:
            return None  # -bool raises (use ~)
        return derived(inf, value)
    if isinstance(value, ScalarValue):
        if isinstance(node.op, ast.Not):
            known = value.value if value.kind in ("bool", "int", "none") and not isinstance(value.value, Sym) else None
            return ScalarValue("bool", not known if known is not None or value.kind == "none" else None)
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


_NEVER_NONE = (TensorValue, ModuleValue, InstanceValue, SeqValue, DeviceValue, DtypeValue, NdarrayValue, LambdaValue,
               MappingValue)


def _is_none(value):
    """True / False when the facts say whether ``value`` is None, else None (unknown, or either)."""
    if isinstance(value, ScalarValue):
        return value.kind == "none"
    return False if isinstance(value, _NEVER_NONE) else None


def compare(inf, node: ast.Compare, values):
    identity = isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn))
    if len(values) == 2 and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) \
            and any(isinstance(side, ast.Constant) and side.value is None for side in (node.left, *node.comparators)):
        # `val is not None` where the facts know val (a tensor, or the None passed in): `exists(ctx)` decided
        other = values[1] if isinstance(node.left, ast.Constant) and node.left.value is None else values[0]
        known = _is_none(other)
        if known is not None:
            return ScalarValue("bool", known == isinstance(node.ops[0], ast.Is))
    if len(values) == 2 and any(isinstance(v, TensorValue) for v in values) and not identity:
        kind = "compare" if isinstance(node.ops[0], (ast.Eq, ast.NotEq)) else "order"
        return elementwise(inf, values, kind, result_dtype=DType.bool)
    if identity or all(isinstance(v, ScalarValue) for v in values):
        return ScalarValue("bool", None if identity else _decided_compare(node.ops, values))
    return None  # an unknown operand may be a tensor, and then the result is one too


_COMPARISONS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
                ast.Gt: operator.gt, ast.GtE: operator.ge}


def _decided_compare(comparisons, values):
    """``x.ndim == 4``, ``self.pool == 'mean'``: True / False when every operand is a constant (not a symbol), as
    Python computes it, else None."""
    constants = [v.value for v in values]
    if any(type(c) not in (int, float, bool, str) for c in constants):
        return None
    try:
        return all(_COMPARISONS[type(op)](a, b) for op, a, b in zip(comparisons, constants, constants[1:]))
    except (KeyError, TypeError):
        return None


# -- calls -----------------------------------------------------------------------------------------------------
def call_qualified(inf, qualname: str, call: Call):
    handler = TORCH_FUNCTIONS.get(qualname)
    if handler is not None:
        return handler(inf, call)
    if qualname.startswith("torch.nn.functional."):
        name = qualname.rsplit(".", 1)[1]
        op = optable.functional(name)
        if op is not None and op.family is not Family.CUSTOM:
            return ops_families.apply(inf, op, call)
        return ops_nn.functional(inf, name, call)
    if qualname.startswith("torch.nn.") and qualname.count(".") == 2:
        return ops_nn.layer(inf, qualname.rsplit(".", 1)[1], call)
    if qualname.startswith("torch.nn.") and qualname.count(".") == 3:  # nn.init.*, nn.Embedding.from_pretrained
        return ops_nn.qualified(inf, qualname[len("torch.nn."):], call)
    if qualname.startswith("torch.") and qualname.count(".") == 1:
        name = qualname[len("torch."):]
        op = optable.function(name)
        if op is not None and op.family is not Family.CUSTOM:
            return ops_families.apply(inf, op, call)
        if call.args and isinstance(call.args[0], TensorValue):
            # torch.<op>(t, ...) mirrors t.<op>(...) for the irregular ops known as methods.
            method = TENSOR_METHODS.get(name)
            if method is not None:
                return method(inf, call.args[0], _shifted(call))
        return None
    if qualname.startswith("numpy."):
        return ops_numpy.numpy_call(inf, qualname[len("numpy."):], call)
    return None


def _shifted(call: Call) -> Call:
    return Call(call.node, call.args[1:], call.kwargs, call.starred, call.env)


def call_method(inf, name: str, receiver, call: Call):
    if isinstance(receiver, TensorValue):
        op = optable.method(name)
        if op is not None and op.family is not Family.CUSTOM:
            return ops_families.apply(inf, op, call, receiver=receiver)
        handler = TENSOR_METHODS.get(name)
        if handler is not None:
            return handler(inf, receiver, call)
        if optable.inplace(name) is not None:
            return inplace_result(inf, receiver, call.args)  # `t.add_(x)` writes into t: dtype, shape and device stay
        return None
    if isinstance(receiver, NdarrayValue):
        return ops_numpy.ndarray_method(inf, name, receiver, call)
    if isinstance(receiver, ModuleValue):
        if name in ("to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_"):
            return ops_nn.module_converted(receiver, name, call)
        if name == "forward":
            return ops_nn.call_module(inf, receiver, call)
        child = receiver.child(name) if receiver.kind == "ModuleDict" else None
        return call_value(inf, child, call) if child is not None else None
    if isinstance(receiver, InstanceValue) and name in ("to", "cuda", "cpu", "train", "eval") \
            and inf._is_module_class(receiver.class_name):
        return receiver
    if isinstance(receiver, SeqValue) and name in ("index", "count"):
        return ScalarValue("int")
    return None


def call_value(inf, callee, call: Call):
    if isinstance(callee, ModuleValue):
        return ops_nn.call_module(inf, callee, call)
    if isinstance(callee, InstanceValue):
        return inf.call_instance(callee, call)  # a module of this file: its forward, with these arguments
    if isinstance(callee, LambdaValue):
        return inf.call_lambda(callee, call)
    if isinstance(callee, PartialValue):
        keywords = {**dict(callee.keywords), **call.kwargs}  # (the call's own win)
        return call_qualified(inf, callee.qualname, Call(call.node, call.args, keywords, call.starred, call.env))
    if isinstance(callee, EitherValue):  # one of these modules: what their calls agree on
        # Each option as a branch of its own: one that certainly raises is not the one a call that returns ran
        # (all raising, the call does); an error in one rules no rank out of a trial while another runs.
        # Calling the None of a sub-module some blocks lack raises TypeError: a call that returns ran a module.
        runs = [inf._branch(lambda option=option: call_value(inf, option, call)) if not _is_none(option)
                else (None, True) for option in callee.options]
        if all(raised for _, raised in runs):
            inf.certainly_raises()
            return None
        results = [result for result, raised in runs if not raised]
        result = results[0]
        for other in results[1:]:
            result = join(result, other)
        if isinstance(result, TensorValue) and result.shape is None:
            result = _same_rank(call, results, result)
        return result
    return None


def _same_rank(call: Call, results: list, joined: TensorValue) -> TensorValue:
    """Outputs of one rank whose sizes differ (a Linear's ``dim`` or an Identity's ``inner_dim``): that rank, each
    differing size a symbol of this call's own (the module is fixed, so one size per evaluation of the call)."""
    shapes_seen = [r.shape for r in results if isinstance(r, TensorValue)]
    if len(shapes_seen) != len(results) or None in shapes_seen or len({len(s) for s in shapes_seen}) != 1:
        return joined
    dims_out = []
    for position, column in enumerate(zip(*shapes_seen)):
        same = all(d == column[0] for d in column)
        dims_out.append(column[0] if same else Sym.var(f"n#{abs(hash((id(call.node), position))) % 10 ** 12}"))
    return joined.with_(shape=tuple(dims_out))


def _summed(inf, items):
    total = ScalarValue("int", 0)
    for item in items:
        total = elementwise(inf, [total, item], "add")
        if total is None:
            return None
    return total


def _sum_either(inf, node, op, left, right):
    """Arithmetic with a :class:`SumValue`: the op on ``0`` and on the total; where both give tensors, what they
    agree on (``sum(branches) + x``: ``x`` with no branch, ``total + x`` with some)."""
    if isinstance(left, SumValue) and isinstance(right, SumValue):
        return None
    results = []
    with inf._on_some_paths():  # (one of the two may raise: it is then not the one that runs)
        for zero in (True, False):
            operands = [(ScalarValue("int", 0) if zero else v.total) if isinstance(v, SumValue) else v
                        for v in (left, right)]
            results.append(binary(inf, node, op, *operands))
    if not all(isinstance(r, TensorValue) for r in results):
        return None
    joined = join(*results)
    if joined.shape is None and node is not None:  # one rank, sizes differing: a size of this line's own
        joined = _same_rank(Call(node, [], {}, False, None), results, joined)
    return joined


def call_builtin(inf, name: str, call: Call):
    arg = call.get(0)
    if name == "dict" and not call.args and not call.starred:
        return MappingValue(tuple(call.kwargs.items()))
    if name == "len" and isinstance(arg, SeqValue) and arg.items is None and arg.length is not None:
        return ScalarValue("int", arg.length)
    if name == "len" and isinstance(arg, ModuleValue) and arg.children is not None:
        return ScalarValue("int", len(arg.children))
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
        return SeqValue(name, arg.items, element=arg.element, length=arg.length)
    if name in ("zip", "enumerate") and call.args and not call.starred \
            and set(call.kwargs) <= ({"start"} if name == "enumerate" else {"strict"}):
        # (`enumerate(xs, start=1)` / `enumerate(xs, 1)` counts from elsewhere; `zip(..., strict=True)` only raises)
        return _zipped(name, call.args[:1] if name == "enumerate" and len(call.args) == 2 else call.args)
    if name == "sum" and len(call.args) == 1 and not call.kwargs and not call.starred and isinstance(arg, SeqValue):
        # `sum([fn(x) for fn in self.fns])`: 0 + t1 + t2 + ..., left to right as Python adds them (items all alike:
        # two of them tell what any more make; an empty list would give 0, so its length must be known)
        alike = isinstance(arg.length, int) and arg.length >= 1 and arg.element is not None
        items = arg.items if arg.items is not None else (arg.element,) * min(arg.length, 2) if alike else ()
        if not items and arg.items is None and arg.length is None and isinstance(arg.element, TensorValue):
            # A count not known: 0 for none, else what one item gives and what two give agree on (any more add
            # nothing new), worked out on some paths only (an error there is not certain).
            with inf._on_some_paths():
                one, two = (_summed(inf, (arg.element,) * n) for n in (1, 2))
            total = join(one, two)
            return SumValue(total) if isinstance(total, TensorValue) else None
        if not items or not all(isinstance(i, TensorValue) for i in items):
            return None
        return _summed(inf, items)
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
        if base == "torchtyping.TensorType":
            return _torchtyping(annotation, scope)
    return None


def _torchtyping(annotation: ast.Subscript, scope):
    """``TensorType["batch", "seq", 512, float]``: named and fixed dims, and a dtype."""
    parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    dims, dtype = [], None
    for part in parts:
        if isinstance(part, ast.Constant) and isinstance(part.value, str) and part.value.isidentifier():
            dims.append(Sym.var(part.value))
        elif isinstance(part, ast.Constant) and type(part.value) is int and part.value >= 0:
            dims.append(part.value)
        elif isinstance(part, ast.Name) and part.id in ("float", "int", "bool") and scope.owner_of(part.id) is None:
            dtype = {"float": None, "int": DType.int64, "bool": DType.bool}[part.id]  # float: whichever default
        elif scope.qualname(part) is not None and qualified_constant(scope.qualname(part)) is not None:
            constant_value = qualified_constant(scope.qualname(part))
            if not isinstance(constant_value, DtypeValue):
                return TensorValue()
            dtype = constant_value.dtype
        else:
            return TensorValue(dtype)  # `...`, `"batch": 3`, slices: the rank is not fixed
    return TensorValue(dtype, tuple(dims))


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
