"""einops calls and layers: ``rearrange``, ``repeat``, ``reduce``, ``einsum``, ``pack``, ``unpack``, and the
``Rearrange`` / ``Reduce`` layers of ``einops.layers.torch``.

Importing this module registers the functions in ``TORCH_FUNCTIONS`` by qualified name; the layers'
forward is :func:`call_einops_layer`. Shapes come from ``einops_shapes``; a result keeps its input's dtype
(reductions follow torch's: ``sum`` of ints is int64, ``any`` is bool) and device. Strides follow the very
torch calls einops makes (reshape, permute, unsqueeze, expand, reshape) through ``layout``; after a
reduction, or for pieces of ``unpack``, they are unknown.

The rule TW507 asks :func:`call_error` / :func:`layer_error` for what einops would raise, read the same way.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from torchwise.analysis import einops_shapes as E
from torchwise.analysis import layout, shapes
from torchwise.analysis.dtypes import DType
from torchwise.analysis.shapes import ShapeError
from torchwise.analysis.tensors import (
    TORCH_FUNCTIONS, Call, certainly_raises, constant, derived, int_of, size_value,
)
from torchwise.analysis.values import EitherValue, ModuleValue, NdarrayValue, ScalarValue, SeqValue, TensorValue

FUNCTIONS = ("rearrange", "repeat", "reduce", "einsum", "pack", "unpack")
LAYERS = ("Rearrange", "Reduce")  # einops.layers.torch has no Repeat layer
# Where einops defines each name, besides the package itself (``from einops.einops import rearrange``).
_HOMES = {"rearrange": "einops.einops", "repeat": "einops.einops", "reduce": "einops.einops",
          "einsum": "einops.einops", "pack": "einops.packing", "unpack": "einops.packing"}
LAYER_KIND_PREFIX = "einops."
LAYER_KINDS = frozenset(f"{LAYER_KIND_PREFIX}{name}" for name in LAYERS)  # ModuleValue.kind: "einops.Rearrange"
_FLOATS = frozenset({DType.float16, DType.float32, DType.float64, DType.bfloat16})  # einops' is_float_type


def qualified_names(name: str) -> Tuple[str, ...]:
    if name in LAYERS:
        return (f"einops.layers.torch.{name}",)
    return (f"einops.{name}", f"{_HOMES[name]}.{name}")


def einops_function(qualname: Optional[str]) -> Optional[str]:
    """``rearrange`` for ``einops.rearrange`` (any of its homes), None for anything else."""
    for name in FUNCTIONS + LAYERS:
        if qualname in qualified_names(name):
            return name
    return None


# -- reading a call ------------------------------------------------------------------------------------------
def _string(value) -> Optional[str]:
    return value.value if isinstance(value, ScalarValue) and isinstance(value.value, str) else None


def _axis_lengths(call: Call, taken: Tuple[str, ...]) -> Optional[Dict[str, object]]:
    """The keyword sizes (``h=8``): an int or a Sym, or None where the value is unknown; None when
    the names themselves are unknown (``**sizes``)."""
    if any(k.arg is None for k in call.node.keywords):
        return None
    return {name: int_of(value) for name, value in call.kwargs.items() if name not in taken}


@dataclass(frozen=True)
class _Transform:
    """A call of rearrange / repeat / reduce, read: what einops gets."""

    source: object  # a TensorValue, or the list of tensors einops stacks
    pattern: str
    operation: str
    axes: Dict[str, object]


def _read_transform(name: str, call: Call) -> Optional[_Transform]:
    if call.starred:
        return None
    source, pattern = call.get(0, "tensor"), _string(call.get(1, "pattern"))
    taken = ("tensor", "pattern")
    operation: Optional[str] = name
    if name == "reduce":
        operation, taken = _string(call.get(2, "reduction")), taken + ("reduction",)
    if pattern is None or operation is None or len(call.args) > (3 if name == "reduce" else 2):
        return None  # a callable reduction, or a pattern we cannot read
    axes = _axis_lengths(call, taken)
    return None if axes is None else _Transform(source, pattern, operation, axes)


def _input(inf, source) -> Optional[TensorValue]:
    """The tensor einops works on: the tensor, or ``torch.stack`` of a list of them."""
    if isinstance(source, TensorValue):
        return source
    if not (isinstance(source, SeqValue) and source.kind == "list" and source.items):
        return None
    items = source.items
    if not all(isinstance(t, TensorValue) for t in items):
        return None
    try:
        shape = shapes.stack([t.shape for t in items])
    except ShapeError:
        return None  # torch.stack raises
    dtypes_seen = {t.dtype for t in items}
    devices = {t.device for t in items}
    first = items[0]
    return derived(inf, first, *items[1:], dtype=first.dtype if len(dtypes_seen) == 1 else None, shape=shape,
                   device=first.device if len(devices) == 1 else None)


def _unless_none(source):
    """A tensor attribute some instances lack (``Tensor or None``): einops raises on None (``Tensor type unknown to
    einops``), so a call that returns had the tensor."""
    if isinstance(source, EitherValue) and source.may_be_none and isinstance(source.without_none(), TensorValue):
        return source.without_none()
    return source


def _source_shape(inf, source):
    """The shape einops reads (a tensor, a numpy array, a stacked list); None when unknown."""
    if isinstance(source, NdarrayValue):
        return source.shape
    x = _input(inf, source)
    return None if x is None else x.shape


# -- the result ----------------------------------------------------------------------------------------------
def _step(fn, *args):
    try:
        return fn(*args)
    except ShapeError:
        return None


def plan_strides(x: TensorValue, plan: E.Plan) -> Optional[tuple]:
    """The result's strides, through einops' torch calls one by one; None when unknown (or reduced)."""
    if x.strides is None or plan.reduced:
        return None
    shape, strides = plan.input, x.strides
    if plan.init_shape is not None:
        strides, shape = _step(layout.reshape_strides, shape, strides, plan.init_shape), plan.init_shape
    if plan.permutation is not None and strides is not None:
        strides = _step(layout.permute_strides, shape, strides, plan.permutation)
        shape = tuple(shape[d] for d in plan.permutation)
    if plan.added and strides is not None:
        strides, shape = _added_axes(shape, strides, plan.added)
    if plan.final_shape is not None and strides is not None:
        strides = _step(layout.reshape_strides, shape, strides, plan.final_shape)
    return strides


def _added_axes(shape, strides, added):
    """einops' ``add_axes``: ``unsqueeze`` at each new position, then ``expand`` with ``-1`` elsewhere."""
    for position, _ in added:
        strides = _step(layout.unsqueeze_strides, shape, strides, position)
        if strides is None:
            return None, shape
        shape = shape[:position] + (1,) + shape[position:]
    sizes, target = [-1] * len(shape), list(shape)
    for position, length in added:
        sizes[position] = target[position] = length
    return _step(layout.expand_strides, shape, strides, sizes), tuple(target)


def reduced_dtype(operation: str, dtype, *, layer: bool = False):
    """The dtype after einops reduces (torch's reductions); None when unknown or when it raises."""
    if dtype is None:
        return None
    if operation in ("min", "max"):  # amin / amax: no complex kernels
        return None if dtype in (DType.complex64, DType.complex128) else dtype
    if operation in ("sum", "prod"):
        return DType.int64 if dtype in _INTEGRAL else dtype
    if operation == "mean":
        if layer:  # the layers call x.mean() directly: floats and complex
            return dtype if dtype in _FLOATS or dtype in (DType.complex64, DType.complex128) else None
        return dtype if dtype in _FLOATS else None  # einops refuses the rest (NotImplementedError)
    if operation in ("any", "all") and not layer:
        return DType.uint8 if dtype == DType.uint8 else DType.bool
    return None


_INTEGRAL = frozenset({DType.bool, DType.uint8, DType.int8, DType.int16, DType.int32, DType.int64})


def _plan_value(inf, x: TensorValue, plan: E.Plan, operation: str, *, layer: bool = False) -> Optional[TensorValue]:
    dtype = x.dtype
    if plan.reduced and dtype is not None:
        dtype = reduced_dtype(operation, x.dtype, layer=layer)
        if dtype is None:
            return None  # torch has no such reduction for this dtype: einops raises
    return derived(inf, x, dtype=dtype, shape=plan.shape, strides=plan_strides(x, plan),
                   why=x.why if dtype == x.dtype else None)


def _transform(name: str):
    def handler(inf, call: Call):
        request = _read_transform(name, call)
        x = None if request is None else _input(inf, _unless_none(request.source))
        if x is None:
            return None
        try:
            plan = E.plan(x.shape, request.pattern, request.operation, request.axes)
        except ShapeError:
            certainly_raises(inf)
            return None  # einops raises (TW507 says so)
        return None if plan is None else _plan_value(inf, x, plan, request.operation)
    return handler


# -- einops.einsum ---------------------------------------------------------------------------------------------
def _read_einsum(call: Call) -> Optional[Tuple[list, str]]:
    if call.starred or call.kwargs or len(call.args) < 2:
        return None
    pattern = _string(call.args[-1])
    return None if pattern is None else (list(call.args[:-1]), pattern)


def _einops_einsum(inf, call: Call):
    """The pattern made torch's (``b h i d, b h j d -> b h i j`` to ``abcd,abed->abce``), then torch.einsum."""
    read = _read_einsum(call)
    if read is None:
        return None
    operands, pattern = read
    try:
        equation = E.compact_einsum(pattern)
    except ShapeError:
        return None
    torch_einsum = TORCH_FUNCTIONS.get("torch.einsum")
    if torch_einsum is None:
        return None
    return torch_einsum(inf, Call(call.node, [constant(equation), *operands], {}, False, call.env))


# -- pack / unpack -------------------------------------------------------------------------------------------
def _read_pack(call: Call) -> Optional[Tuple[list, str]]:
    if call.starred or len(call.args) + len(call.kwargs) != 2:
        return None
    tensors, pattern = call.get(0, "tensors"), _string(call.get(1, "pattern"))
    if pattern is None or not isinstance(tensors, SeqValue) or tensors.items is None:
        return None
    return list(tensors.items), pattern


def _pack(inf, call: Call):
    read = _read_pack(call)
    if read is None:
        return None
    tensors, pattern = read
    # (an unknown item is a tensor when pack returns: einops reshapes each with the first one's backend, torch)
    if not tensors or not isinstance(tensors[0], TensorValue) \
            or not all(isinstance(t, TensorValue) or t is None for t in tensors):
        return None
    try:
        shape, packed = E.pack([t.shape if t is not None else None for t in tensors], pattern)
    except ShapeError:
        return None
    base = tensors[0]
    same_dtype = None not in tensors and len({t.dtype for t in tensors}) == 1  # else torch.cat promotes
    devices = {t.device if t is not None else None for t in tensors}
    result = derived(inf, base, *tensors[1:], dtype=base.dtype if same_dtype else None, shape=shape,
                     why=base.why if same_dtype else None, device=base.device if len(devices) == 1 else None)
    if None in tensors:  # what the unknown items are decides the grad and the layout
        result = result.with_(strides=None, requires_grad=None if result.requires_grad is False
                              else result.requires_grad, is_leaf=None if result.requires_grad is False else result.is_leaf)
    # (torch.cat: a new tensor, row-major when every input is)
    ps = SeqValue("list", tuple(size_value(p) for p in packed))
    return SeqValue("tuple", (result, ps))


def _packed_shapes(value) -> Optional[list]:
    """``ps``: a list of shapes (``torch.Size`` from pack, or literal tuples, ``-1`` allowed); a shape
    that is not known is None."""
    if not isinstance(value, SeqValue) or value.items is None:
        return None
    out = []
    for item in value.items:
        dims = None
        if isinstance(item, SeqValue) and item.items is not None:
            dims = tuple(int_of(d) for d in item.items)
            if any(d is None for d in dims):
                dims = None
        out.append(dims)
    return out


def _read_unpack(call: Call):
    if call.starred or len(call.args) + len(call.kwargs) != 3:
        return None
    tensor, ps, pattern = call.get(0, "tensor"), _packed_shapes(call.get(1, "packed_shapes")), \
        _string(call.get(2, "pattern"))
    if pattern is None or ps is None or not isinstance(tensor, TensorValue):
        return None
    return tensor, ps, pattern


def _unpack(inf, call: Call):
    read = _read_unpack(call)
    if read is None:
        return None
    tensor, ps, pattern = read
    try:
        pieces = E.unpack(tensor.shape, ps, pattern)
    except ShapeError:
        return None
    if pieces is None:
        return None
    # Slices reshaped: views whose strides are not worked out here.
    return SeqValue("list", tuple(derived(inf, tensor, shape=p, strides=None) for p in pieces))


# -- layers --------------------------------------------------------------------------------------------------
def _layer(name: str):
    def construct(inf, call: Call):
        request = _read_layer(name, call)
        if request is None:
            return None
        pattern, operation, axes = request
        try:
            E.check_pattern(pattern, operation, tuple(axes))
        except ShapeError:
            return None  # the constructor raises (TW507)
        return ModuleValue(f"{LAYER_KIND_PREFIX}{name}", (), (
            ("pattern", pattern), ("reduction", operation), ("axes", tuple(axes.items()))))
    return construct


def _read_layer(name: str, call: Call):
    if call.starred:
        return None
    pattern = _string(call.get(0, "pattern"))
    taken: Tuple[str, ...] = ("pattern",)
    operation: Optional[str] = "rearrange"
    if name == "Reduce":
        operation, taken = _string(call.get(1, "reduction")), ("pattern", "reduction")
    if pattern is None or operation is None or len(call.args) > len(taken):
        return None
    axes = _axis_lengths(call, taken)
    return None if axes is None else (pattern, operation, axes)


def is_einops_layer(module) -> bool:
    return isinstance(module, ModuleValue) and module.kind in LAYER_KINDS


def _layer_request(module: ModuleValue):
    return module.setting("pattern"), module.setting("reduction"), dict(module.setting("axes", ()))


def call_einops_layer(inf, module: ModuleValue, x) -> Optional[TensorValue]:
    """``layer(x)`` for an einops layer (``Rearrange(...)``, ``Reduce(...)``); None when unknown or when
    its forward raises."""
    if not is_einops_layer(module) or not isinstance(x, TensorValue):
        return None
    pattern, operation, axes = _layer_request(module)
    try:
        plan = E.layer_plan(x.shape, pattern, operation, axes)
    except ShapeError:
        certainly_raises(inf)
        return None
    return None if plan is None else _plan_value(inf, x, plan, operation, layer=True)


# -- what a pattern says of its input ---------------------------------------------------------------------
def input_pattern(inf, qualname: Optional[str], callee, call: Call):
    """(pattern, axes) a call reads its first argument with: ``rearrange(x, 'b c (h p1) (w p2) -> ...', p1=8)``,
    a Rearrange / Reduce layer, or a Sequential whose first layer is one. None otherwise."""
    name = einops_function(qualname)
    if name in ("rearrange", "repeat", "reduce"):
        request = _read_transform(name, call)
        return None if request is None else (request.pattern, request.axes)
    while isinstance(callee, ModuleValue) and callee.kind == "Sequential" and callee.children:
        callee = callee.children[0]
    if is_einops_layer(callee):
        pattern, _, axes = _layer_request(callee)
        return pattern, axes
    return None


def pattern_input_shape(pattern: str, axes, symbol) -> Optional[tuple]:
    """The shape the left side of ``pattern`` gives its input: ``b c (h p1) (w p2)`` with ``p1=8`` is
    ``(b, c, h*8, w*p2)``, each axis not given a size named by ``symbol(axis)``. None with an ellipsis (the rank is
    open) or a pattern einops would refuse."""
    try:
        left, _ = E.split_arrow(pattern)
        side = E.parse_side(left)
    except ShapeError:
        return None
    if side.has_ellipsis:
        return None
    sizes: dict = {}
    shape = []
    for group in side.groups:
        dim = 1
        for axis in group:
            if isinstance(axis, E.Anonymous):
                dim = dim * axis.value
                continue
            if axis not in sizes:
                given = axes.get(axis)
                sizes[axis] = given if given is not None else symbol(axis)
            dim = dim * sizes[axis]
        shape.append(dim)
    return tuple(shape)


# -- what einops raises, for the rule ----------------------------------------------------------------------
def call_error(inf, name: str, call: Call) -> Optional[ShapeError]:
    """The error einops certainly raises for this call of ``einops.<name>`` (or a layer's constructor),
    None when it runs or when that is unknown."""
    try:
        _raise_for(inf, name, call)
    except ShapeError as err:
        return err
    return None


def _raise_for(inf, name: str, call: Call) -> None:
    if name in ("rearrange", "repeat", "reduce"):
        request = _read_transform(name, call)
        if request is not None:
            E.plan(_source_shape(inf, request.source), request.pattern, request.operation, request.axes)
    elif name == "einsum":
        read = _read_einsum(call)
        if read is not None:
            operands, pattern = read
            shapes_known = [o.shape if isinstance(o, TensorValue) else None for o in operands]
            if all(isinstance(o, TensorValue) or o is None for o in operands):
                E.einsum(shapes_known, pattern)
            else:
                E.compact_einsum(pattern)
    elif name == "pack":
        read = _read_pack(call)
        if read is not None:
            tensors, pattern = read
            E.pack([t.shape if isinstance(t, TensorValue) else None for t in tensors], pattern)
    elif name == "unpack":
        read = _read_unpack(call)
        if read is not None:
            E.unpack(read[0].shape, read[1], read[2])
    elif name in LAYERS:
        request = _read_layer(name, call)
        if request is not None:
            E.check_pattern(request[0], request[1], tuple(request[2]))


def layer_error(module: ModuleValue, x) -> Optional[ShapeError]:
    """What an einops layer's forward certainly raises on ``x``."""
    if not is_einops_layer(module) or not isinstance(x, TensorValue):
        return None
    pattern, operation, axes = _layer_request(module)
    try:
        E.layer_plan(x.shape, pattern, operation, axes)
    except ShapeError as err:
        return err
    return None


def pattern_error(name: str, call: Call) -> bool:
    """True when the call's error holds whatever the operands (a malformed pattern)."""
    if name in ("rearrange", "repeat", "reduce"):
        request = _read_transform(name, call)
        return request is not None and _fails(E.check_pattern, request.pattern, request.operation,
                                               tuple(request.axes))
    if name == "einsum":
        read = _read_einsum(call)
        return read is not None and _fails(E.compact_einsum, read[1])
    if name in ("pack", "unpack"):
        pattern = _string(call.get(1 if name == "pack" else 2, "pattern"))
        return pattern is not None and _fails(E.analyze_pack_pattern, pattern, name)
    return name in LAYERS


def _fails(fn, *args) -> bool:
    try:
        fn(*args)
    except ShapeError:
        return True
    return False


# -- torch.einsum's sublist form -------------------------------------------------------------------------------
def sublist_call(call: Call) -> Optional[Tuple[str, List[object]]]:
    """``torch.einsum(a, [0, 1], b, [1, 2], [0, 2])``: (the equation torch builds, the operands); None when
    the call is not in that form or a sublist is not a literal (raises ShapeError for a bad subscript)."""
    args = call.node.args
    if call.starred or call.kwargs or len(args) < 2 or not isinstance(call.args[0], TensorValue):
        return None
    sublists = [_literal_sublist(node, call.env) for node in args[1::2]]
    output = _literal_sublist(args[-1], call.env) if len(args) % 2 == 1 else None
    if any(s is None for s in sublists) or (len(args) % 2 == 1 and output is None):
        return None
    operands = list(call.args[:-1:2] if len(args) % 2 == 1 else call.args[::2])
    return E.sublist_equation(sublists, output), operands


def sublist_as_equation(call: Call) -> Optional[Call]:
    """The sublist form of a ``torch.einsum`` call rewritten as ``torch.einsum(equation, *operands)``, for
    the equation form's transfer function; None when not readable or when torch raises on a subscript."""
    try:
        read = sublist_call(call)
    except ShapeError:
        return None
    if read is None:
        return None
    equation, operands = read
    return Call(call.node, [constant(equation), *operands], {}, False, call.env)


def _literal_sublist(node: ast.AST, env) -> Optional[list]:
    """``[0, 1]``, ``[..., 2]``, ``[Ellipsis, 2]``: the subscripts, or None when not literal."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    items = []
    for element in node.elts:
        if isinstance(element, ast.Constant) and (element.value is Ellipsis or type(element.value) is int):
            items.append(element.value)
        elif isinstance(element, ast.Name) and element.id == "Ellipsis" and _builtin(env, "Ellipsis"):
            items.append(Ellipsis)
        else:
            return None
    return items


def _builtin(env, name: str) -> bool:
    """``name`` is not bound in the code (so it is the builtin); without a scope, assumed."""
    scope = getattr(env, "scope", None)
    return scope is None or scope.owner_of(name) is None


for _name in ("rearrange", "repeat", "reduce"):
    for _qualname in qualified_names(_name):
        TORCH_FUNCTIONS[_qualname] = _transform(_name)
for _name, _handler in (("einsum", _einops_einsum), ("pack", _pack), ("unpack", _unpack)):
    for _qualname in qualified_names(_name):
        TORCH_FUNCTIONS[_qualname] = _handler
for _name in LAYERS:
    for _qualname in qualified_names(_name):
        TORCH_FUNCTIONS[_qualname] = _layer(_name)
