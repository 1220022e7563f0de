"""``torch.nn`` layers (constructed and called) and ``torch.nn.functional``.

Layer constructors read positional and keyword arguments alike, in PyTorch's
order: ``nn.Conv2d(3, 16, 3, 1, 1)`` has stride 1 and padding 1.
"""

from __future__ import annotations

from typing import Optional

from torchwise.analysis import dtypes, shapes
from torchwise.analysis.dtypes import DType
from torchwise.analysis.tensors import (
    Call, derived, device_arg, dtype_arg, int_of, make_tensor, result_grad,
)
from torchwise.analysis.values import InstanceValue, MappingValue, ModuleValue, ScalarValue, SeqValue, TensorValue

# Constructor signatures: the parameter names in positional order (PyTorch's own order).
_SIGNATURES = {
    "Linear": ("in_features", "out_features", "bias"),
    "Bilinear": ("in1_features", "in2_features", "out_features", "bias"),
    "Conv1d": ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias"),
    "Conv2d": ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias"),
    "Embedding": ("num_embeddings", "embedding_dim", "padding_idx"),
    "LayerNorm": ("normalized_shape", "eps", "elementwise_affine"),
    "BatchNorm1d": ("num_features", "eps", "momentum", "affine"),
    "BatchNorm2d": ("num_features", "eps", "momentum", "affine"),
    "Dropout": ("p", "inplace"),
    "MaxPool1d": ("kernel_size", "stride", "padding", "dilation"),
    "MaxPool2d": ("kernel_size", "stride", "padding", "dilation"),
    "AvgPool1d": ("kernel_size", "stride", "padding"),
    "AvgPool2d": ("kernel_size", "stride", "padding"),
    "Flatten": ("start_dim", "end_dim"),
    "Softmax": ("dim",),
    "LogSoftmax": ("dim",),
}
_SAME_SHAPE = frozenset({"ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Dropout", "Identity", "LeakyReLU", "ELU",
                         "Softmax", "LogSoftmax", "Mish", "Hardswish", "ReLU6", "Softplus", "LayerNorm",
                         "BatchNorm1d", "BatchNorm2d", "Dropout2d", "Dropout1d", "GroupNorm"})
_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def _settings(kind: str, call: Call) -> Optional[dict]:
    names = _SIGNATURES.get(kind, ())
    if call.starred or len(call.args) > len(names) and kind not in _CONTAINERS:
        return None
    values = dict(zip(names, call.args))
    values.update(call.kwargs)
    return values


def _int_setting(values: dict, name: str, default=None):
    if name not in values:
        return default
    return int_of(values[name])


def _pair(value, default, rank: int):
    """kernel_size=3 or (3, 3); padding may also be the string "same"/"valid"."""
    if value is None:
        return (default,) * rank if default is not None else None
    if isinstance(value, ScalarValue) and value.kind == "str":
        return value.value
    single = int_of(value)
    if single is not None:
        return (single,) * rank
    if isinstance(value, SeqValue) and value.items is not None and len(value.items) == rank:
        items = tuple(int_of(i) for i in value.items)
        return items if all(i is not None for i in items) else None
    return None


def _flag(values: dict, name: str, default: bool) -> Optional[bool]:
    if name not in values:
        return default
    value = values[name]
    return value.value if isinstance(value, ScalarValue) and value.kind == "bool" else None


def _parameter(inf, shape, values: dict) -> TensorValue:
    dtype = dtype_arg(values["dtype"]) if "dtype" in values else inf.default_float
    device = device_arg(values["device"]) if "device" in values else inf.default_device
    why = "layer parameters use the default dtype" if "dtype" not in values else "dtype= given to the layer"
    return make_tensor(inf, dtype, shape, device, True, why, None)


def layer(inf, kind: str, call: Call):
    if kind in _CONTAINERS:
        return _container(kind, call)
    values = _settings(kind, call)
    if values is None:
        return ModuleValue(kind) if kind in _SAME_SHAPE or kind in _SIGNATURES else None
    params: list = []
    config = {name: int_of(v) if int_of(v) is not None else v for name, v in values.items()}
    if kind == "Linear":
        n_in, n_out = _int_setting(values, "in_features"), _int_setting(values, "out_features")
        if n_in is None or n_out is None:
            return ModuleValue(kind)
        params.append(("weight", _parameter(inf, (n_out, n_in), values)))
        if _flag(values, "bias", True):
            params.append(("bias", _parameter(inf, (n_out,), values)))
    elif kind in ("Conv1d", "Conv2d"):
        rank = 1 if kind == "Conv1d" else 2
        c_in, c_out = _int_setting(values, "in_channels"), _int_setting(values, "out_channels")
        kernel = _pair(values.get("kernel_size"), None, rank)
        groups = _int_setting(values, "groups", 1)
        if None in (c_in, c_out, groups) or not isinstance(kernel, tuple) or not isinstance(c_in, int) \
                or c_in % groups:
            return ModuleValue(kind)
        params.append(("weight", _parameter(inf, (c_out, c_in // groups, *kernel), values)))
        if _flag(values, "bias", True):
            params.append(("bias", _parameter(inf, (c_out,), values)))
        config.update(kernel_size=kernel, stride=_pair(values.get("stride"), 1, rank),
                      padding=_pair(values.get("padding"), 0, rank), dilation=_pair(values.get("dilation"), 1, rank))
        if isinstance(config["padding"], str) and (config["padding"] not in ("same", "valid") or (
                config["padding"] == "same" and config["stride"] != (1,) * rank)):
            return None  # PyTorch rejects the layer itself
    elif kind == "Embedding":
        n, d = _int_setting(values, "num_embeddings"), _int_setting(values, "embedding_dim")
        if n is None or d is None:
            return ModuleValue(kind)
        params.append(("weight", _parameter(inf, (n, d), values)))
    elif kind == "LayerNorm":
        normalized = values.get("normalized_shape")
        dims = (int_of(normalized),) if int_of(normalized) is not None else None
        if dims is not None and _flag(values, "elementwise_affine", True):
            params += [("weight", _parameter(inf, dims, values)), ("bias", _parameter(inf, dims, values))]
    elif kind in ("BatchNorm1d", "BatchNorm2d"):
        n = _int_setting(values, "num_features")
        if n is not None and _flag(values, "affine", True):
            params += [("weight", _parameter(inf, (n,), values)), ("bias", _parameter(inf, (n,), values))]
    elif kind in ("MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d"):
        rank = 1 if kind.endswith("1d") else 2
        kernel = _pair(values.get("kernel_size"), None, rank)
        stride = _pair(values.get("stride"), None, rank) if "stride" in values and not (
            isinstance(values["stride"], ScalarValue) and values["stride"].kind == "none") else kernel
        config.update(kernel_size=kernel, stride=stride, padding=_pair(values.get("padding"), 0, rank),
                      dilation=_pair(values.get("dilation"), 1, rank),
                      ceil_mode=_flag(values, "ceil_mode", False))
    elif kind not in _SAME_SHAPE and kind != "Flatten":
        return None
    return ModuleValue(kind, tuple(params), tuple(config.items()))


def _is_module(value) -> bool:
    return isinstance(value, (ModuleValue, InstanceValue))


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
    if isinstance(given, SeqValue) and _is_module(given.element):
        return ModuleValue(kind, children=None, element=given.element)  # [Block(config) for _ in range(n)]
    return unknown


def module_converted(module: ModuleValue, name: str, call: Call) -> ModuleValue:
    """``model.to(...)``/``.cuda()``/``.float()`` convert the parameters in place and return the module."""
    def convert(param: TensorValue) -> TensorValue:
        if name == "cuda":
            return param.with_(device="cuda")
        if name == "cpu":
            return param.with_(device="cpu")
        if name in ("float", "double", "half"):
            return param.with_(dtype=dtypes.parse_cast_method(name))
        if name == "to":
            dtype, device = param.dtype, param.device
            for value in (*call.args, *call.kwargs.values()):
                if dtype_arg(value) is not None:
                    dtype = dtype_arg(value)
                elif device_arg(value) is not None or isinstance(value, ScalarValue):
                    device = device_arg(value)
                else:
                    return param.with_(dtype=None, device=None)
            return param.with_(dtype=dtype, device=device)
        return param
    if name in ("train", "eval", "requires_grad_"):
        return module
    children = None if module.children is None else tuple(
        module_converted(c, name, call) if isinstance(c, ModuleValue) else c for c in module.children)
    return ModuleValue(module.kind, tuple((n, convert(p)) for n, p in module.params), module.config, children,
                       module.names, module.element if not isinstance(module.element, ModuleValue)
                       else module_converted(module.element, name, call))


def call_module(inf, module: ModuleValue, call: Call):
    x = call.get(0, "input")
    if not isinstance(x, TensorValue) or call.starred or len(call.args) != 1:
        return None
    if module.kind == "Sequential":
        if not module.children:
            return None  # unknown contents; an empty Sequential returns its input, rarely meant
        for child in module.children:
            step = Call(call.node, [x], {}, False, call.env)
            x = call_module(inf, child, step) if isinstance(child, ModuleValue) else \
                inf.call_instance(child, step) if isinstance(child, InstanceValue) else None
            if x is None:
                return None
        return x
    weight = module.param("weight")
    if module.kind == "Linear":
        if weight is None or x.dtype is not None and not dtypes.is_floating(x.dtype):
            return None
        try:
            shape = shapes.linear(x.shape, weight.shape, module.param("bias") and module.param("bias").shape)
        except shapes.ShapeError:
            return None
        return _output(inf, x, weight, shape)
    if module.kind == "Embedding":
        if weight is None or weight.shape is None or x.dtype is not None and x.dtype not in (DType.int64, DType.int32):
            return None  # (an index of unknown dtype must be an integer one, or the call raises)
        shape = None if x.shape is None else (*x.shape, weight.shape[1])
        return make_tensor(inf, weight.dtype, shape, weight.device, True, weight.why, None).with_(is_leaf=False)
    if module.kind in ("Conv1d", "Conv2d"):
        return _conv(inf, module, x, weight)
    if module.kind in ("MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d"):
        return _pool(inf, module, x)
    if module.kind == "Flatten":
        start, end = module.setting("start_dim", 1), module.setting("end_dim", -1)
        if not isinstance(start, int) or not isinstance(end, int) or x.shape is None:
            return None
        from torchwise.analysis.ops_tensor import flatten_value

        return flatten_value(inf, x, start, end)
    if module.kind in _SAME_SHAPE:
        if x.dtype is not None and not dtypes.is_floating(x.dtype) and (
                module.kind not in ("ReLU", "Identity") or (module.kind == "ReLU" and x.dtype == DType.bool)):
            return None
        if not _accepts(module, x):
            return None
        params = [p for _, p in module.params]
        if x.dtype is not None and any(p.dtype != x.dtype for p in params):
            return None  # a float32 norm layer on float64 input raises (mixed dtype); unknown: it may
        return derived(inf, x, *params)
    return None


def _accepts(module: ModuleValue, x: TensorValue) -> bool:
    """The input checks PyTorch makes for same-shape layers (False: it raises, or we cannot tell)."""
    shape = x.shape
    if module.kind == "LayerNorm":
        normalized = module.setting("normalized_shape")
        if not isinstance(normalized, int) or shape is None:
            return False
        return len(shape) >= 1 and shape[-1] == normalized
    if module.kind in ("BatchNorm1d", "BatchNorm2d"):
        features = module.setting("num_features")
        ranks = (2, 3) if module.kind == "BatchNorm1d" else (4,)
        if not isinstance(features, int) or shape is None or len(shape) not in ranks:
            return False
        return shape[1] == features
    if module.kind in ("Softmax", "LogSoftmax"):
        dim = module.setting("dim")
        if not isinstance(dim, int) or shape is None:
            return False
        return -max(len(shape), 1) <= dim < max(len(shape), 1)
    return True


def _output(inf, x: TensorValue, weight: TensorValue, shape) -> TensorValue | None:
    if x.dtype is not None and x.dtype != weight.dtype:
        return None  # layers do not promote: PyTorch raises (TW504); with the weight's dtype unknown, it may
    if weight.dtype is not None and not dtypes.is_floating(weight.dtype):
        return None  # no integer or bool matrix kernels for layers
    dtype = weight.dtype if weight.dtype == x.dtype or x.dtype is None else None
    grad = result_grad(inf, x, weight)
    device = weight.device if weight.device == x.device else None
    return TensorValue(dtype if x.dtype is not None else None, shape, device,
                       None if shape is None else _contiguous(shape), grad, None if grad is None else not grad,
                       weight.why if dtype else None, None)


def _contiguous(shape):
    from torchwise.analysis.tensors import contiguous_strides

    return contiguous_strides(shape)


def _spatial(size, kernel, stride, padding, dilation, ceil_mode=False):
    if not all(isinstance(v, int) for v in (size, kernel, stride, padding, dilation)):
        return None
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    if span < 0:
        return None
    out = -(-span // stride) + 1 if ceil_mode else span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1  # PyTorch drops a last window that would start in the right padding
    return out


def _conv(inf, module: ModuleValue, x: TensorValue, weight):
    rank = 1 if module.kind == "Conv1d" else 2
    if weight is None or x.shape is None or len(x.shape) not in (rank + 1, rank + 2):
        return None
    if x.dtype is not None and not dtypes.is_floating(x.dtype):
        return None
    batched = len(x.shape) == rank + 2
    if any(d == 0 for d in x.shape[1 if batched else 0:]):
        return None  # convolutions need non-empty channels and spatial dims
    channels = x.shape[1 if batched else 0]
    groups = module.setting("groups", 1)
    if isinstance(channels, int) and isinstance(groups, int) and channels != weight.shape[1] * groups:
        return None
    kernel, stride = module.setting("kernel_size"), module.setting("stride")
    padding, dilation = module.setting("padding"), module.setting("dilation")
    spatial = []
    for i in range(rank):
        size = x.shape[-rank + i]
        if padding == "same":
            spatial.append(size)
        elif padding == "valid":
            spatial.append(_spatial(size, kernel[i], stride[i], 0, dilation[i]))
        elif isinstance(padding, tuple) and isinstance(stride, tuple) and isinstance(dilation, tuple):
            spatial.append(_spatial(size, kernel[i], stride[i], padding[i], dilation[i]))
        else:
            spatial.append(None)
    if any(s is None for s in spatial):
        return None
    shape = ((x.shape[0],) if batched else ()) + (weight.shape[0], *spatial)
    return _output(inf, x, weight, shape)


def _pool(inf, module: ModuleValue, x: TensorValue):
    rank = 1 if module.kind.endswith("1d") else 2
    kernel, stride = module.setting("kernel_size"), module.setting("stride")
    padding, dilation = module.setting("padding"), module.setting("dilation") or (1,) * rank
    ceil_mode = module.setting("ceil_mode")
    if x.shape is None or len(x.shape) not in (rank + 1, rank + 2) or not all(
            isinstance(v, tuple) for v in (kernel, stride, padding, dilation)) or ceil_mode is None:
        return None
    if any(d == 0 for d in x.shape[-rank - 1:]):
        return None  # pooling needs non-empty non-batch dims
    if x.dtype is not None and not dtypes.is_floating(x.dtype):
        return None  # no bool kernels, and integer support differs between max and average pooling
    spatial = [_spatial(x.shape[-rank + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
               for i in range(rank)]
    if any(s is None for s in spatial):
        return None
    return derived(inf, x, shape=(*x.shape[:-rank], *spatial))


# -- torch.nn.functional ------------------------------------------------------------------------------------------
_F_SAME_SHAPE = frozenset({"relu", "relu6", "gelu", "silu", "elu", "leaky_relu", "sigmoid", "tanh", "softmax",
                           "log_softmax", "dropout", "normalize", "layer_norm", "softplus", "mish", "hardswish",
                           "group_norm", "batch_norm", "dropout2d"})
_INTEGER_OK = frozenset({"relu"})
# Ops taking a dim: (its position, its default; None = required).
_DIM_ARGUMENT = {"softmax": (1, None), "log_softmax": (1, None), "normalize": (2, 1)}


def _attention(inf, call: Call):
    """``F.scaled_dot_product_attention(q, k, v)``: ``(..., L, E) x (..., S, E) x (..., S, Ev) -> (..., L, Ev)``."""
    q, k, v = call.get(0, "query"), call.get(1, "key"), call.get(2, "value")
    if not all(isinstance(t, TensorValue) for t in (q, k, v)) or call.starred:
        return None
    if q.shape is None or v.shape is None or len(q.shape) < 2 or len(v.shape) < 2:
        return None
    if len({t.dtype for t in (q, k, v)}) > 1 or q.dtype is not None and not dtypes.is_floating(q.dtype):
        return None  # query, key and value must share one floating dtype
    mask = call.kwargs.get("attn_mask")
    if isinstance(mask, TensorValue):
        return None  # the mask broadcasts into the attention weights: not followed
    batch = q.shape[:-1]
    try:
        shapes.broadcast(q.shape[:-2], v.shape[:-2])
    except shapes.ShapeError:
        return None
    return derived(inf, q, k, v, shape=(*batch, v.shape[-1]))


def _dim_in_range(call: Call, x: TensorValue, position: int, default) -> bool:
    """The dim argument is a known int within the input's rank (PyTorch raises otherwise)."""
    dim = int_of(call.get(position, "dim")) if call.given(position, "dim") else default
    if not isinstance(dim, int) or x.shape is None:
        return dim is not None and x.shape is None
    try:
        shapes.wrap_dim(dim, len(x.shape))
    except shapes.ShapeError:
        return False
    return True
_F_LOSSES = frozenset({"cross_entropy", "mse_loss", "l1_loss", "nll_loss", "binary_cross_entropy",
                       "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div"})


def _loss_inputs_fit(name: str, x: TensorValue, target: TensorValue) -> bool:
    """The input/target checks PyTorch makes before a loss (False also when we cannot tell)."""
    if x.dtype is None or not dtypes.is_floating(x.dtype) or x.shape is None or target.shape is None \
            or target.dtype is None:
        return False
    if name in ("cross_entropy", "nll_loss"):
        if len(x.shape) == 0:
            return False
        if target.dtype == DType.int64:  # class indices: the input without its class dim
            expected = (x.shape[0], *x.shape[2:]) if len(x.shape) >= 2 else ()
            return target.shape == expected
        return name == "cross_entropy" and target.dtype == x.dtype and target.shape == x.shape  # probabilities
    if name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                "binary_cross_entropy_with_logits"):
        return target.shape == x.shape and target.dtype == x.dtype
    return False


def functional(inf, name: str, call: Call):
    x = call.get(0, "input")
    if not isinstance(x, TensorValue):
        return None
    if name in _F_SAME_SHAPE:
        if x.dtype is not None and not dtypes.is_floating(x.dtype) and (
                name not in _INTEGER_OK or x.dtype == DType.bool or dtypes.is_complex(x.dtype)):
            return None  # most activations and norms have no integer kernels; relu takes ints, not bools
        if name in _DIM_ARGUMENT and not _dim_in_range(call, x, *_DIM_ARGUMENT[name]):
            return None
        return derived(inf, x)
    if name == "linear":
        weight, bias = call.get(1, "weight"), call.get(2, "bias")
        if not isinstance(weight, TensorValue):
            return None
        known = {t.dtype for t in (x, weight, bias) if isinstance(t, TensorValue)}
        if len(known) > 1 or (isinstance(bias, TensorValue) and bias.dtype is None):
            return None  # input, weight and bias must share one dtype
        try:
            shape = shapes.linear(x.shape, weight.shape, bias.shape if isinstance(bias, TensorValue) else None)
        except shapes.ShapeError:
            return None
        return _output(inf, x, weight, shape)
    if name in _F_LOSSES:
        reduction = call.kwargs.get("reduction")
        if reduction is not None and not (isinstance(reduction, ScalarValue) and reduction.value in ("mean", "sum")):
            return None
        target = call.get(1, "target")
        if not isinstance(target, TensorValue) or not _loss_inputs_fit(name, x, target):
            return None
        return derived(inf, x, target, shape=())
    if name == "scaled_dot_product_attention":
        return _attention(inf, call)
    if name == "one_hot":
        classes = int_of(call.get(1, "num_classes"))
        if x.shape is None or not isinstance(classes, int) or classes < 0 or x.dtype != DType.int64:
            return None  # one_hot takes int64 indices only
        return make_tensor(inf, DType.int64, (*x.shape, classes), x.device, False, "one_hot gives int64")
    if name == "embedding":
        weight = call.get(1, "weight")
        if not isinstance(weight, TensorValue) or weight.shape is None or x.shape is None or len(weight.shape) != 2:
            return None
        return make_tensor(inf, weight.dtype, (*x.shape, weight.shape[1]), weight.device, weight.requires_grad,
                           weight.why).with_(is_leaf=False if weight.requires_grad else True)
    return None
