"""``torch.nn`` layers (constructed and called) and ``torch.nn.functional``.

A layer is a row of ``layers.LAYERS``: its constructor is bound like PyTorch binds it (``nn.Conv2d(3, 16, 3, 1, 1)``
has stride 1 and padding 1), its parameters and buffers get their facts, and calling it evaluates the functional
call its row names, with its tensors and settings as arguments. So ``nn.Conv2d`` and ``F.conv2d`` share one shape
function, and the activation layers are the op table's own ``F`` rows (``nn.LeakyReLU(0.2)`` is
``F.leaky_relu(x, 0.2)``).

The functional ops without a table row have their shape functions here (``_FUNCTIONS``), each behind its
declared signature. Every one follows the engine's rule: where PyTorch certainly raises, or a fact cannot be told,
the result is None (``_Nothing``); a precondition that cannot be decided (a LayerNorm over a last dim ``C`` that
may or may not equal ``n_embd``) is assumed to hold, so the facts are those of the path where the call returns.
Layers do not promote: input and weight dtypes must match (norms also take half-precision input with float32
parameters, as PyTorch does); integer inputs are claimed only where every device has the kernel (padding,
pixel shuffle).
"""

from __future__ import annotations

import ast
import math
from functools import lru_cache
from typing import Optional

from torchwise.analysis import dims, dtypes, layers, ops_families, optable, shapes
from torchwise.analysis.dims import Sym
from torchwise.analysis.dtypes import DType
from torchwise.analysis.layers import COUNT, LAYERS, MAYBE, PARAM, Settings, shape_of, sizes_of
from torchwise.analysis.ops_einops import call_einops_layer, is_einops_layer
from torchwise.analysis.optable import REQUIRED, Family, Op, Promote, Signature, Unbound
from torchwise.analysis.tensors import (
    TENSOR_METHODS, Call, certainly_raises, constant, contiguous_strides, derived, device_arg, dtype_arg, int_of, make_tensor,
    output_strides, result_grad, same_device, size_of,
)
from torchwise.analysis.values import (
    DeviceValue, DtypeValue, EitherValue, InstanceValue, MappingValue, ModuleValue, ScalarValue, SeqValue, SymbolicValue,
    TensorValue, join,
)


class _Nothing(Exception):
    """PyTorch certainly raises here, or a fact cannot be told: either way the call's value is unknown."""


# -- reading arguments -------------------------------------------------------------------------------------
def _is_none(value) -> bool:
    return isinstance(value, ScalarValue) and value.kind == "none"


def _tensor(value) -> TensorValue:
    """A tensor argument; anything else (an unknown value, a value known only by its name) gives nothing: an
    unknown result lets the analysis read a function's parameters by their use instead."""
    if isinstance(value, TensorValue):
        return value
    raise _Nothing


def _target(value) -> TensorValue:
    """A loss target: one not known (a batch from a loader, a parameter known by name) only decides whether the
    loss raises, not its reduced shape; where the loss returns, it is a tensor."""
    return TensorValue() if value is None or isinstance(value, SymbolicValue) else _tensor(value)


def _optional_tensor(value) -> Optional[TensorValue]:
    """A ``Tensor?`` argument. One whose value is not known (None on one path, a tensor on another, as a bias made
    ``if bias else None``) is not read: where the call returns, it fits."""
    if value is None or _is_none(value) or isinstance(value, SymbolicValue):
        return None
    return _tensor(value)


def _flag(value) -> Optional[bool]:
    return value.value if isinstance(value, ScalarValue) and value.kind == "bool" else None


def _text(value) -> Optional[str]:
    return value.value if isinstance(value, ScalarValue) and value.kind == "str" else None


def _number(value):
    if isinstance(value, ScalarValue) and value.kind in ("int", "float") and isinstance(value.value, (int, float)):
        return value.value
    return None


def _known(*values) -> bool:
    return all(v is not None for v in values)


def _sizes(value, rank: int) -> tuple:
    """``3`` or ``(3, 5)`` as ``rank`` dims; unknown: _Nothing."""
    found = sizes_of(value, rank)
    if found is None:
        raise _Nothing
    return found


def _window_settings(value, rank: int) -> tuple:
    """A conv's or a pooling's stride, padding or dilation as ``rank`` dims, where an int known only to be one
    (``stride=(2 if downsample else 1)``) is ``None`` in each dim: the output has its rank all the same, with
    window counts of their own."""
    if isinstance(value, ScalarValue) and value.kind == "int" and value.value is None:
        return (None,) * rank
    if isinstance(value, SymbolicValue):
        # A value known only by its name (`padding=padding`: an int, a tuple of ints or, for a conv's padding,
        # "same" / "valid"): where the layer works at all the output has its rank, window counts of its own.
        return (None,) * rank
    return _sizes(value, rank)


# -- checks: raise only where PyTorch certainly does ---------------------------------------------------------
def _require(condition: Optional[bool]) -> None:
    if condition is False:
        raise _Nothing


def _same(a, b) -> None:
    """Two sizes that must be equal: different for every value of their symbols raises."""
    _require(dims.dim_eq(a, b) is not False)


def _positive(*values) -> None:
    _require(not any(isinstance(v, int) and v <= 0 for v in values))


def _is_zero(dim) -> bool:
    return isinstance(dim, int) and dim == 0


_FLOATING = frozenset({DType.float16, DType.bfloat16, DType.float32, DType.float64})
_FULL_PRECISION = frozenset({DType.float32, DType.float64})  # ops without CPU half kernels (avg_pool3d, LRN)
_INDEX = frozenset({DType.int64, DType.int32})


def _floating(dtype, allowed=_FLOATING) -> None:
    """A layer's dtype: floating. (Integer kernels exist only on some devices, complex ones for a few ops.)"""
    _require(dtype is None or dtype in allowed)


def _shared_dtype(x: TensorValue, *others):
    """The one dtype a layer's input and weights share: layers do not promote. A weight of unknown dtype with an
    input of known dtype may be a mix, which raises; an input of unknown dtype has the weights' (or it raises)."""
    others = [t for t in others if t is not None]
    known = {t.dtype for t in (x, *others) if t.dtype is not None}
    _require(len(known) <= 1)
    if x.dtype is not None and any(t.dtype is None for t in others):
        raise _Nothing
    return known.pop() if known else None


def _norm_dtype(x: TensorValue, *params):
    """Norms: the input's dtype; the parameters share it, or are float32 for a half-precision input."""
    params = [p for p in params if p is not None]
    _floating(x.dtype)
    if x.dtype is not None and any(p.dtype is None for p in params):
        raise _Nothing  # the parameters may be of another dtype, which raises
    known = {p.dtype for p in params if p.dtype is not None}
    _require(len(known) <= 1)
    param_dtype = known.pop() if known else None
    _floating(param_dtype)
    if param_dtype is None or x.dtype is None or param_dtype == x.dtype:
        return x.dtype
    _require(x.dtype in (DType.float16, DType.bfloat16) and param_dtype == DType.float32)
    return x.dtype


def _shared_device(*tensors) -> Optional[str]:
    known = [t.device for t in tensors if t is not None and t.device is not None]
    _require(not any(same_device(a, b) is False for a in known for b in known))
    return known[0] if known and all(d == known[0] for d in known) else None


def _made(inf, x: TensorValue, shape, *others, dtype="keep", strides="contiguous", why="keep") -> TensorValue:
    """A new tensor computed from ``x`` and ``others`` (weights...): on their shared device, grad if any has it.
    Its layout follows its inputs' ("contiguous": row-major when they all are; "input": when ``x`` is)."""
    others = tuple(t for t in others if t is not None)
    device = _shared_device(x, *others)
    if strides == "input":
        strides = output_strides(shape, x)
    if dtype != "keep" and dtype == x.dtype:
        dtype = "keep"
    return derived(inf, x, *others, dtype=dtype, shape=shape, strides=strides, device=device, why=why)


def _indices(inf, x: TensorValue, shape) -> TensorValue:
    return derived(inf, x, dtype=DType.int64, shape=shape, why="indices are int64").with_(
        requires_grad=False, is_leaf=True)


def _view_of(x: TensorValue) -> TensorValue:
    """The input again, as a view (``unsqueeze(0)`` then ``squeeze(0)``): the same facts, not the same tensor."""
    return x.with_(is_leaf=None if x.requires_grad is None else not x.requires_grad,
                   memory="a view: shares memory with its input", saved_by=None)


# -- window arithmetic (convolutions, pooling, unfold) --------------------------------------------------------
def _windows(size, kernel, stride, padding, dilation, ceil_mode=False):
    """How many windows fit: PyTorch's ``floor((size + 2*padding - dilation*(kernel-1) - 1) / stride) + 1``;
    ceil_mode rounds up (``pooling_output_shape``), dropping a last window that would start in the right padding.
    Fewer than one window raises."""
    if padding is None or dilation is None:
        return Sym.fresh("n")  # a setting known only to be an int: a count of its own (ceil_mode or not)
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    if stride is None:
        _require(dims.dim_lt(span, 0) is not True)
        return Sym.fresh("n")
    if not ceil_mode or stride == 1:
        _require(dims.dim_lt(span, 0) is not True)  # the kernel is larger than the padded input
        quotient = dims.floordiv(span, stride)
        if quotient is None:
            raise _Nothing
        return quotient + 1
    if not all(isinstance(v, int) for v in (size, span, stride)):
        raise _Nothing  # ceil_mode with a symbolic size: the last window depends on its value
    out = (span + stride - 1) // stride + 1
    if (out - 1) * stride >= size + padding:
        out -= 1
    _require(out >= 1)
    return out


def _spatial_input(inf, x: TensorValue, rank: int) -> bool:
    """A conv/pool input: ``(C, *spatial)`` or ``(N, C, *spatial)``, the non-batch dims non-empty. Batched?"""
    if x.shape is None:
        raise _Nothing
    if len(x.shape) not in (rank + 1, rank + 2):
        certainly_raises(inf)
        raise _Nothing
    batched = len(x.shape) == rank + 2
    _require(not any(_is_zero(d) for d in x.shape[1 if batched else 0:]))
    return batched


# -- linear layers and embeddings -----------------------------------------------------------------------------
def _linear(inf, a: dict):
    x, weight, bias = _tensor(a["input"]), _tensor(a["weight"]), _optional_tensor(a["bias"])
    dtype = _shared_dtype(x, weight, bias)
    _floating(dtype)
    try:
        shape = shapes.linear(x.shape, weight.shape, bias.shape if bias is not None else None,
                              has_bias=bias is not None)
    except shapes.ShapeError:
        raise _Nothing
    # a product: row-major whatever the input's layout
    return _made(inf, x, shape, weight, bias, dtype=dtype, strides=contiguous_strides(shape), why=weight.why)


def _bilinear(inf, a: dict):
    x1, x2, weight, bias = _tensor(a["input1"]), _tensor(a["input2"]), _tensor(a["weight"]), \
        _optional_tensor(a["bias"])
    dtype = _shared_dtype(x1, x2, weight, bias)
    _floating(dtype)
    if x1.shape is None or x2.shape is None or weight.shape is None:
        return None
    _require(len(weight.shape) == 3 and len(x1.shape) >= 1 and len(x1.shape) == len(x2.shape))
    for d1, d2 in zip(x1.shape[:-1], x2.shape[:-1]):
        _same(d1, d2)  # the batch dims must match (no broadcasting)
    _same(x1.shape[-1], weight.shape[1])
    _same(x2.shape[-1], weight.shape[2])
    if bias is not None and bias.shape is not None:
        _require(len(bias.shape) == 1)
        _same(bias.shape[0], weight.shape[0])
    return _made(inf, x1, (*x1.shape[:-1], weight.shape[0]), x2, weight, bias, dtype=dtype, why=weight.why)


def _embedding_weight(index: TensorValue, weight: TensorValue, padding_idx) -> None:
    _require(index.dtype is None or index.dtype in _INDEX)  # an index of unknown dtype: an integer one, or it raises
    _require(weight.shape is None or len(weight.shape) == 2)
    rows, pad = (weight.shape[0] if weight.shape else None), int_of(padding_idx)
    if isinstance(rows, int) and isinstance(pad, int):
        _require(-rows <= pad < rows)


def _looked_up(inf, index: TensorValue, weight: TensorValue, shape, *others) -> TensorValue:
    """Rows of ``weight``: its dtype, a new contiguous tensor, grad from the weight."""
    grad = result_grad(inf, weight, *others)
    return TensorValue(weight.dtype, shape, _shared_device(index, weight), contiguous_strides(shape), grad,
                       None if grad is None else not grad, weight.why)


def _embedding(inf, a: dict):
    x, weight = _tensor(a["input"]), _tensor(a["weight"])
    _embedding_weight(x, weight, a["padding_idx"])
    shape = None if x.shape is None or weight.shape is None else (*x.shape, weight.shape[1])
    return _looked_up(inf, x, weight, shape)


def _embedding_bag(inf, a: dict):
    x, weight = _tensor(a["input"]), _tensor(a["weight"])
    offsets, per_sample = _optional_tensor(a["offsets"]), _optional_tensor(a["per_sample_weights"])
    _embedding_weight(x, weight, a["padding_idx"])
    mode, last = _text(a["mode"]), _flag(a["include_last_offset"])
    if mode is None or last is None or x.shape is None or weight.shape is None:
        return None
    _require(mode in ("sum", "mean", "max") and (per_sample is None or mode == "sum"))
    if offsets is not None:
        _require(offsets.dtype is None or x.dtype is None or offsets.dtype == x.dtype)
    if len(x.shape) == 2:
        _require(offsets is None)  # a 2-D input is its own bags
        bags = x.shape[0]
    else:
        _require(len(x.shape) == 1 and offsets is not None)
        if offsets.shape is None:
            return None
        _require(len(offsets.shape) == 1)
        bags = offsets.shape[0] - 1 if last else offsets.shape[0]
    return _looked_up(inf, x, weight, (bags, weight.shape[1]), per_sample)


def _one_hot(inf, a: dict):
    x, classes = _tensor(a["tensor"]), int_of(a["num_classes"])
    if x.shape is None or not isinstance(classes, int) or classes < 0 or x.dtype != DType.int64:
        return None  # one_hot takes int64 indices only; -1 reads the classes from the data
    return make_tensor(inf, DType.int64, (*x.shape, classes), x.device, False, "one_hot gives int64")


# -- convolutions ------------------------------------------------------------------------------------------------
def _conv_settings(a: dict, rank: int, transposed: bool) -> tuple:
    """(stride, padding per dim (None: "same"), dilation, groups) of a convolution."""
    stride, dilation = _window_settings(a["stride"], rank), _window_settings(a["dilation"], rank)
    groups = int_of(a["groups"])
    if groups is None:
        raise _Nothing
    _positive(*stride, *dilation, groups)
    mode = None if transposed else _text(a["padding"])
    _require(mode in (None, "same", "valid"))
    _require(mode != "same" or not any(isinstance(s, int) and s != 1 for s in stride))  # not when strided
    pads = (0,) * rank if mode == "valid" else None if mode == "same" else _window_settings(a["padding"], rank)
    _require(pads is None or not any(isinstance(p, int) and p < 0 for p in pads))
    return stride, pads, dilation, groups


def _conv_channels(channels, weight: tuple, groups, transposed: bool):
    """The output channels; the input's must be the weight's (``in_channels / groups`` of them per group)."""
    if transposed:  # weight (in, out / groups, *kernel)
        _same(channels, weight[0])
        divided, out = weight[0], weight[1] * groups
    else:  # weight (out, in / groups, *kernel)
        _same(channels, weight[1] * groups)
        divided, out = weight[0], weight[0]
    if isinstance(divided, int) and isinstance(groups, int):
        _require(divided % groups == 0)
    return out


def _transposed_sizes(a: dict, spatial, kernel, stride, pads, dilation) -> tuple:
    """``(size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1``, each at least 1."""
    extra = _sizes(a["output_padding"], len(spatial))
    for e, s, d in zip(extra, stride, dilation):
        if all(isinstance(v, int) for v in (e, s, d)):
            _require(0 <= e < max(s, d))  # "output padding must be smaller than either stride or dilation"
    sizes = tuple(Sym.fresh("n") if None in (s, p, d) else (n - 1) * s - 2 * p + d * (k - 1) + e + 1
                  for n, s, p, d, k, e in zip(spatial, stride, pads, dilation, kernel, extra))
    _require(not any(dims.dim_lt(n, 1) is True for n in sizes))
    return sizes


def _conv(rank: int, transposed: bool):
    def conv(inf, a: dict):
        x, weight, bias = _tensor(a["input"]), _tensor(a["weight"]), _optional_tensor(a["bias"])
        dtype = _shared_dtype(x, weight, bias)
        _floating(dtype)
        stride, pads, dilation, groups = _conv_settings(a, rank, transposed)
        if weight.shape is None:
            return None
        _require(len(weight.shape) == rank + 2)
        batched = _spatial_input(inf, x, rank)
        kernel, spatial = weight.shape[2:], x.shape[-rank:]
        if any(_is_zero(k) for k in kernel):
            return None
        out_channels = _conv_channels(x.shape[1 if batched else 0], weight.shape, groups, transposed)
        if transposed:
            spatial = _transposed_sizes(a, spatial, kernel, stride, pads, dilation)
        elif pads is not None:  # (padding="same" keeps the sizes)
            spatial = tuple(_windows(*window) for window in zip(spatial, kernel, stride, pads, dilation))
        if bias is not None and bias.shape is not None:
            _require(len(bias.shape) == 1)
            _same(bias.shape[0], out_channels)
        shape = (*x.shape[:batched], out_channels, *spatial)
        return _made(inf, x, shape, weight, bias, dtype=dtype, why=weight.why)
    return conv


# -- pooling ---------------------------------------------------------------------------------------------------
def _pool_windows(a: dict, rank: int, kind: str) -> tuple:
    """(kernel, stride, padding, dilation) of a pooling; ``stride=None`` (or ``[]``) is the kernel size."""
    kernel = _sizes(a["kernel_size"], rank)
    given = a["stride"]
    stride = kernel if _is_none(given) or isinstance(given, SeqValue) and given.items == () \
        else _window_settings(given, rank)
    padding = _window_settings(a["padding"], rank)
    dilation = _window_settings(a["dilation"], rank) if "dilation" in a else (1,) * rank
    _positive(*kernel, *stride, *dilation)
    for k, p, d in zip(kernel, padding, dilation):
        if all(isinstance(v, int) for v in (k, p, d)):  # "pad should be at most half of effective kernel size"
            _require(0 <= p <= (((k - 1) * d + 1) // 2 if kind != "avg" else k // 2))
    return kernel, stride, padding, dilation


def _pooled(inf, x: TensorValue, batched: bool, spatial: tuple, indices: bool):
    """A pooling's output (and its int64 indices, with ``return_indices``)."""
    shape = (*x.shape[:1 + batched], *spatial)
    value = _made(inf, x, shape)
    return SeqValue("tuple", (value, _indices(inf, x, shape))) if indices else value


def _pool(rank: int, kind: str):
    """max_poolNd (``kind`` "max", or "indices" for the ``_with_indices`` form) and avg_poolNd."""
    def pool(inf, a: dict):
        x = _tensor(a["input"])
        kernel, stride, padding, dilation = _pool_windows(a, rank, kind)
        ceil_mode = _flag(a["ceil_mode"])
        indices = True if kind == "indices" else _flag(a["return_indices"]) if kind == "max" else False
        if ceil_mode is None or indices is None:
            return None
        if kind == "avg" and not _is_none(a.get("divisor_override", constant(None))):
            _positive(int_of(a["divisor_override"]))
        _floating(x.dtype, _FULL_PRECISION if kind == "avg" and rank == 3 else _FLOATING)
        batched = _spatial_input(inf, x, rank)
        sizes = x.shape[-rank:]
        if kind == "avg" and rank == 3:  # "input image smaller than kernel size", padding or not
            _require(not any(dims.dim_lt(size, k) is True for size, k in zip(sizes, kernel)))
        spatial = tuple(_windows(*window, ceil_mode) for window in zip(sizes, kernel, stride, padding, dilation))
        return _pooled(inf, x, batched, spatial, indices)
    return pool


def _adaptive_targets(requested, rank: int) -> Optional[tuple]:
    """``output_size``: an int, or ``rank`` entries where None keeps the input's size."""
    single = size_of(requested)
    if single is not None:
        return (single,) * rank
    _require(not _is_none(requested))
    if not (isinstance(requested, SeqValue) and requested.items is not None):
        return None
    _require(len(requested.items) == rank)
    targets = tuple(None if _is_none(i) else int_of(i) for i in requested.items)
    if any(t is None and not _is_none(i) for t, i in zip(targets, requested.items)):
        return None
    _require(not any(isinstance(t, int) and t < 0 for t in targets))
    return targets


def _adaptive(rank: int, kind: str):
    def pool(inf, a: dict):
        x, targets = _tensor(a["input"]), _adaptive_targets(a["output_size"], rank)
        indices = _flag(a["return_indices"]) if kind == "max" else False
        if targets is None or indices is None or any(_is_zero(t) for t in targets):
            return None  # (an empty output: not followed)
        _floating(x.dtype)
        batched = _spatial_input(inf, x, rank)
        spatial = tuple(size if t is None else t for size, t in zip(x.shape[-rank:], targets))
        return _pooled(inf, x, batched, spatial, indices)
    return pool


# -- normalization -------------------------------------------------------------------------------------------------
def _per_feature(tensor: Optional[TensorValue], features) -> None:
    """A norm's weight, bias or running statistic: one value per feature (its numel is what PyTorch checks)."""
    if tensor is not None and tensor.shape is not None:
        _same(dims.product(tensor.shape), features)


def _layer_norm(inf, a: dict):
    """layer_norm / rms_norm: the input's shape; its last dims must be ``normalized_shape`` (checked where known)."""
    x, weight = _tensor(a["input"]), _optional_tensor(a["weight"])
    bias = _optional_tensor(a["bias"]) if "bias" in a else None
    normalized = shape_of(a["normalized_shape"])
    if normalized is not None:
        _require(len(normalized) >= 1)
        for param in (weight, bias):
            if param is not None and param.shape is not None:
                _require(len(param.shape) == len(normalized))
                for d, n in zip(param.shape, normalized):
                    _same(d, n)
        if x.shape is not None:
            _require(len(x.shape) >= len(normalized))
            for d, n in zip(x.shape[len(x.shape) - len(normalized):], normalized):
                _same(d, n)
    dtype = _norm_dtype(x, weight, bias)
    return _made(inf, x, x.shape, weight, bias, dtype=dtype, strides="input")


def _group_norm(inf, a: dict):
    x, groups = _tensor(a["input"]), int_of(a["num_groups"])
    weight, bias = _optional_tensor(a["weight"]), _optional_tensor(a["bias"])
    dtype = _norm_dtype(x, weight, bias)
    if x.shape is None:
        return _made(inf, x, None, weight, bias, dtype=dtype, strides="input")
    _require(len(x.shape) >= 2)
    channels = x.shape[1]
    _positive(groups)
    if isinstance(channels, int) and isinstance(groups, int):
        _require(channels % groups == 0)
    _per_feature(weight, channels)
    _per_feature(bias, channels)
    return _made(inf, x, x.shape, weight, bias, dtype=dtype, strides="input")


def _statistics_norm(inf, x, mean, var, weight, bias, training: Optional[bool], values):
    """batch_norm / instance_norm: ``values`` (per channel or per instance) must exceed 1 to compute statistics."""
    dtype = _norm_dtype(x, weight, bias, mean, var)
    _require(not (training is False and (mean is None or var is None)))  # eval mode reads the running statistics
    if x.shape is None:
        return _made(inf, x, None, weight, bias, mean, var, dtype=dtype, strides="input")
    _require(len(x.shape) >= 2)
    for tensor in (mean, var, weight, bias):
        _per_feature(tensor, x.shape[1])
    if training is not False and dims.dim_eq(values, 1) is True:
        raise _Nothing  # "Expected more than 1 value per channel when training"
    return _made(inf, x, x.shape, weight, bias, mean, var, dtype=dtype, strides="input")


def _batch_norm(inf, a: dict):
    x = _tensor(a["input"])
    tensors = [_optional_tensor(a[n]) for n in ("running_mean", "running_var", "weight", "bias")]
    per_channel = None if x.shape is None or len(x.shape) < 2 else dims.product(x.shape[:1] + x.shape[2:])
    return _statistics_norm(inf, x, *tensors, _flag(a["training"]), per_channel)


def _instance_norm(inf, a: dict):
    x = _tensor(a["input"])
    tensors = [_optional_tensor(a[n]) for n in ("running_mean", "running_var", "weight", "bias")]
    spatial = None if x.shape is None else dims.product(x.shape[2:])
    if x.shape is not None and (tensors[2] is not None or tensors[3] is not None):
        _require(not _is_zero(x.shape[0]))  # the affine parameters are repeated per instance: none raises
    return _statistics_norm(inf, x, *tensors, _flag(a["use_input_stats"]), spatial)


def _local_response_norm(inf, a: dict):
    x = _tensor(a["input"])
    _floating(x.dtype, _FULL_PRECISION)
    _positive(int_of(a["size"]))
    if x.shape is None:
        return None
    _require(len(x.shape) >= 3)
    if any(_is_zero(d) for d in x.shape[1:]):
        return None
    return _made(inf, x, x.shape)


# -- activations with a shape rule ------------------------------------------------------------------------------
def _prelu(inf, a: dict):
    x, weight = _tensor(a["input"]), _tensor(a["weight"])
    dtype = _shared_dtype(x, weight)
    _floating(dtype)
    if x.shape is not None and weight.shape is not None:
        count = dims.product(weight.shape)
        if dims.dim_eq(count, 1) is not True:
            _require(len(x.shape) >= 1)
            _same(count, x.shape[1] if len(x.shape) >= 2 else 1)  # one weight, or one per channel (dim 1)
    return _made(inf, x, x.shape, weight, dtype=dtype, strides="input")


def _glu(inf, a: dict):
    x, dim = _tensor(a["input"]), int_of(a["dim"])
    _floating(x.dtype)
    if x.shape is None or not isinstance(dim, int):
        return None
    try:
        dim = shapes.wrap_dim(dim, len(x.shape), scalar_as_1d=False)
    except shapes.ShapeError:
        raise _Nothing
    size = x.shape[dim]
    _require(not (isinstance(size, int) and size % 2))  # "halving dimension must be even"
    half = dims.floordiv(size, 2)
    if half is None:
        return None
    return _made(inf, x, (*x.shape[:dim], half, *x.shape[dim + 1:]))


# Feature dropout: (the ranks it takes in any mode, the least rank when training, the rank it sees as batched).
# A rank other than the batched one is unsqueezed and squeezed back: in eval mode a view of the input.
_FEATURE_DROPOUT = {
    "dropout1d": ((2, 3), 2, 3),
    "dropout2d": (None, 2, None),
    "dropout3d": (None, 1, 5),
    "alpha_dropout": (None, 0, None),
    "feature_alpha_dropout": (None, 2, None),
}


def _dropout(name: str):
    ranks, least, batched = _FEATURE_DROPOUT[name]

    def dropout(inf, a: dict):
        x, p, training = _tensor(a["input"]), _number(a["p"]), _flag(a["training"])
        _require(p is None or 0 <= p <= 1)
        if x.shape is not None and ranks is not None:
            _require(len(x.shape) in ranks)
        if training is None:
            return join(_trained(inf, x), _evaluated(x))
        return _trained(inf, x) if training else _evaluated(x)

    def _trained(inf, x: TensorValue):
        _floating(x.dtype)  # drawing the mask needs floats
        _require(x.shape is None or len(x.shape) >= least)
        return _made(inf, x, x.shape)

    def _evaluated(x: TensorValue):
        if x.shape is None and batched is not None:
            return _view_of(x)
        return x if batched is None or len(x.shape) == batched else _view_of(x)
    return dropout


# -- padding, resizing, rearranging -------------------------------------------------------------------------------
_PAD_MODES = frozenset({"constant", "reflect", "replicate", "circular"})


def _pad(inf, a: dict):
    """``F.pad(x, (left, right, top, bottom, ...), mode)``: the pads run from the last dim backwards."""
    x, mode, sides = _tensor(a["input"]), _text(a["mode"]), a["pad"]
    if not (isinstance(sides, SeqValue) and sides.items is not None) or mode is None:
        return None
    pads = tuple(int_of(i) for i in sides.items)
    if not _known(*pads):
        return None
    _require(len(pads) % 2 == 0 and mode in _PAD_MODES)
    _require(mode == "constant" or _is_none(a["value"]))  # only constant padding takes a value
    if x.shape is None:
        return None
    rank, count = len(x.shape), len(pads) // 2
    _require(count <= rank)
    shape = list(x.shape)
    for i in range(count):
        shape[rank - 1 - i] += pads[2 * i] + pads[2 * i + 1]
        _require(dims.dim_lt(shape[rank - 1 - i], 0) is not True)
    if mode != "constant" and not _mode_pads_fit(x, mode, pads):
        return None
    return _made(inf, x, tuple(shape))


def _mode_pads_fit(x: TensorValue, mode: str, pads: tuple) -> bool:
    """reflect / replicate / circular padding: 1 to 3 padded dims, after a channel dim and perhaps a batch dim;
    reflecting needs each pad below its dim's size, wrapping at most once around it. False: not followed."""
    rank, count = len(x.shape), len(pads) // 2
    _require(count in (1, 2, 3) and rank in (count + 1, count + 2))
    _floating(x.dtype)
    if any(isinstance(p, int) and p < 0 for p in pads):
        return False  # cropping by a negative pad
    if mode != "circular":
        _require(not any(_is_zero(d) for d in x.shape[rank - count - 1:]))  # non-empty, bar the batch dim
    for i in range(count):
        size = x.shape[rank - 1 - i]
        for pad in pads[2 * i:2 * i + 2]:
            if mode == "reflect":
                _require(dims.dim_lt(pad, size) is not False)
            elif mode == "circular":
                _require(dims.dim_lt(size, pad) is not True)
    return True


# The ranks each interpolation mode takes (None: 3-D to 5-D).
_INTERPOLATION = {"nearest": None, "nearest-exact": None, "area": None, "linear": 3, "bilinear": 4,
                  "bicubic": 4, "trilinear": 5}


def _scaled(size, factor):
    """``floor(size * factor)``, as PyTorch computes an output size from a scale factor."""
    if isinstance(size, int):
        return math.floor(float(size) * factor)
    if float(factor).is_integer():
        return size * int(factor)
    raise _Nothing  # a symbolic size times a fraction


def _interpolate(inf, a: dict):
    x, mode, corners = _tensor(a["input"]), _text(a["mode"]), a["align_corners"]
    antialias = _flag(a["antialias"]) if "antialias" in a else False
    if mode is None or x.shape is None or antialias is None:
        return None
    rank = len(x.shape)
    _require(rank in (3, 4, 5) and mode in _INTERPOLATION and _INTERPOLATION[mode] in (None, rank))
    if mode in ("nearest", "nearest-exact", "area") and not _is_none(corners):
        _require(_flag(corners) is None)  # align_corners is for the interpolating modes only
        return None
    _require(not antialias or (mode in ("bilinear", "bicubic") and rank == 4))
    _floating(x.dtype, _FULL_PRECISION if antialias else _FLOATING)
    targets = _interpolated_sizes(x.shape[2:], a["size"], a["scale_factor"])
    if targets is None:
        return None
    _require(not any(_is_zero(d) for d in x.shape[2:]))
    _require(not any(isinstance(t, int) and t <= 0 for t in targets))  # "output sizes should be greater than 0"
    if _is_zero(x.shape[1]):
        return None  # empty channels: some modes take them, some raise
    return _made(inf, x, (*x.shape[:2], *targets))


def _interpolated_sizes(spatial: tuple, size, scale) -> Optional[tuple]:
    """The output sizes from exactly one of ``size`` and ``scale_factor`` (``floor(size * scale)``)."""
    _require(_is_none(size) != _is_none(scale))
    given = size if not _is_none(size) else scale
    if isinstance(given, SeqValue) and given.items is not None:
        _require(len(given.items) == len(spatial))  # one per spatial dim
    if not _is_none(size):
        return sizes_of(size, len(spatial))
    factors = (_number(scale),) * len(spatial) if _number(scale) is not None else \
        tuple(_number(i) for i in scale.items) if isinstance(scale, SeqValue) and scale.items is not None else None
    if factors is None or not _known(*factors):
        return None
    return tuple(_scaled(d, f) for d, f in zip(spatial, factors))


def _upsample(mode: Optional[str], corners=None):
    """F.upsample (any mode), F.upsample_nearest, F.upsample_bilinear (align_corners=True): interpolate."""
    def upsample(inf, a: dict):
        given = dict(a)
        if mode is not None:
            given["mode"], given["align_corners"] = constant(mode), constant(corners)
        return _interpolate(inf, given)
    return upsample


def _pixel_shuffle(inf, a: dict):
    x, factor = _tensor(a["input"]), int_of(a["upscale_factor"])
    if x.shape is None or factor is None:
        return None
    _positive(factor)
    _require(len(x.shape) >= 3)
    channels, height, width = x.shape[-3:]
    if isinstance(channels, int) and isinstance(factor, int):
        _require(channels % (factor * factor) == 0)
    out = dims.floordiv(channels, factor * factor)
    if out is None:
        return None
    return _made(inf, x, (*x.shape[:-3], out, height * factor, width * factor))


def _pixel_unshuffle(inf, a: dict):
    x, factor = _tensor(a["input"]), int_of(a["downscale_factor"])
    if x.shape is None or factor is None or any(_is_zero(d) for d in x.shape):
        return None  # (an empty input comes back unchanged)
    _positive(factor)
    _require(len(x.shape) >= 3)
    channels, height, width = x.shape[-3:]
    for size in (height, width):
        if isinstance(size, int) and isinstance(factor, int):
            _require(size % factor == 0)
    out_h, out_w = dims.floordiv(height, factor), dims.floordiv(width, factor)
    if out_h is None or out_w is None:
        return None
    return _made(inf, x, (*x.shape[:-3], channels * factor * factor, out_h, out_w))


def _blocks(a: dict, spatial: tuple) -> tuple:
    """(kernel product, block count) of unfold/fold over ``spatial``."""
    kernel, dilation = _sizes(a["kernel_size"], 2), _sizes(a["dilation"], 2)
    padding, stride = _sizes(a["padding"], 2), _sizes(a["stride"], 2)
    _positive(*kernel, *dilation, *stride)
    _require(not any(isinstance(p, int) and p < 0 for p in padding))
    counts = [_windows(size, k, s, p, d) for size, k, s, p, d in zip(spatial, kernel, stride, padding, dilation)]
    _require(not any(dims.dim_lt(c, 1) is True for c in counts))
    return kernel[0] * kernel[1], counts[0] * counts[1]


def _unfold(inf, a: dict):
    x = _tensor(a["input"])
    _floating(x.dtype)
    if x.shape is None:
        return None
    _require(len(x.shape) in (3, 4))  # only 2-D spatial inputs
    batched = len(x.shape) == 4
    _require(not any(_is_zero(d) for d in x.shape[batched:]))
    kernel, count = _blocks(a, x.shape[-2:])
    return _made(inf, x, (*x.shape[:batched], x.shape[-3] * kernel, count))


def _fold(inf, a: dict):
    x = _tensor(a["input"])
    _floating(x.dtype)
    output = _sizes(a["output_size"], 2)
    if x.shape is None:
        return None
    _require(len(x.shape) in (2, 3))
    batched = len(x.shape) == 3
    _require(not any(_is_zero(d) for d in x.shape[batched:]))
    kernel, count = _blocks(a, output)
    columns = x.shape[-2]
    if isinstance(columns, int) and isinstance(kernel, int):
        _require(columns % kernel == 0)
    _same(x.shape[-1], count)  # one column per block
    channels = dims.floordiv(columns, kernel)
    if channels is None:
        return None
    return _made(inf, x, (*x.shape[:batched], channels, *output))


def _unflatten(inf, a: dict):
    """``x.unflatten(dim, sizes)`` (``nn.Unflatten``): one dim split into ``sizes``, a -1 inferred."""
    x, dim, sizes = _tensor(a["input"]), int_of(a["dim"]), a["sizes"]
    parts = shape_of(sizes) if isinstance(sizes, SeqValue) else None
    if x.shape is None or not isinstance(dim, int) or parts is None:
        return None
    try:
        dim = shapes.wrap_dim(dim, len(x.shape), scalar_as_1d=False)
    except shapes.ShapeError:
        raise _Nothing
    _require(len(parts) >= 1 and sum(1 for p in parts if p == -1) <= 1)
    size = x.shape[dim]
    if -1 in parts:
        known = dims.product(p for p in parts if p != -1)
        inferred = dims.exact_div(size, known)
        if inferred is None:
            return None
        parts = tuple(inferred if p == -1 else p for p in parts)
    else:
        _same(dims.product(parts), size)
    shape = SeqValue("tuple", tuple(ScalarValue("int", d) for d in (*x.shape[:dim], *parts, *x.shape[dim + 1:])))
    return TENSOR_METHODS["reshape"](inf, x, Call(None, [shape], {}, False, None))  # a view where it can be


# -- attention -----------------------------------------------------------------------------------------------------
def _scaled_dot_product_attention(inf, a: dict):
    """``(..., L, E) x (..., S, E) x (..., S, Ev) -> (..., L, Ev)``, one batch shape for all three."""
    q, k, v = _tensor(a["query"]), _tensor(a["key"]), _tensor(a["value"])
    dtype = _shared_dtype(q, k, v)  # one floating dtype for query, key and value
    _floating(dtype)
    if not _is_none(a["attn_mask"]) or _flag(a["enable_gqa"]) is not False:
        return None  # the mask broadcasts into the weights; grouped heads: not followed
    if q.shape is None or k.shape is None or v.shape is None:
        return None
    _require(min(len(q.shape), len(k.shape), len(v.shape)) >= 2)
    _same(q.shape[-1], k.shape[-1])
    _same(k.shape[-2], v.shape[-2])
    if not (len(q.shape) == len(k.shape) == len(v.shape)) or any(
            dims.dim_eq(a_, b_) is not True for a_, b_ in zip(q.shape[:-2], v.shape[:-2])) or any(
            dims.dim_eq(a_, b_) is not True for a_, b_ in zip(k.shape[:-2], v.shape[:-2])):
        return None  # batch dims that differ broadcast on some backends only
    return _made(inf, q, (*q.shape[:-1], v.shape[-1]), k, v, dtype=dtype)


# -- losses --------------------------------------------------------------------------------------------------------
_REDUCTIONS = frozenset({"mean", "sum", "none"})
_SAME_SHAPE_LOSSES = frozenset({"binary_cross_entropy", "binary_cross_entropy_with_logits"})
_CLASS_LOSSES = frozenset({"cross_entropy", "nll_loss"})


def _legacy_reduction(size_average, reduce) -> Optional[str]:
    """``size_average`` / ``reduce`` given: the reduction they spell (``torch.nn._reduction.legacy_get_string``)."""
    if _is_none(size_average) and _is_none(reduce):
        return "given"
    averaged = True if _is_none(size_average) else _flag(size_average)
    reduced = True if _is_none(reduce) else _flag(reduce)
    if averaged is None or reduced is None:
        return None
    return "mean" if averaged and reduced else "sum" if reduced else "none"


def _reduction(a: dict) -> Optional[str]:
    legacy = _legacy_reduction(a.get("size_average", constant(None)), a.get("reduce", constant(None)))
    reduction = _text(a["reduction"]) if legacy == "given" else legacy
    _require(reduction is None or reduction in _REDUCTIONS)
    return reduction


def _class_indices_by_rank(x: TensorValue, target: TensorValue) -> bool:
    """A target of another rank than the input can only be class indices (probabilities must match the input's
    shape, and torch raises on a float target of another rank): so an unknown target dtype is long or byte."""
    return x.shape is not None and target.shape is not None and len(target.shape) != len(x.shape)


def _loss_dtype(name: str, x: TensorValue, target: TensorValue):
    """The result dtype: most losses promote input and target; huber and nll keep the input's."""
    if name in ("huber_loss", "nll_loss", "binary_cross_entropy"):
        return x.dtype
    if name == "cross_entropy" and _class_indices_by_rank(x, target):
        return x.dtype
    if x.dtype is None or target.dtype is None:
        return None
    if name == "cross_entropy" and target.dtype in (DType.int64, DType.uint8):
        return x.dtype  # class indices
    if name == "binary_cross_entropy_with_logits":
        return target.dtype  # (it computes in the target's dtype)
    return dtypes.promote_types(x.dtype, target.dtype)


def _check_target(name: str, x: TensorValue, target: TensorValue, weight: Optional[TensorValue]) -> None:
    """The input/target checks PyTorch makes before a loss (only what certainly raises)."""
    if name in _CLASS_LOSSES:
        _require(x.shape is None or len(x.shape) >= 1)
        if x.shape is not None and weight is not None and weight.shape is not None:
            _same(dims.product(weight.shape), x.shape[1] if len(x.shape) >= 2 else x.shape[0])
        indices = target.dtype in (DType.int64, DType.uint8)
        _require(target.dtype is None or indices or (name == "cross_entropy" and dtypes.is_floating(target.dtype)))
        if x.shape is None or target.shape is None or target.dtype is None:
            return
        _require(not indices or len(x.shape) <= 2 or target.dtype == DType.int64)  # the k-d kernels take long only
        expected = (x.shape[0], *x.shape[2:]) if indices and len(x.shape) >= 2 else () if indices else x.shape
        _require(len(target.shape) == len(expected))
        for a_, b_ in zip(target.shape, expected):
            _same(a_, b_)
        return
    if name == "kl_div" or name == "binary_cross_entropy_with_logits":
        _require(target.dtype is None or dtypes.is_floating(target.dtype))
    if name == "binary_cross_entropy":
        _require(target.dtype is None or x.dtype is None or target.dtype == x.dtype)
    if x.shape is None or target.shape is None:
        return
    if name in _SAME_SHAPE_LOSSES:
        _require(len(x.shape) == len(target.shape))
        for a_, b_ in zip(x.shape, target.shape):
            _same(a_, b_)
    else:
        try:
            shapes.broadcast(x.shape, target.shape)
        except shapes.ShapeError:
            raise _Nothing


def _unreduced_shape(name: str, x: TensorValue, target: TensorValue):
    if x.shape is None:
        return None
    if name in _CLASS_LOSSES:
        return (x.shape[0], *x.shape[2:]) if len(x.shape) >= 2 else ()
    if name in _SAME_SHAPE_LOSSES:
        return x.shape
    return None if target.shape is None else shapes.broadcast(x.shape, target.shape)


def _loss(name: str):
    def loss(inf, a: dict):
        x, target = _tensor(a["input"]), _target(a["target"])
        weight = _optional_tensor(a["weight"]) if "weight" in a else None
        others = [_optional_tensor(a[n]) for n in ("pos_weight",) if n in a]
        _floating(x.dtype)
        _shared_dtype(x, weight)  # a class weight in the input's dtype
        reduction = _reduction(a)
        _check_target(name, x, target, weight)
        if reduction is None:
            return None
        shape = () if reduction != "none" else _unreduced_shape(name, x, target)
        dtype = _loss_dtype(name, x, target)
        return _made(inf, x, shape, target, weight, *others, dtype=dtype)
    return loss


def _cosine_embedding_loss(inf, a: dict):
    x1, x2, target = _tensor(a["input1"]), _tensor(a["input2"]), _target(a["target"])
    reduction = _reduction(a)
    _floating(x1.dtype)
    _floating(x2.dtype)
    if reduction is None or x1.shape is None:
        return None
    _require(len(x1.shape) in (1, 2))
    if x2.shape is not None:
        _require(len(x2.shape) == len(x1.shape))
        for a_, b_ in zip(x1.shape, x2.shape):
            _same(a_, b_)
    shape = () if reduction != "none" else x1.shape[:-1]
    dtype = None if x1.dtype is None or x2.dtype is None else dtypes.promote_types(x1.dtype, x2.dtype)
    return _made(inf, x1, shape, x2, target, dtype=dtype)


# -- the functional table -------------------------------------------------------------------------------------------
_LEGACY = "any size_average=None, any reduce=None"
_FUNCTIONS: dict = {}  # name -> (Signature, shape function)


def _function(signature: str, implementation) -> None:
    parsed = Signature.parse(signature)
    _FUNCTIONS[parsed.name] = (parsed, implementation)


_function("linear(Tensor input, Tensor weight, Tensor? bias=None)", _linear)
_function("bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None)", _bilinear)
_function("embedding(Tensor input, Tensor weight, int? padding_idx=None, float? max_norm=None, float norm_type=2.0, "
          "bool scale_grad_by_freq=False, bool sparse=False)", _embedding)
_function("embedding_bag(Tensor input, Tensor weight, Tensor? offsets=None, float? max_norm=None, "
          "float norm_type=2, bool scale_grad_by_freq=False, str mode='mean', bool sparse=False, "
          "Tensor? per_sample_weights=None, bool include_last_offset=False, int? padding_idx=None)", _embedding_bag)
_function("one_hot(Tensor tensor, int num_classes=-1)", _one_hot)
for _rank in (1, 2, 3):
    _function(f"conv{_rank}d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[]|str padding=0, "
              "int[] dilation=1, int groups=1)", _conv(_rank, False))
    _function(f"conv_transpose{_rank}d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, "
              "int[] padding=0, int[] output_padding=0, int groups=1, int[] dilation=1)", _conv(_rank, True))
    _MAX_POOL = "(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, " \
                "bool ceil_mode=False, bool return_indices=False)"
    _function(f"max_pool{_rank}d{_MAX_POOL}", _pool(_rank, "max"))
    _function(f"max_pool{_rank}d_with_indices{_MAX_POOL}", _pool(_rank, "indices"))
    _function(f"avg_pool{_rank}d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, "
              "bool ceil_mode=False, bool count_include_pad=True"
              + (", int? divisor_override=None)" if _rank > 1 else ")"), _pool(_rank, "avg"))
    _function(f"adaptive_avg_pool{_rank}d(Tensor input, any output_size)", _adaptive(_rank, "avg"))
    _function(f"adaptive_max_pool{_rank}d(Tensor input, any output_size, bool return_indices=False)",
              _adaptive(_rank, "max"))
    _function(f"adaptive_max_pool{_rank}d_with_indices(Tensor input, any output_size, bool return_indices=True)",
              _adaptive(_rank, "max"))
_function("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
          "float eps=1e-05)", _layer_norm)
_function("rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None)", _layer_norm)
_function("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05)",
          _group_norm)
_function("batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight=None, "
          "Tensor? bias=None, bool training=False, float momentum=0.1, float eps=1e-05)", _batch_norm)
_function("instance_norm(Tensor input, Tensor? running_mean=None, Tensor? running_var=None, Tensor? weight=None, "
          "Tensor? bias=None, bool use_input_stats=True, float momentum=0.1, float eps=1e-05)", _instance_norm)
_function("local_response_norm(Tensor input, int size, float alpha=0.0001, float beta=0.75, float k=1.0)",
          _local_response_norm)
_function("prelu(Tensor input, Tensor weight)", _prelu)
_function("glu(Tensor input, int dim=-1)", _glu)
for _name in ("dropout1d", "dropout2d", "dropout3d"):
    _function(f"{_name}(Tensor input, float p=0.5, bool training=True, bool inplace=False)", _dropout(_name))
for _name in ("alpha_dropout", "feature_alpha_dropout"):
    _function(f"{_name}(Tensor input, float p=0.5, bool training=False, bool inplace=False)", _dropout(_name))
_function("pad(Tensor input, int[] pad, str mode='constant', float? value=None)", _pad)
_function("interpolate(Tensor input, any size=None, any scale_factor=None, str mode='nearest', "
          "bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False)", _interpolate)
_function("upsample(Tensor input, any size=None, any scale_factor=None, str mode='nearest', "
          "bool? align_corners=None)", _upsample(None))
_function("upsample_nearest(Tensor input, any size=None, any scale_factor=None)", _upsample("nearest"))
_function("upsample_bilinear(Tensor input, any size=None, any scale_factor=None)", _upsample("bilinear", True))
_function("pixel_shuffle(Tensor input, int upscale_factor)", _pixel_shuffle)
_function("pixel_unshuffle(Tensor input, int downscale_factor)", _pixel_unshuffle)
_function("unfold(Tensor input, int[] kernel_size, int[] dilation=1, int[] padding=0, int[] stride=1)", _unfold)
_function("fold(Tensor input, int[] output_size, int[] kernel_size, int[] dilation=1, int[] padding=0, "
          "int[] stride=1)", _fold)
_function("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
          "float dropout_p=0.0, bool is_causal=False, float? scale=None, bool enable_gqa=False)",
          _scaled_dot_product_attention)
for _name, _params in (
        ("cross_entropy", "Tensor? weight=None, any size_average=None, int ignore_index=-100, any reduce=None, "
                          "str reduction='mean', float label_smoothing=0.0"),
        ("nll_loss", "Tensor? weight=None, any size_average=None, int ignore_index=-100, any reduce=None, "
                     "str reduction='mean'"),
        ("mse_loss", f"{_LEGACY}, str reduction='mean', Tensor? weight=None"),
        ("l1_loss", f"{_LEGACY}, str reduction='mean', Tensor? weight=None"),
        ("binary_cross_entropy", f"Tensor? weight=None, {_LEGACY}, str reduction='mean'"),
        ("binary_cross_entropy_with_logits", f"Tensor? weight=None, {_LEGACY}, str reduction='mean', "
                                             "Tensor? pos_weight=None"),
        ("smooth_l1_loss", f"{_LEGACY}, str reduction='mean', float beta=1.0"),
        ("huber_loss", "str reduction='mean', float delta=1.0, Tensor? weight=None"),
        ("kl_div", f"{_LEGACY}, str reduction='mean', bool log_target=False"),
):
    _function(f"{_name}(Tensor input, Tensor target, {_params})", _loss(_name))
_function(f"cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, {_LEGACY}, "
          "str reduction='mean')", _cosine_embedding_loss)

def _default(param: optable.Param):
    if param.default is REQUIRED:
        raise Unbound(param.name)
    if isinstance(param.default, tuple):
        return SeqValue("tuple", tuple(constant(v) for v in param.default))
    return constant(param.default)


def functional(inf, name: str, call: Call):
    """``torch.nn.functional.<name>(...)``: its op table row, or its shape function here."""
    row = optable.functional(name)
    if row is not None and row.family is not Family.CUSTOM:
        return ops_families.apply(inf, row, call)
    entry = _FUNCTIONS.get(name)
    if entry is None or call.starred:
        return None
    signature, implementation = entry
    try:
        bound = optable.bind(signature, call.args, call.kwargs, missing=_default)
        return implementation(inf, bound)
    except (Unbound, _Nothing):
        return None  # a TypeError, or an error PyTorch certainly raises, or facts not known


# -- building layers -------------------------------------------------------------------------------------------------
_UNKNOWN = (("params", "unknown"),)  # a layer whose settings (or tensors) are not all known
_FACTORY_SETTINGS = frozenset({"device", "dtype"})


def _is_unknown(module: ModuleValue) -> bool:
    return module.setting("params") == "unknown"


class _Unknown:
    """A setting given a value the analysis does not know (``nn.Conv2d(32, k ** 2, 3)``): not None, not anything."""

    def __repr__(self) -> str:
        return "?"


UNKNOWN_SETTING = _Unknown()


def _kept(param: optable.Param, value):
    """A setting as the module keeps it: plain Python where known (ints, sizes, flags), else the value itself."""
    if value is None:
        return UNKNOWN_SETTING
    if param.type in ("int", "int?"):
        dim = int_of(value)
        if dim is not None:
            return dim
    if isinstance(value, ScalarValue):
        return None if value.kind == "none" else value if value.value is None else value.value
    if isinstance(value, SeqValue) and value.items is not None and all(
            isinstance(i, ScalarValue) and i.kind in ("int", "float") and i.value is not None for i in value.items):
        return tuple(i.value for i in value.items)
    if isinstance(value, SymbolicValue) and param.type.startswith("int[]") and value.is_int:
        return value.dim
    return value


def _as_value(setting):
    """A kept setting back as a value, for the functional call of the forward."""
    if setting is UNKNOWN_SETTING:
        return None
    if setting is None:
        return ScalarValue("none")
    if isinstance(setting, bool):
        return ScalarValue("bool", setting)
    if isinstance(setting, (int, Sym)):
        return ScalarValue("int", setting)
    if isinstance(setting, float):
        return ScalarValue("float", setting)
    if isinstance(setting, str):
        return ScalarValue("str", setting)
    if isinstance(setting, tuple):
        return SeqValue("tuple", tuple(_as_value(s) for s in setting))
    return setting


def _tensor_of_layer(inf, shape, role: str, bound: dict) -> TensorValue:
    """A parameter (requires grad) or buffer: ``dtype=`` or the default dtype, ``device=`` or the default device."""
    if shape is not None and any(isinstance(d, int) and d < 0 for d in shape):
        raise _Nothing  # a negative size: torch.empty raises
    given_dtype, given_device = bound.get("dtype", constant(None)), bound.get("device", constant(None))
    if role == COUNT:
        dtype, why = DType.int64, "a counter: int64"
    elif _is_none(given_dtype):
        dtype, why = inf.default_float, "layer parameters use the default dtype"
    else:
        dtype, why = dtype_arg(given_dtype), "dtype= given to the layer"
    device = inf.default_device if _is_none(given_device) else device_arg(given_device)
    made = make_tensor(inf, dtype, shape, device, role in (PARAM, MAYBE), why if dtype is not None else None, None)
    if made is None:
        raise _Nothing  # a parameter of an integer dtype= cannot require grad
    return made


def layer(inf, kind: str, call: Call):
    """``nn.<kind>(...)``: the module with its settings and the facts of its parameters and buffers."""
    if kind in layers.CONTAINERS:
        return _container(kind, call)
    if kind == "ParameterList":
        return _parameter_list(call)
    spec = LAYERS.get(kind)
    if spec is None:
        return None
    if spec.init is None:
        return ModuleValue(kind)  # Identity, Tanh...: any arguments, ignored
    if call.starred:
        return ModuleValue(kind, config=_UNKNOWN)
    try:
        bound = optable.bind(spec.init, call.args, call.kwargs, missing=_default)
    except Unbound:
        return None  # PyTorch raises a TypeError
    settings = Settings(bound)
    if spec.valid is not None and not spec.valid(settings):
        return None  # the constructor raises
    given = [p.name for p in spec.init.params[:len(call.args)]] + list(call.kwargs)
    config = tuple((name, _kept(spec.init.param(name), bound[name])) for name in given
                   if name not in _FACTORY_SETTINGS)
    made = spec.tensors(settings) if spec.tensors is not None else []
    if made is None:
        return ModuleValue(kind, (), config + _UNKNOWN)
    try:
        tensors = tuple((name, _tensor_of_layer(inf, shape, role, bound)) for name, shape, role in made)
    except _Nothing:
        return None  # the constructor raises
    maybe = tuple(name for name, _, role in made if role == MAYBE)
    return ModuleValue(kind, tuple(t for t in tensors if t[0] not in maybe),
                       config + ((("unknown_tensors", maybe),) if maybe else ()))


def _is_module_or_none(value) -> bool:
    """``PEG(dim) if is_first else None``: a module or None, which a ModuleList holds (and iterates) as it is."""
    return isinstance(value, EitherValue) and value.may_be_none and _is_module(value.without_none())


def _is_module(value) -> bool:
    """A module, or one of a few (``Aggregate(d) if not last else nn.Identity()``: each call runs every option)."""
    return isinstance(value, (ModuleValue, InstanceValue)) or isinstance(value, EitherValue) and all(
        isinstance(o, (ModuleValue, InstanceValue)) for o in value.options)


def _container(kind: str, call: Call) -> ModuleValue:
    """``nn.Sequential(a, b)``, ``nn.Sequential(*layers)``, ``nn.ModuleList([...])`` (a comprehension too),
    ``nn.ModuleDict(dict(a=..., b=...))``: what they hold, one by one or all alike; unknown contents: None."""
    unknown = ModuleValue(kind, children=None)
    if call.kwargs:
        return unknown
    args = call.args
    if kind == "Sequential":
        if call.starred:
            items = args[0] if len(args) == 1 else None
            if isinstance(items, SeqValue) and items.items is not None and all(map(_is_module, items.items)):
                return ModuleValue(kind, children=items.items)
            if isinstance(items, SeqValue) and _is_module(items.element):
                return ModuleValue(kind, children=None, element=items.element)
            return unknown
        return ModuleValue(kind, children=tuple(args)) if args and all(map(_is_module, args)) else unknown
    if call.starred or len(args) > 1:
        return unknown
    if not args:
        return ModuleValue(kind)  # empty, to be filled by append
    given = args[0]
    if kind == "ModuleDict":
        if isinstance(given, MappingValue) and all(_is_module(v) for _, v in given.items):
            return ModuleValue(kind, children=tuple(v for _, v in given.items), names=tuple(k for k, _ in given.items))
        return unknown
    if isinstance(given, SeqValue) and given.items is not None and all(map(_is_module, given.items)):
        return ModuleValue(kind, children=given.items)
    if kind == "ModuleList" and isinstance(given, SeqValue) and given.items is not None \
            and all(_is_module(v) or _is_module_or_none(v) for v in given.items):
        return ModuleValue(kind, children=given.items)  # [Attention(dim), PEG(dim) if is_first else None]
    if isinstance(given, SeqValue) and _is_module(given.element):
        return ModuleValue(kind, children=None, element=given.element)  # [Block(config) for _ in range(n)]
    return unknown


def as_parameter(value):
    """What a ParameterList keeps of an item: a Parameter as it is, another tensor made one (a leaf requiring
    grad), a ParameterList as it is (a sub-module); None for anything else (not followed)."""
    if isinstance(value, ModuleValue) and value.kind == "ParameterList":
        return value
    if not isinstance(value, TensorValue) or _integer_tensor(value):
        return None  # (an integer tensor cannot be made a Parameter: torch raises)
    if value.requires_grad is True and value.is_leaf is True:
        return value
    # (`Parameter(t, requires_grad=False)` is kept as it is, a plain tensor made one: which, unknown here)
    return value.with_(requires_grad=None, is_leaf=True, memory=None, saved_by=None)


def _integer_tensor(value) -> bool:
    return isinstance(value, TensorValue) and value.dtype is not None and not dtypes.is_floating(value.dtype) \
        and not dtypes.is_complex(value.dtype)


def _parameter_list(call: Call) -> ModuleValue:
    """``nn.ParameterList([nn.Parameter(torch.randn(n, d)) for n in sizes])``, ``nn.ParameterList([])`` (then
    appended to): its items one by one or all alike, as a ModuleList's; unknown contents: None."""
    unknown = ModuleValue("ParameterList", children=None)
    if call.kwargs or call.starred or len(call.args) > 1:
        return unknown
    if not call.args:
        return ModuleValue("ParameterList")
    given = call.args[0]
    if isinstance(given, SeqValue) and any(_integer_tensor(v) for v in (*(given.items or ()), given.element)):
        return None  # torch raises
    if isinstance(given, SeqValue) and given.items is not None:
        items = tuple(as_parameter(v) for v in given.items)
        return ModuleValue("ParameterList", children=items) if all(i is not None for i in items) else unknown
    if isinstance(given, SeqValue) and given.element is not None and as_parameter(given.element) is not None:
        return ModuleValue("ParameterList", children=None, element=as_parameter(given.element))
    return unknown


# -- converting modules ------------------------------------------------------------------------------------------------
_MODULE_TO = Signature.parse("to(any a=None, any b=None, any non_blocking=False, *, any device=None, any dtype=None, "
                             "any memory_format=None)")


def _to_target(call: Call):
    """(dtype, device, keep layout) of ``module.to(...)``: "same" where it does not change, None where unknown."""
    try:
        bound = optable.bind(_MODULE_TO, call.args, call.kwargs, missing=_default)
    except Unbound:
        return None
    dtype, device = "same", "same"
    for value in (bound["a"], bound["b"], bound["device"], bound["dtype"]):
        if _is_none(value) or isinstance(value, ScalarValue) and value.kind == "bool":
            continue
        if isinstance(value, DtypeValue):
            dtype = value.dtype
        elif isinstance(value, DeviceValue) or isinstance(value, ScalarValue) and value.kind == "str":
            device = device_arg(value)
        elif isinstance(value, ScalarValue) and value.kind == "int" and isinstance(value.value, int):
            device = f"cuda:{value.value}"  # a device index
        elif isinstance(value, TensorValue):
            dtype, device = value.dtype, value.device
        else:
            dtype, device = None, None
    return dtype, device, _is_none(bound["memory_format"])


def _conversion(name: str, call: Call) -> Optional[tuple]:
    """(dtype, device, layout kept, requires_grad) a module method sets, "same" for what it leaves; None: unknown."""
    dtype = device = grad = "same"
    keep_layout = True
    if name == "cuda":
        index = call.get(0, "device")
        device = "cuda" if index is None or _is_none(index) else \
            f"cuda:{index.value}" if isinstance(index, ScalarValue) and isinstance(index.value, int) else \
            device_arg(index)
    elif name == "cpu":
        device = "cpu"
    elif name in ("float", "double", "half", "bfloat16"):
        dtype = dtypes.parse_cast_method(name)
    elif name == "to":
        target = _to_target(call)
        if target is None:
            return None
        dtype, device, keep_layout = target
        if dtype not in ("same", None) and not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype)):
            return None  # "nn.Module.to only accepts floating point or complex dtypes"
    elif name == "requires_grad_":
        flag = call.get(0, "requires_grad")
        grad = True if flag is None else _flag(flag)
    return dtype, device, keep_layout, grad


def module_converted(module: ModuleValue, name: str, call: Call) -> Optional[ModuleValue]:
    """``model.to(...)``/``.cuda()``/``.double()``/``.requires_grad_()`` change the tensors in place and return
    the module. Dtype conversions touch floating tensors only (``num_batches_tracked`` stays int64);
    ``requires_grad_`` touches parameters only."""
    if name in ("train", "eval"):
        return module
    conversion = _conversion(name, call)
    if conversion is None:
        return None
    dtype, device, keep_layout, grad = conversion
    spec = LAYERS.get(module.kind)
    buffers = spec.buffers if spec is not None else ()

    def convert(tensor_name: str, tensor: TensorValue) -> TensorValue:
        changes = {}
        if dtype != "same" and (tensor.dtype is None or dtypes.is_floating(tensor.dtype)):
            changes.update(dtype=dtype if tensor.dtype is not None else None,
                           why=f"`.{name}()` converted the module's parameters" if dtype else None)
        if device != "same":
            changes["device"] = device
        if not keep_layout and tensor.shape is not None and len(tensor.shape) in (4, 5):
            changes["strides"] = None  # memory_format=: a 4-d or 5-d weight changes its layout
        if grad != "same" and tensor_name not in buffers:
            changes["requires_grad"] = grad
        return tensor.with_(**changes) if changes else tensor

    children = None if module.children is None else tuple(
        module_converted(c, name, call) if isinstance(c, ModuleValue) else c for c in module.children)
    element = module_converted(module.element, name, call) if isinstance(module.element, ModuleValue) \
        else module.element
    return ModuleValue(module.kind, tuple((n, convert(n, p)) for n, p in module.params), module.config, children,
                       module.names, element)


# -- calling layers ----------------------------------------------------------------------------------------------------
def call_module(inf, module: ModuleValue, call: Call):
    """``layer(x)``: the facts of the functional call its forward makes."""
    if module.kind == "Sequential":
        return _sequential(inf, module, call)
    if is_einops_layer(module):  # Rearrange / Reduce of einops.layers.torch: forward(self, input)
        one = len(call.args) + len(call.kwargs) == 1 and not call.starred
        return call_einops_layer(inf, module, call.get(0, "input")) if one else None
    spec = LAYERS.get(module.kind)
    if spec is not None and _is_unknown(module) and (module.kind in _CONV_SPATIAL or spec.ranks is not None):
        return _of_unknown_settings(inf, module, spec, call)
    if spec is None or _is_unknown(module) or call.starred:
        return None
    try:
        names = _forward_names(module, spec, call)
    except (Unbound, _Nothing):
        return None
    first = names[spec.call.params[0].name]
    if spec.ranks is not None and first.shape is not None and len(first.shape) not in spec.ranks:
        certainly_raises(inf)
        return None  # the layer's own input check raises
    if not spec.training:
        return _written(inf, spec, names, _run(inf, module, spec.forward, names, call))
    # The module's training mode is not known statically (`model.eval()` may have run): what holds in both.
    results = []
    for training in (True, False):
        names["training"] = ScalarValue("bool", training)
        forward = spec.eval_forward if not training and spec.eval_forward else spec.forward
        results.append(_run(inf, module, forward, names, call))
    return _written(inf, spec, names, join(*results))


_CONV_SPATIAL = {f"Conv{t}{n}d": n for n in (1, 2, 3) for t in ("", "Transpose")}


def _of_unknown_settings(inf, module: ModuleValue, spec, call: Call):
    """A conv, or a layer with an input rank check, whose settings are not all known (``nn.Conv2d(c,
    default(dim_stem, dim), 3)``, ``nn.BatchNorm2d(hidden_dim)``): whatever they are, its forward takes an input of
    its ranks only (a conv: unbatched or batched, by F.conv*'s own check, a padding mode's ``F.pad`` raising first
    or not). A conv gives a tensor of the input's rank, batch and dtype, a norm one of the input's shape and dtype;
    the other sizes are not known."""
    if call.starred or len(call.args) + len(call.kwargs) != 1:
        return None  # (ConvTranspose's output_size=)
    x = call.get(0, "input")
    if not isinstance(x, TensorValue) or x.shape is None:
        return None
    n = _CONV_SPATIAL.get(module.kind)
    if len(x.shape) not in ((n + 1, n + 2) if n is not None else spec.ranks):
        certainly_raises(inf)
        return None
    if n is None:
        return TensorValue(dtype=x.dtype, shape=x.shape) if module.kind.startswith(("BatchNorm", "InstanceNorm")) \
            else None
    batch = x.shape[:1] if len(x.shape) == n + 2 else ()
    return TensorValue(dtype=x.dtype, shape=batch + tuple(Sym.fresh("n") for _ in range(n + 1)))


def _sequential(inf, module: ModuleValue, call: Call):
    x = call.get(0, "input")
    if not isinstance(x, TensorValue) or call.starred or len(call.args) != 1 or call.kwargs:
        return None
    if module.children is None and module.element is not None:
        return _sequential_of_alike(inf, module.element, x, call)
    if not module.children:
        return None  # unknown contents; an empty Sequential returns its input, rarely meant
    for child in module.children:
        x = _child_called(inf, child, x, call)
        if x is None:
            return None
    return x


def _child_called(inf, child, x, call: Call):
    step = Call(call.node, [x], {}, False, call.env)
    if isinstance(child, EitherValue):
        from torchwise.analysis.ops import call_value  # (ops builds on this module)
        return call_value(inf, child, step)
    return call_module(inf, child, step) if isinstance(child, ModuleValue) else \
        inf.call_instance(child, step) if isinstance(child, InstanceValue) else None


def _sequential_of_alike(inf, element, x: TensorValue, call: Call):
    """``nn.Sequential(*[block(...) for ...])`` of a count not known, every sub-module alike: none (the input
    itself), one or more. When one gives a tensor of the input's rank, and two give it again, any count does (the
    same sub-module on a tensor of that rank); what they agree on, each size that differs one of this call's own.
    Worked out on some paths only: an error there is not certain (there may be no sub-module)."""
    if x.shape is None:
        return None
    # (In a rank trial, a sub-module that certainly raises leaves none of them as the only way on.)
    one, raised = inf._branch(lambda: _child_called(inf, element, x, call))
    if raised:
        return x
    two, raised = inf._branch(lambda: _child_called(inf, element, one, call)) if isinstance(one, TensorValue) \
        else (None, False)
    results = [x, one] if raised else [x, one, two]
    if not all(isinstance(r, TensorValue) and r.shape is not None and len(r.shape) == len(x.shape)
               for r in results):
        return None
    joined = x
    for other in results[1:]:
        joined = join(joined, other)
    if joined.shape is None:
        from torchwise.analysis.ops import _same_rank  # (ops builds on this module)
        joined = _same_rank(call, results, joined)
    return joined


def _forward_names(module: ModuleValue, spec: layers.Layer, call: Call) -> dict:
    """What the forward's call reads: the settings (given, else defaults), the tensors, the call's arguments."""
    names = {}
    if spec.init is not None:
        names.update({p.name: _default(p) for p in spec.init.params if p.default is not REQUIRED})
    names.update({name: _as_value(setting) for name, setting in module.config})
    maybe = module.setting("unknown_tensors", ())
    names.update({name: module.param(name) or (None if name in maybe else ScalarValue("none")) for name in spec.names})
    arguments = optable.bind(spec.call, call.args, call.kwargs, missing=_default)
    for param in spec.call.params:
        if param.type == "Tensor":
            arguments[param.name] = _tensor(arguments[param.name])
    names.update(arguments)
    return names


def _run(inf, module: ModuleValue, forward: str, names: dict, call: Call):
    try:
        if forward.startswith("@"):
            return _FORWARDS[forward](inf, module, names, call)
        return _evaluate(inf, _template(forward), names, call)
    except (Unbound, _Nothing):
        return None


def _written(inf, spec: layers.Layer, names: dict, result):
    """``inplace=True``: the result is written into the input, which is returned."""
    if not spec.inplace:
        return result
    flag = _flag(names.get("inplace"))
    if flag is False or result is None:
        return result
    x = names["input"]
    fits = isinstance(result, TensorValue) and not (
        x.requires_grad and inf.grad_enabled is not False and (x.is_leaf or (x.memory or "").startswith("a view"))) \
        and not (x.dtype is not None and result.dtype is not None and x.dtype != result.dtype)
    written = x if fits else None  # (a leaf that requires grad cannot be changed in place: PyTorch raises)
    return written if flag else join(result, written)


@lru_cache(maxsize=None)
def _template(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _evaluate(inf, node: ast.expr, names: dict, site: Call):
    """A forward's call over the layer's names: calls, names, constants, ``or``/``not``/``is None``. A value not
    known is None, as in any call the analysis makes: the functional ops read it as unknown."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Constant) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return constant(ast.literal_eval(node))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        flag = _flag(_evaluate(inf, node.operand, names, site))
        return ScalarValue("bool", None if flag is None else not flag)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        flags = [_flag(_evaluate(inf, v, names, site)) for v in node.values]
        return ScalarValue("bool", True if True in flags else False if all(f is False for f in flags) else None)
    if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.Is):
        value = _evaluate(inf, node.left, names, site)
        return ScalarValue("bool", True if _is_none(value) else False if isinstance(value, TensorValue) else None)
    if isinstance(node, ast.Call):
        args = [_evaluate(inf, a, names, site) for a in node.args]
        kwargs = {k.arg: _evaluate(inf, k.value, names, site) for k in node.keywords}
        step = Call(site.node, args, kwargs, False, site.env)
        if isinstance(node.func, ast.Attribute):  # a tensor method (the view ops): `input.flatten(...)`
            receiver, method = _evaluate(inf, node.func.value, names, site), TENSOR_METHODS.get(node.func.attr)
            return method(inf, receiver, step) if isinstance(receiver, TensorValue) and method else None
        helper = _HELPERS.get(node.func.id)
        return helper(inf, *args, **kwargs) if helper is not None else functional(inf, node.func.id, step)
    raise AssertionError(f"unsupported forward syntax: {ast.dump(node)}")


# Helpers the forwards use, over values.
def _mode_padded(inf, x, padding, mode, kernel, dilation, rank):
    """A convolution's input padded by its padding_mode (``zeros`` pads inside the convolution itself)."""
    mode, rank = _text(mode), rank.value
    if mode == "zeros":
        return x
    if mode is None:
        return None
    if _text(padding) == "valid":
        return x
    if _text(padding) == "same":
        kernel, dilation = sizes_of(kernel, rank), sizes_of(dilation, rank)
        if kernel is None or dilation is None or not all(isinstance(v, int) for v in (*kernel, *dilation)):
            return None
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        sides = [side for total in reversed(totals) for side in (total // 2, total - total // 2)]
    else:
        pads = sizes_of(padding, rank)
        if pads is None:
            return None
        sides = [p for pad in reversed(pads) for p in (pad, pad)]
    step = Call(None, [x, SeqValue("tuple", tuple(ScalarValue("int", s) for s in sides)), constant(mode)], {},
                False, None)
    return functional(inf, "pad", step)


def _conv_padding(inf, padding, mode):
    """The convolution's own padding: none when the input was padded by its mode."""
    return padding if _text(mode) == "zeros" else ScalarValue("int", 0)


def _no_output_size(inf, x, output_size):
    return x if _is_none(output_size) else None  # an explicit output_size picks the output padding: not followed


def _one_of(inf, value, *allowed):
    """A string setting PyTorch checks only when the layer runs (``GELU(approximate=...)``)."""
    _require(_text(value) is None or _text(value) in {_text(a) for a in allowed})
    return value


def _implicit_dim(inf, dim, x):
    """``nn.Softmax()`` without a dim: the one ``F.softmax`` picks (0 for 0-, 1- and 3-d inputs, else 1)."""
    if not _is_none(dim):
        return dim
    if not isinstance(x, TensorValue) or x.shape is None:
        return None
    return ScalarValue("int", 0 if len(x.shape) in (0, 1, 3) else 1)


def _pad_sides(inf, padding, rank):
    """A padding layer's ``padding``: one int for every side of its ``rank`` dims, or the sides themselves."""
    single = size_of(padding)
    return SeqValue("tuple", (ScalarValue("int", single),) * (2 * rank.value)) if single is not None else padding


def _reduction_setting(inf, size_average, reduce, reduction):
    """A loss module's reduction: its legacy ``size_average`` / ``reduce``, when given, decide it."""
    legacy = _legacy_reduction(size_average, reduce)
    return reduction if legacy == "given" else ScalarValue("str", legacy)


def _unflattened(inf, x, dim, sizes):
    return _unflatten(inf, {"input": x, "dim": dim, "sizes": sizes})


_HELPERS = {"_one_of": _one_of, "_implicit_dim": _implicit_dim, "_mode_padded": _mode_padded,
            "_conv_padding": _conv_padding, "_no_output_size": _no_output_size, "_pad_sides": _pad_sides,
            "_reduction": _reduction_setting, "_unflatten": _unflattened}


# -- hand-written forwards --------------------------------------------------------------------------------------------
def _instance_norm_forward(inf, module: ModuleValue, names: dict, call: Call):
    """InstanceNormNd: an unbatched input gets a batch dim of 1; the channels must match when it is affine."""
    x, rank = names["input"], int(module.kind[-2])
    if x.shape is None:
        return None
    unbatched = len(x.shape) == rank + 1
    channels, affine, features = x.shape[0 if unbatched else 1], _flag(names["affine"]), int_of(names["num_features"])
    if features is not None and dims.dim_eq(channels, features) is False:
        _require(affine is False)  # an affine instance norm checks its channels (otherwise it only warns)
    batched = x.with_(shape=(1, *x.shape), strides=None) if unbatched else x
    stats = _flag(names["training"]) or _is_none(names["running_mean"])
    step = Call(call.node, [batched, names["running_mean"], names["running_var"], names["weight"], names["bias"],
                            ScalarValue("bool", stats), names["momentum"], names["eps"]], {}, False, call.env)
    result = functional(inf, "instance_norm", step)
    if result is None or not unbatched:
        return result
    return result.with_(shape=x.shape, strides=None if result.strides is None else contiguous_strides(x.shape))


def _attention_forward(inf, module: ModuleValue, names: dict, call: Call):
    """MultiheadAttention: ``(attn_output, attn_weights)``, the weights averaged over heads unless asked not to."""
    q, k, v, s = names["query"], names["key"], names["value"], Settings(names)
    embed, heads, batch_first = s.int("embed_dim"), s.int("num_heads"), s.flag("batch_first")
    need_weights, average, causal = s.flag("need_weights"), s.flag("average_attn_weights"), s.flag("is_causal")
    extra = (s.flag("add_bias_kv"), s.flag("add_zero_attn"))  # each adds a key
    if None in (embed, heads, batch_first, need_weights, average, causal, *extra):
        return None
    _require(not (causal and s.is_none("attn_mask")))  # "Need attn_mask if specifying the is_causal hint"
    params = [p for _, p in module.params]
    dtype = _shared_dtype(q, k, v, *params)
    _floating(dtype)
    sizes = _attention_sizes(q, k, v, s, batch_first)
    if sizes is None:
        return None
    batch, length, source = sizes
    out_shape = (*batch, length, embed) if batch_first else (length, *batch, embed)
    # batch_first outputs are transposed views (or, on the fast path, fresh tensors): layout not stated
    out = _made(inf, q, out_shape, k, v, *params, dtype=dtype, strides=None if batch and batch_first else "contiguous")
    if not need_weights:
        return SeqValue("tuple", (out, constant(None)))
    weights_shape = (*batch, *(() if average else (heads,)), length, source + sum(extra))
    return SeqValue("tuple", (out, _made(inf, q, weights_shape, k, v, *params, dtype=dtype)))


def _attention_sizes(q: TensorValue, k: TensorValue, v: TensorValue, s: Settings, batch_first: bool):
    """((batch,) or () unbatched, target length, source length) of query, key and value; None: not known."""
    embed = s.int("embed_dim")
    kdim = embed if s.is_none("kdim") else s.int("kdim")
    vdim = embed if s.is_none("vdim") else s.int("vdim")
    if q.shape is None or k.shape is None or v.shape is None or kdim is None or vdim is None:
        return None
    rank = len(q.shape)
    _require(rank in (2, 3) and len(k.shape) == rank and len(v.shape) == rank)
    for tensor, size in ((q, embed), (k, kdim), (v, vdim)):
        _same(tensor.shape[-1], size)
    seq, batch = (1, 0) if rank == 3 and batch_first else (0, 1)
    _same(v.shape[seq], k.shape[seq])
    if rank == 2:
        return (), q.shape[0], k.shape[0]
    _same(k.shape[batch], q.shape[batch])
    _same(v.shape[batch], q.shape[batch])
    return (q.shape[batch],), q.shape[seq], k.shape[seq]


def _initial_states(hx, shapes: tuple) -> list:
    """A recurrent layer's ``hx``: None (zeros), ``h_0``, or for two shapes (LSTM) the pair ``(h_0, c_0)``; each
    of its expected shape."""
    if _is_none(hx):
        return []
    if len(shapes) == 2 and not (isinstance(hx, SeqValue) and hx.items is not None and len(hx.items) == 2):
        raise _Nothing  # an LSTM's state is a pair (or not known)
    states = [_tensor(item) for item in (hx.items if len(shapes) == 2 else (hx,))]
    for state, shape in zip(states, shapes):
        if state.shape is not None:
            _require(len(state.shape) == len(shape))
            for a_, b_ in zip(state.shape, shape):
                _same(a_, b_)
    return states


def _rnn_forward(inf, module: ModuleValue, names: dict, call: Call):
    """RNN/LSTM/GRU: ``(output, h_n)``, LSTM ``(output, (h_n, c_n))``; an unbatched input has no batch dim."""
    x, s = names["input"], Settings(names)
    size, hidden, count, proj = s.int("input_size"), s.int("hidden_size"), s.int("num_layers"), s.int("proj_size")
    batch_first, bidirectional = s.flag("batch_first"), s.flag("bidirectional")
    if None in (size, hidden, count, batch_first, bidirectional, proj) or x.shape is None:
        return None
    _require(len(x.shape) in (2, 3))
    _same(x.shape[-1], size)
    batched, directions = len(x.shape) == 3, 2 if bidirectional else 1
    out = proj if isinstance(proj, int) and proj > 0 else hidden
    length = x.shape[1] if batched and batch_first else x.shape[0]
    if _is_zero(length):
        return None  # an empty sequence
    batch = ((x.shape[0] if batch_first else x.shape[1]),) if batched else ()
    h_shape, c_shape = (directions * count, *batch, out), (directions * count, *batch, hidden)
    lstm = module.kind == "LSTM"
    others = (*_initial_states(names["hx"], (h_shape, c_shape) if lstm else (h_shape,)),
              *(p for _, p in module.params))
    dtype = _shared_dtype(x, *others)
    _floating(dtype)
    out_shape = (*batch, length, directions * out) if batch_first else (length, *batch, directions * out)
    output = _made(inf, x, out_shape, *others, dtype=dtype, strides=None if batch and batch_first else "contiguous")
    h_n = _made(inf, x, h_shape, *others, dtype=dtype)
    if not lstm:
        return SeqValue("tuple", (output, h_n))
    return SeqValue("tuple", (output, SeqValue("tuple", (h_n, _made(inf, x, c_shape, *others, dtype=dtype)))))


def _cell_forward(inf, module: ModuleValue, names: dict, call: Call):
    """RNNCell/GRUCell: ``h'``; LSTMCell: ``(h', c')``; an unbatched input is 1-D."""
    x, s = names["input"], Settings(names)
    size, hidden = s.int("input_size"), s.int("hidden_size")
    if size is None or hidden is None or x.shape is None:
        return None
    _require(len(x.shape) in (1, 2))
    _same(x.shape[-1], size)
    shape, lstm = (*x.shape[:-1], hidden), module.kind == "LSTMCell"
    others = (*_initial_states(names["hx"], (shape, shape) if lstm else (shape,)), *(p for _, p in module.params))
    dtype = _shared_dtype(x, *others)
    _floating(dtype)
    h = _made(inf, x, shape, *others, dtype=dtype)
    return SeqValue("tuple", (h, _made(inf, x, shape, *others, dtype=dtype))) if lstm else h


_FORWARDS = {"@instance_norm": _instance_norm_forward, "@attention": _attention_forward, "@rnn": _rnn_forward,
             "@cell": _cell_forward}


# -- torch.nn.init and classmethods -----------------------------------------------------------------------------------
# The in-place initialisers: (least rank, most rank, whether they draw random floats).
_INITIALISERS = {
    "uniform_": (0, None, True), "normal_": (0, None, True), "trunc_normal_": (0, None, True),
    "constant_": (0, None, False), "ones_": (0, None, False), "zeros_": (0, None, False),
    "eye_": (2, 2, False), "dirac_": (3, 5, False), "xavier_uniform_": (2, None, True),
    "xavier_normal_": (2, None, True), "kaiming_uniform_": (2, None, True), "kaiming_normal_": (2, None, True),
    "orthogonal_": (2, None, True), "sparse_": (2, 2, True),
}
_GAINS = {"linear": 1, "conv1d": 1, "conv2d": 1, "conv3d": 1, "conv_transpose1d": 1, "conv_transpose2d": 1,
          "conv_transpose3d": 1, "sigmoid": 1, "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}


def qualified(inf, path: str, call: Call):
    """``torch.nn.<path>(...)`` for a dotted path: ``init.xavier_uniform_``, ``Embedding.from_pretrained``."""
    owner, _, name = path.rpartition(".")
    if owner == "init":
        return _initialised(inf, name, call)
    if owner in ("Embedding", "EmbeddingBag") and name == "from_pretrained":
        return _from_pretrained(inf, owner, call)
    return None


def _initialised(inf, name: str, call: Call):
    """``nn.init.<name>_(tensor, ...)`` fills the tensor in place and returns it; ``calculate_gain`` is a float."""
    if name == "calculate_gain":
        nonlinearity = _text(call.get(0, "nonlinearity"))
        if nonlinearity is None:
            return ScalarValue("float")
        if nonlinearity not in _GAINS and nonlinearity != "leaky_relu":
            return None  # "Unsupported nonlinearity"
        gain = _GAINS.get(nonlinearity)
        return ScalarValue("int", gain) if isinstance(gain, int) else ScalarValue("float", gain)
    known = _INITIALISERS.get(name)
    tensor = call.get(0, "tensor")
    if known is None or not isinstance(tensor, TensorValue):
        return None
    least, most, random = known
    if tensor.shape is not None and (len(tensor.shape) < least or most is not None and len(tensor.shape) > most):
        return None  # fan-in/fan-out need 2 dims, eye_ a matrix, dirac_ 3 to 5 dims: they raise
    if random and tensor.dtype is not None and not dtypes.is_floating(tensor.dtype):
        return None  # no random fills of integers
    return tensor


_FROM_PRETRAINED = {
    "Embedding": Signature.parse(
        "from_pretrained(Tensor embeddings, bool freeze=True, int? padding_idx=None, float? max_norm=None, "
        "float norm_type=2.0, bool scale_grad_by_freq=False, bool sparse=False)"),
    "EmbeddingBag": Signature.parse(
        "from_pretrained(Tensor embeddings, bool freeze=True, float? max_norm=None, float norm_type=2.0, "
        "bool scale_grad_by_freq=False, str mode='mean', bool sparse=False, bool include_last_offset=False, "
        "int? padding_idx=None)"),
}


def _from_pretrained(inf, kind: str, call: Call):
    """``nn.Embedding.from_pretrained(weights, freeze=True, ...)``: a layer whose weight is ``weights`` itself."""
    signature = _FROM_PRETRAINED[kind]
    try:
        bound = optable.bind(signature, call.args, call.kwargs, missing=_default)
    except Unbound:
        return None
    weights, frozen = bound["embeddings"], _flag(bound["freeze"])
    if not isinstance(weights, TensorValue) or call.starred or weights.shape is None:
        return None
    if len(weights.shape) != 2:
        return None  # "Embeddings parameter is expected to be 2-dimensional"
    if frozen is not True and weights.dtype is not None and not (
            dtypes.is_floating(weights.dtype) or dtypes.is_complex(weights.dtype)):
        return None  # an integer parameter cannot require grad
    rows, columns = weights.shape
    settings = {**bound, "num_embeddings": ScalarValue("int", rows), "embedding_dim": ScalarValue("int", columns)}
    if not LAYERS[kind].valid(Settings(settings)):
        return None  # a padding_idx out of range
    weight = weights.with_(requires_grad=None if frozen is None else not frozen, is_leaf=True, saved_by=None,
                           memory="shares memory with its data")
    given = ("num_embeddings", "embedding_dim", *(p.name for p in signature.params[2:len(call.args)]),
             *(name for name in call.kwargs if name not in ("embeddings", "freeze")))
    config = tuple((name, _kept(signature.param(name) or optable.Param(name, "int"), settings[name]))
                   for name in given)
    return ModuleValue(kind, (("weight", weight),), config)


__all__ = ["call_module", "functional", "layer", "module_converted", "qualified"]
