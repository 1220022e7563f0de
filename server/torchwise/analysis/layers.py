"""The ``torch.nn`` layers torchwise knows, each said once: its constructor, its tensors, and its forward.

A row gives

- ``init``: the constructor's signature in PyTorch's own order (``nn.Conv2d(3, 16, 3, 1, 1)`` has stride 1 and
  padding 1), bound by ``optable.bind`` as PyTorch's argument parser would;
- ``tensors``: the parameters and buffers it makes, as shapes of its settings (``Linear``: ``weight`` is
  ``(out_features, in_features)``); their dtype is ``dtype=`` or the default dtype, parameters require grad;
- ``forward``: the functional call its ``forward`` makes, written over its call's arguments, its tensors and its
  settings (``"conv2d(input, weight, bias, stride, padding, dilation, groups)"``): a layer's facts are those of
  its ``torch.nn.functional`` op, so both are checked against torch by the same shape functions. A handful of
  layers whose forward is more than one call (attention, recurrent layers, instance norm) name a hand-written
  forward instead (``"@rnn"``).

Pure data and small shape builders: no engine imports, so ``ops_nn`` (the evaluator) and the tests can read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from torchwise.analysis import dims
from torchwise.analysis.optable import Signature
from torchwise.analysis.tensors import int_of, size_of
from torchwise.analysis.dims import Sym
from torchwise.analysis.values import ScalarValue, SeqValue, SymbolicValue

PARAM, BUFFER, COUNT = "param", "buffer", "count"  # a tensor's role: trained, a float buffer, an int64 counter
MAYBE = "maybe"  # made or not, by a setting not known
_INPUT = Signature.parse("forward(Tensor input)")


class Settings:
    """Typed reads of a layer's bound constructor arguments; every read is None when not certain."""

    def __init__(self, bound: dict):
        self.bound = bound

    def int(self, name: str):
        """An int-only setting (``in_features``): a value known by its name counts as that size."""
        return int_of(self.bound.get(name))

    def sizes(self, name: str, rank: int) -> Optional[tuple]:
        """An int or a sequence of ``rank`` ints (``kernel_size=3`` or ``(3, 5)``)."""
        return sizes_of(self.bound.get(name), rank)

    def sizes_not_known(self, name: str, rank: int) -> Optional[tuple]:
        """A setting given by a name whose value is not known (``kernel_size=kernel_size``: an int or a tuple):
        where the layer works at all it is ``rank`` ints, each a size of its own (fixed when the layer is made)."""
        value = self.bound.get(name)
        if isinstance(value, SymbolicValue) or isinstance(value, ScalarValue) and value.kind == "int" \
                and value.value is None:
            return tuple(Sym.fresh("k") for _ in range(rank))
        return None

    def shape(self, name: str) -> Optional[tuple]:
        """``normalized_shape``: an int or a sequence of ints, of any length."""
        return shape_of(self.bound.get(name))

    def flag(self, name: str) -> Optional[bool]:
        value = self.bound.get(name)
        return value.value if isinstance(value, ScalarValue) and value.kind == "bool" else None

    def text(self, name: str) -> Optional[str]:
        value = self.bound.get(name)
        return value.value if isinstance(value, ScalarValue) and value.kind == "str" else None

    def number(self, name: str):
        value = self.bound.get(name)
        if isinstance(value, ScalarValue) and value.kind in ("int", "float") and isinstance(value.value, (int, float)):
            return value.value
        return None

    def is_none(self, name: str) -> bool:
        value = self.bound.get(name)
        return isinstance(value, ScalarValue) and value.kind == "none"


def sizes_of(value, rank: int) -> Optional[tuple]:
    """``3`` or ``(3, 5)`` as ``rank`` dims; a one-item sequence stands for all of them (PyTorch expands it)."""
    single = size_of(value)
    if single is not None:
        return (single,) * rank
    if isinstance(value, SeqValue) and value.items is not None and len(value.items) in (1, rank):
        items = tuple(int_of(i) for i in value.items)
        if any(i is None for i in items):
            return None
        return items * rank if len(items) == 1 else items
    return None


def shape_of(value) -> Optional[tuple]:
    """A size of any length: ``5``, ``(4, 5)``, ``x.shape[-2:]``."""
    single = size_of(value)
    if single is not None:
        return (single,)
    if isinstance(value, SeqValue) and value.items is not None:
        items = tuple(int_of(i) for i in value.items)
        return items if all(i is not None for i in items) else None
    return None


@dataclass(frozen=True)
class Layer:
    init: Signature  # None: the constructor takes any arguments and ignores them (Identity, Tanh)
    forward: str  # the functional call of its forward, or "@name" of a hand-written forward in ops_nn
    call: Signature = _INPUT  # the forward's own parameters
    tensors: Optional[Callable] = None  # Settings -> [(name, shape, role)], None when a shape is not known
    names: tuple = ()  # the tensors it may have: an absent one (bias=False) reads as None in `forward`
    ranks: Optional[tuple] = None  # the input ranks its forward accepts (its own check, before the op's)
    training: bool = False  # its forward depends on the module's training mode (not known statically)
    eval_forward: Optional[str] = None  # the forward in eval mode, when it differs (dropout: the input itself)
    inplace: bool = False  # an `inplace=True` setting writes the result into the input
    valid: Optional[Callable] = None  # Settings -> False when the constructor certainly raises

    @property
    def buffers(self) -> tuple:
        return tuple(n for n in self.names if n in ("running_mean", "running_var", "num_batches_tracked"))


# -- tensor shapes -------------------------------------------------------------------------------------------
def _optional(present: Optional[bool], *tensors) -> list:
    """Tensors made only when a flag is set (``bias=True``); with the flag unknown (``bias=config.bias``) they may
    be there or not (MAYBE): not stated, and the forward reads them as unknown."""
    if present is False:
        return []
    return [(name, shape, role if present else MAYBE) for name, shape, role in tensors]


def _linear(s: Settings):
    n_in, n_out = s.int("in_features"), s.int("out_features")
    if n_in is None or n_out is None:
        return None
    return [("weight", (n_out, n_in), PARAM)] + _optional(s.flag("bias"), ("bias", (n_out,), PARAM))


def _bilinear(s: Settings):
    in1, in2, n_out = s.int("in1_features"), s.int("in2_features"), s.int("out_features")
    if None in (in1, in2, n_out):
        return None
    return [("weight", (n_out, in1, in2), PARAM)] + _optional(s.flag("bias"), ("bias", (n_out,), PARAM))


def _conv(rank: int, transposed: bool):
    def tensors(s: Settings):
        c_in, c_out, groups = s.int("in_channels"), s.int("out_channels"), s.int("groups")
        kernel = s.sizes("kernel_size", rank) or s.sizes_not_known("kernel_size", rank)
        if None in (c_in, c_out, groups, kernel) or isinstance(groups, int) and groups <= 0:
            return None
        per_group = dims.floordiv(c_out if transposed else c_in, groups)  # `groups=dim` (depthwise): 1
        if per_group is None:
            return None
        weight = (c_in, per_group, *kernel) if transposed else (c_out, per_group, *kernel)
        return [("weight", weight, PARAM)] + _optional(s.flag("bias"), ("bias", (c_out,), PARAM))
    return tensors


def _conv_valid(rank: int, transposed: bool):
    def valid(s: Settings) -> bool:
        groups = s.int("groups")
        for name in ("in_channels", "out_channels"):
            size = s.int(name)
            if isinstance(size, int) and isinstance(groups, int) and groups > 0 and size % groups:
                return False  # "in_channels must be divisible by groups"
        if isinstance(groups, int) and groups <= 0:
            return False
        mode, padding = s.text("padding_mode"), s.text("padding")
        if mode is not None and mode not in (("zeros",) if transposed else ("zeros", "reflect", "replicate",
                                                                              "circular")):
            return False
        if padding is not None and (transposed or padding not in ("same", "valid")):
            return False
        stride = s.sizes("stride", rank)
        if padding == "same" and stride is not None and any(isinstance(v, int) and v != 1 for v in stride):
            return False  # "padding='same' is not supported for strided convolutions"
        return True
    return valid


def _embedding(s: Settings):
    n, d = s.int("num_embeddings"), s.int("embedding_dim")
    if n is None or d is None or not s.is_none("_weight"):
        return None  # (a given `_weight` is taken as it is: not followed)
    return [("weight", (n, d), PARAM)]


def _embedding_valid(s: Settings) -> bool:
    n, pad = s.int("num_embeddings"), s.int("padding_idx")
    return not (isinstance(n, int) and isinstance(pad, int) and not -n <= pad < n)  # an AssertionError


def _normalized(s: Settings):
    # A size known only by name (`nn.LayerNorm(dim)`: an int or a list) leaves the tensors' shapes unknown; their
    # dtype and device are still known, and the forward keeps the input's shape either way.
    shape = s.shape("normalized_shape")
    bias = s.flag("bias") if "bias" in s.bound else False
    return _optional(s.flag("elementwise_affine"), ("weight", shape, PARAM),
                     *_optional(bias, ("bias", shape, PARAM)))


def _group_norm(s: Settings):
    channels = s.int("num_channels")
    if channels is None:
        return None
    return _optional(s.flag("affine"), ("weight", (channels,), PARAM),
                     *_optional(s.flag("bias"), ("bias", (channels,), PARAM)))


def _group_norm_valid(s: Settings) -> bool:
    groups, channels = s.int("num_groups"), s.int("num_channels")
    return not (isinstance(groups, int) and isinstance(channels, int) and (groups <= 0 or channels % groups))


def _batch_norm(s: Settings):
    n = s.int("num_features")
    if n is None:
        return None
    affine = _optional(s.flag("affine"), ("weight", (n,), PARAM), *_optional(s.flag("bias"), ("bias", (n,), PARAM)))
    stats = _optional(s.flag("track_running_stats"), ("running_mean", (n,), BUFFER), ("running_var", (n,), BUFFER),
                      ("num_batches_tracked", (), COUNT))
    return affine + stats


def _prelu(s: Settings):
    n = s.int("num_parameters")
    return None if n is None else [("weight", (n,), PARAM)]


def _attention(s: Settings):
    embed, heads = s.int("embed_dim"), s.int("num_heads")
    kdim = embed if s.is_none("kdim") else s.int("kdim")
    vdim = embed if s.is_none("vdim") else s.int("vdim")
    if None in (embed, heads, kdim, vdim):
        return None
    same = dims.dim_eq(kdim, embed) and dims.dim_eq(vdim, embed)
    if same is None:
        return None
    made = [("in_proj_weight", (3 * embed, embed), PARAM)] if same else [
        ("q_proj_weight", (embed, embed), PARAM), ("k_proj_weight", (embed, kdim), PARAM),
        ("v_proj_weight", (embed, vdim), PARAM)]
    return made + _optional(s.flag("bias"), ("in_proj_bias", (3 * embed,), PARAM)) + _optional(
        s.flag("add_bias_kv"), ("bias_k", (1, 1, embed), PARAM), ("bias_v", (1, 1, embed), PARAM))


def _attention_valid(s: Settings) -> bool:
    embed, heads = s.int("embed_dim"), s.int("num_heads")
    if isinstance(embed, int) and isinstance(heads, int) and (embed <= 0 or heads <= 0 or embed % heads):
        return False
    return True


GATES = {"RNN": 1, "LSTM": 4, "GRU": 3, "RNNCell": 1, "LSTMCell": 4, "GRUCell": 3}


def _recurrent(kind: str):
    def tensors(s: Settings):
        n_in, hidden, layers = s.int("input_size"), s.int("hidden_size"), s.int("num_layers")
        bidirectional, proj = s.flag("bidirectional"), s.int("proj_size")
        if None in (n_in, hidden, bidirectional) or not isinstance(layers, int) or not isinstance(proj, int):
            return None
        gate, out = GATES[kind] * hidden, proj if proj > 0 else hidden
        made = []
        for layer in range(layers):
            for suffix in ("", "_reverse") if bidirectional else ("",):
                layer_in = n_in if layer == 0 else out * (2 if bidirectional else 1)
                made += [(f"weight_ih_l{layer}{suffix}", (gate, layer_in), PARAM),
                         (f"weight_hh_l{layer}{suffix}", (gate, out), PARAM)]
                made += _optional(s.flag("bias"), (f"bias_ih_l{layer}{suffix}", (gate,), PARAM),
                                  (f"bias_hh_l{layer}{suffix}", (gate,), PARAM))
                if proj > 0:
                    made.append((f"weight_hr_l{layer}{suffix}", (proj, hidden), PARAM))
        return made
    return tensors


def _recurrent_valid(kind: str):
    def valid(s: Settings) -> bool:
        n_in, hidden, layers, proj = s.int("input_size"), s.int("hidden_size"), s.int("num_layers"), s.int("proj_size")
        if any(isinstance(v, int) and v <= 0 for v in (n_in, hidden, layers)):
            return False
        if isinstance(proj, int) and (proj < 0 or (proj > 0 and kind != "LSTM")):
            return False  # proj_size is LSTM's alone
        if isinstance(proj, int) and isinstance(hidden, int) and 0 < hidden <= proj:
            return False  # "proj_size has to be smaller than hidden_size"
        p = s.number("dropout")
        if p is not None and not 0 <= p <= 1:
            return False
        return kind != "RNN" or s.text("nonlinearity") in (None, "tanh", "relu")
    return valid


def _cell(kind: str):
    def tensors(s: Settings):
        n_in, hidden = s.int("input_size"), s.int("hidden_size")
        if None in (n_in, hidden):
            return None
        gate = GATES[kind] * hidden
        made = [("weight_ih", (gate, n_in), PARAM), ("weight_hh", (gate, hidden), PARAM)]
        return made + _optional(s.flag("bias"), ("bias_ih", (gate,), PARAM), ("bias_hh", (gate,), PARAM))
    return tensors


def _probability(s: Settings) -> bool:
    p = s.number("p")
    return p is None or 0 <= p <= 1  # "dropout probability has to be between 0 and 1"


def _hardtanh_valid(s: Settings) -> bool:
    low, high = s.number("min_val"), s.number("max_val")
    return low is None or high is None or not s.is_none("min_value") or not s.is_none("max_value") or high > low


# -- the table -----------------------------------------------------------------------------------------------
LAYERS: dict = {}
_FACTORY = "any device=None, any dtype=None"


def _layer(kind: str, init: Optional[str], forward: str, **options) -> None:
    LAYERS[kind] = Layer(None if init is None else Signature.parse(f"{kind}({init})"), forward, **options)


def _forward(text: str) -> Signature:
    return Signature.parse(f"forward({text})")


# Linear layers and embeddings
_layer("Identity", None, "input")
_layer("Linear", f"int in_features, int out_features, bool bias=True, {_FACTORY}", "linear(input, weight, bias)",
       tensors=_linear, names=("weight", "bias"))
_layer("Bilinear", f"int in1_features, int in2_features, int out_features, bool bias=True, {_FACTORY}",
       "bilinear(input1, input2, weight, bias)", call=_forward("Tensor input1, Tensor input2"),
       tensors=_bilinear, names=("weight", "bias"))
_layer("Flatten", "int start_dim=1, int end_dim=-1", "input.flatten(start_dim, end_dim)")
_layer("Unflatten", "int dim, int[] unflattened_size", "_unflatten(input, dim, unflattened_size)")
_layer("Embedding", "int num_embeddings, int embedding_dim, int? padding_idx=None, float? max_norm=None, "
       "float norm_type=2.0, bool scale_grad_by_freq=False, bool sparse=False, any _weight=None, "
       f"bool _freeze=False, {_FACTORY}",
       "embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)",
       tensors=_embedding, names=("weight",), valid=_embedding_valid)
_layer("EmbeddingBag", "int num_embeddings, int embedding_dim, float? max_norm=None, float norm_type=2.0, "
       "bool scale_grad_by_freq=False, str mode='mean', bool sparse=False, any _weight=None, "
       f"bool include_last_offset=False, int? padding_idx=None, {_FACTORY}",
       "embedding_bag(input, weight, offsets, max_norm, norm_type, scale_grad_by_freq, mode, sparse, "
       "per_sample_weights, include_last_offset, padding_idx)",
       call=_forward("Tensor input, Tensor? offsets=None, Tensor? per_sample_weights=None"),
       tensors=_embedding, names=("weight",), valid=_embedding_valid)

# Convolutions: a padding_mode other than zeros pads first (F.pad), then convolves without padding
for _rank in (1, 2, 3):
    _layer(f"Conv{_rank}d", "int in_channels, int out_channels, int[] kernel_size, int[] stride=1, "
           f"int[]|str padding=0, int[] dilation=1, int groups=1, bool bias=True, str padding_mode='zeros', "
           f"{_FACTORY}",
           f"conv{_rank}d(_mode_padded(input, padding, padding_mode, kernel_size, dilation, {_rank}), weight, bias, "
           "stride, _conv_padding(padding, padding_mode), dilation, groups)",
           tensors=_conv(_rank, False), names=("weight", "bias"), valid=_conv_valid(_rank, False))
    _layer(f"ConvTranspose{_rank}d", "int in_channels, int out_channels, int[] kernel_size, int[] stride=1, "
           "int[] padding=0, int[] output_padding=0, int groups=1, bool bias=True, int[] dilation=1, "
           f"str padding_mode='zeros', {_FACTORY}",
           f"conv_transpose{_rank}d(_no_output_size(input, output_size), weight, bias, stride, padding, "
           "output_padding, groups, dilation)",
           call=_forward("Tensor input, any output_size=None"),
           tensors=_conv(_rank, True), names=("weight", "bias"), valid=_conv_valid(_rank, True))

# Pooling (MaxPool reads return_indices before ceil_mode, F.max_pool the other way round)
for _rank in (1, 2, 3):
    _layer(f"MaxPool{_rank}d", "int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, "
           "bool return_indices=False, bool ceil_mode=False",
           f"max_pool{_rank}d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode, "
           "return_indices=return_indices)")
    _layer(f"AvgPool{_rank}d", "int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, "
           "bool count_include_pad=True" + (", int? divisor_override=None" if _rank > 1 else ""),
           f"avg_pool{_rank}d(input, kernel_size, stride, padding, ceil_mode, count_include_pad"
           + (", divisor_override)" if _rank > 1 else ")"))
    _layer(f"AdaptiveAvgPool{_rank}d", "int[]? output_size", f"adaptive_avg_pool{_rank}d(input, output_size)")
    _layer(f"AdaptiveMaxPool{_rank}d", "int[]? output_size, bool return_indices=False",
           f"adaptive_max_pool{_rank}d(input, output_size, return_indices)")

# Normalization
_layer("LayerNorm", f"int[] normalized_shape, float eps=1e-05, bool elementwise_affine=True, bool bias=True, "
       f"{_FACTORY}", "layer_norm(input, normalized_shape, weight, bias, eps)",
       tensors=_normalized, names=("weight", "bias"))
_layer("RMSNorm", f"int[] normalized_shape, float? eps=None, bool elementwise_affine=True, {_FACTORY}",
       "rms_norm(input, normalized_shape, weight, eps)", tensors=_normalized, names=("weight",))
_layer("GroupNorm", f"int num_groups, int num_channels, float eps=1e-05, bool affine=True, {_FACTORY}, *, "
       "bool bias=True", "group_norm(input, num_groups, weight, bias, eps)",
       tensors=_group_norm, names=("weight", "bias"), valid=_group_norm_valid)
_NORM_TENSORS = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")
for _rank, _ranks in ((1, (2, 3)), (2, (4,)), (3, (5,))):
    # in eval mode batch norm uses its running statistics, when it tracks them
    _layer(f"BatchNorm{_rank}d", f"int num_features, float eps=1e-05, float? momentum=0.1, bool affine=True, "
           f"bool track_running_stats=True, {_FACTORY}, *, bool bias=True",
           "batch_norm(input, running_mean, running_var, weight, bias, training or running_mean is None, 0.1, eps)",
           tensors=_batch_norm, names=_NORM_TENSORS, ranks=_ranks, training=True)
    _layer(f"InstanceNorm{_rank}d", f"int num_features, float eps=1e-05, float momentum=0.1, bool affine=False, "
           f"bool track_running_stats=False, {_FACTORY}, *, bool bias=True", "@instance_norm",
           tensors=_batch_norm, names=_NORM_TENSORS, ranks=(_rank + 1, _rank + 2), training=True)
_layer("LocalResponseNorm", "int size, float alpha=0.0001, float beta=0.75, float k=1.0",
       "local_response_norm(input, size, alpha, beta, k)")

# Activations: the functional op with the layer's settings
for _kind, _init, _call in (
        ("ReLU", "bool inplace=False", "relu(input)"),
        ("ReLU6", "bool inplace=False", "hardtanh(input, 0.0, 6.0)"),
        ("SiLU", "bool inplace=False", "silu(input)"),
        ("Mish", "bool inplace=False", "mish(input)"),
        ("Hardswish", "bool inplace=False", "hardswish(input)"),
        ("Hardsigmoid", "bool inplace=False", "hardsigmoid(input)"),
        ("SELU", "bool inplace=False", "selu(input)"),
        ("LeakyReLU", "float negative_slope=0.01, bool inplace=False", "leaky_relu(input, negative_slope)"),
        ("ELU", "float alpha=1.0, bool inplace=False", "elu(input, alpha)"),
        ("CELU", "float alpha=1.0, bool inplace=False", "celu(input, alpha)"),
        ("Threshold", "float threshold, float value, bool inplace=False", "threshold(input, threshold, value)"),
):
    _layer(_kind, _init, _call, inplace=True)
_layer("Hardtanh", "float min_val=-1.0, float max_val=1.0, bool inplace=False, float? min_value=None, "
       "float? max_value=None", "hardtanh(input, min_val, max_val)", inplace=True, valid=_hardtanh_valid)
_layer("RReLU", "float lower=0.125, float upper=0.3333333333333333, bool inplace=False",
       "rrelu(input, lower, upper, training)", inplace=True, training=True)
for _kind, _op in (("Tanh", "tanh"), ("Sigmoid", "sigmoid"), ("LogSigmoid", "logsigmoid"),
                   ("Softsign", "softsign"), ("Tanhshrink", "tanhshrink")):
    _layer(_kind, None, f"{_op}(input)")
_layer("GELU", "str approximate='none'", "gelu(input, approximate=_one_of(approximate, 'none', 'tanh'))")
_layer("Softplus", "float beta=1.0, float threshold=20.0", "softplus(input, beta, threshold)")
_layer("Hardshrink", "float lambd=0.5", "hardshrink(input, lambd)")
_layer("Softshrink", "float lambd=0.5", "softshrink(input, lambd)")
_layer("GLU", "int dim=-1", "glu(input, dim)")
_layer("PReLU", f"int num_parameters=1, float init=0.25, {_FACTORY}", "prelu(input, weight)",
       tensors=_prelu, names=("weight",))
for _kind, _op in (("Softmax", "softmax"), ("LogSoftmax", "log_softmax"), ("Softmin", "softmin")):
    _layer(_kind, "int? dim=None", f"{_op}(input, _implicit_dim(dim, input))")
_layer("Softmax2d", None, "softmax(input, -3)", ranks=(3, 4))

# Dropout: in eval mode the input itself (dropout1d still checks the rank)
_layer("Dropout", "float p=0.5, bool inplace=False", "dropout(input, p, training)", training=True,
       eval_forward="input", inplace=True, valid=_probability)
for _kind, _op in (("Dropout1d", "dropout1d"), ("Dropout2d", "dropout2d"), ("Dropout3d", "dropout3d"),
                   ("AlphaDropout", "alpha_dropout"), ("FeatureAlphaDropout", "feature_alpha_dropout")):
    _layer(_kind, "float p=0.5, bool inplace=False", f"{_op}(input, p, training)", training=True, inplace=True,
           valid=_probability)

# Padding, resizing, rearranging
for _rank in (1, 2, 3):
    _layer(f"ZeroPad{_rank}d", "int[] padding", f"pad(input, _pad_sides(padding, {_rank}), 'constant', 0.0)")
    _layer(f"ConstantPad{_rank}d", "int[] padding, float value",
           f"pad(input, _pad_sides(padding, {_rank}), 'constant', value)")
    for _kind, _mode in (("Reflection", "reflect"), ("Replication", "replicate"), ("Circular", "circular")):
        _layer(f"{_kind}Pad{_rank}d", "int[] padding", f"pad(input, _pad_sides(padding, {_rank}), '{_mode}')",
               ranks=(_rank + 1, _rank + 2) if _kind == "Circular" else None)
_layer("Upsample", "int[]? size=None, float[]? scale_factor=None, str mode='nearest', bool? align_corners=None, "
       "bool? recompute_scale_factor=None",
       "interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor=recompute_scale_factor)")
_layer("UpsamplingNearest2d", "int[]? size=None, float[]? scale_factor=None",
       "interpolate(input, size, scale_factor, 'nearest')")
_layer("UpsamplingBilinear2d", "int[]? size=None, float[]? scale_factor=None",
       "interpolate(input, size, scale_factor, 'bilinear', True)")
_layer("PixelShuffle", "int upscale_factor", "pixel_shuffle(input, upscale_factor)")
_layer("PixelUnshuffle", "int downscale_factor", "pixel_unshuffle(input, downscale_factor)")
_layer("Unfold", "int[] kernel_size, int[] dilation=1, int[] padding=0, int[] stride=1",
       "unfold(input, kernel_size, dilation, padding, stride)")
_layer("Fold", "int[] output_size, int[] kernel_size, int[] dilation=1, int[] padding=0, int[] stride=1",
       "fold(input, output_size, kernel_size, dilation, padding, stride)")
_layer("CosineSimilarity", "int dim=1, float eps=1e-08", "cosine_similarity(x1, x2, dim, eps)",
       call=_forward("Tensor x1, Tensor x2"))
_layer("PairwiseDistance", "float p=2.0, float eps=1e-06, bool keepdim=False",
       "pairwise_distance(x1, x2, p, eps, keepdim)", call=_forward("Tensor x1, Tensor x2"))

# Attention and recurrent layers
_layer("MultiheadAttention", "int embed_dim, int num_heads, float dropout=0.0, bool bias=True, "
       f"bool add_bias_kv=False, bool add_zero_attn=False, int? kdim=None, int? vdim=None, bool batch_first=False, "
       f"{_FACTORY}", "@attention",
       call=_forward("Tensor query, Tensor key, Tensor value, Tensor? key_padding_mask=None, bool need_weights=True, "
                     "Tensor? attn_mask=None, bool average_attn_weights=True, bool is_causal=False"),
       tensors=_attention, valid=_attention_valid)
_RECURRENT = ("int input_size, int hidden_size, int num_layers=1, bool bias=True, bool batch_first=False, "
              f"float dropout=0.0, bool bidirectional=False, int proj_size=0, {_FACTORY}")
for _kind in ("RNN", "LSTM", "GRU"):
    # nn.RNN reads a fourth positional argument as its nonlinearity
    _init = _RECURRENT.replace("int num_layers=1,", "int num_layers=1, str nonlinearity='tanh',") \
        if _kind == "RNN" else _RECURRENT
    _layer(_kind, _init, "@rnn", call=_forward("Tensor input, any hx=None"), tensors=_recurrent(_kind),
           valid=_recurrent_valid(_kind))
for _kind, _extra in (("RNNCell", ", str nonlinearity='tanh'"), ("LSTMCell", ""), ("GRUCell", "")):
    _layer(_kind, f"int input_size, int hidden_size, bool bias=True{_extra}, {_FACTORY}", "@cell",
           call=_forward("Tensor input, any hx=None"), tensors=_cell(_kind))

# Losses: the functional loss with the module's reduction (size_average / reduce are the legacy spelling of it)
_LEGACY = "any size_average=None, any reduce=None"
_REDUCTION = "reduction=_reduction(size_average, reduce, reduction)"
_TARGET = _forward("Tensor input, Tensor target")
for _kind, _init, _call in (
        ("CrossEntropyLoss", "Tensor? weight=None, any size_average=None, int ignore_index=-100, any reduce=None, "
                             "str reduction='mean', float label_smoothing=0.0",
         f"cross_entropy(input, target, weight, ignore_index=ignore_index, {_REDUCTION}, "
         "label_smoothing=label_smoothing)"),
        ("NLLLoss", "Tensor? weight=None, any size_average=None, int ignore_index=-100, any reduce=None, "
                    "str reduction='mean'",
         f"nll_loss(input, target, weight, ignore_index=ignore_index, {_REDUCTION})"),
        ("MSELoss", f"{_LEGACY}, str reduction='mean'", f"mse_loss(input, target, {_REDUCTION})"),
        ("L1Loss", f"{_LEGACY}, str reduction='mean'", f"l1_loss(input, target, {_REDUCTION})"),
        ("BCELoss", f"Tensor? weight=None, {_LEGACY}, str reduction='mean'",
         f"binary_cross_entropy(input, target, weight, {_REDUCTION})"),
        ("BCEWithLogitsLoss", f"Tensor? weight=None, {_LEGACY}, str reduction='mean', Tensor? pos_weight=None",
         f"binary_cross_entropy_with_logits(input, target, weight, {_REDUCTION}, pos_weight=pos_weight)"),
        ("SmoothL1Loss", f"{_LEGACY}, str reduction='mean', float beta=1.0",
         f"smooth_l1_loss(input, target, {_REDUCTION}, beta=beta)"),
        ("HuberLoss", "str reduction='mean', float delta=1.0",
         "huber_loss(input, target, reduction=reduction, delta=delta)"),
        ("KLDivLoss", f"{_LEGACY}, str reduction='mean', bool log_target=False",
         f"kl_div(input, target, {_REDUCTION}, log_target=log_target)"),
):
    _layer(_kind, _init, _call, call=_TARGET)
_layer("CosineEmbeddingLoss", f"float margin=0.0, {_LEGACY}, str reduction='mean'",
       f"cosine_embedding_loss(input1, input2, target, margin, {_REDUCTION})",
       call=_forward("Tensor input1, Tensor input2, Tensor target"))

CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})
# Containers iterated (and indexed) in order: a ParameterList holds tensors (as Parameters), not modules.
SEQUENCES = frozenset({"Sequential", "ModuleList", "ParameterList"})

__all__ = ["BUFFER", "CONTAINERS", "COUNT", "GATES", "LAYERS", "Layer", "MAYBE", "PARAM", "SEQUENCES", "Settings",
           "shape_of", "sizes_of"]
