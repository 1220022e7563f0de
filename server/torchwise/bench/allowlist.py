"""What the benchmark may run of the user's setup code: an allowlist, never a denylist.

A name is allowed only when it resolves (through the file's imports) to one of these qualified
names, or is a method or attribute of a value from the list below. Everything here computes on
its arguments and nothing else: no files, processes, network, hooks or callbacks, and no global
setting that outlives the run. ``torch.os.system`` or ``numpy.ndarray.tofile`` are not refused
because they look dangerous: they are refused because nobody put them here.

The torch names come from the op table (``analysis/optable.py``: every op the facts engine knows,
each checked against real torch), plus the factories, the layers the facts engine knows (their
constructors only make parameters) and a few pure functions setup code uses.
"""

from __future__ import annotations

from torchwise.analysis import optable

# Modules an ``import`` may bind (``import torch.nn.functional as F``); as values they are refused.
MODULES = frozenset({
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.linalg", "torch.fft", "torch.special",
    "numpy", "numpy.random", "numpy.linalg", "numpy.fft", "math",
})

BUILTINS = frozenset({
    "abs", "all", "any", "bool", "complex", "dict", "divmod", "enumerate", "float", "frozenset", "int", "len",
    "list", "max", "min", "pow", "range", "reversed", "round", "set", "slice", "sorted", "sum", "tuple", "zip",
})

_TORCH_FACTORIES = """
    tensor as_tensor asarray from_numpy scalar_tensor zeros ones empty full zeros_like ones_like empty_like full_like
    empty_strided rand randn randint rand_like randn_like randint_like randperm arange linspace logspace eye
    complex polar bernoulli multinomial normal poisson manual_seed Generator device Size finfo iinfo
"""
_TORCH_FUNCTIONS = """
    get_default_dtype is_tensor is_floating_point is_complex numel result_type promote_types can_cast
    broadcast_shapes broadcast_tensors broadcast_to meshgrid cartesian_prod tril_indices triu_indices bucketize
    searchsorted diag diag_embed diagflat gather index_select masked_select nonzero argwhere unique
    unique_consecutive cdist addmm addmv addr addbmm baddbmm addcmul addcdiv bincount histc histogram kron
    tensordot block_diag rot90 tile movedim moveaxis repeat_interleave narrow select take take_along_dim scatter
    scatter_add index_add index_copy index_fill masked_scatter real imag angle conj heaviside rsub trace det logdet
    inverse pinverse cross vdot inner cov corrcoef quantile nanquantile kthvalue msort hstack vstack dstack
    column_stack row_stack atleast_1d atleast_2d atleast_3d tensor_split hsplit vsplit dsplit trapezoid
    cumulative_trapezoid diff gcd lcm float_power logaddexp logaddexp2 ldexp nextafter frexp mvlgamma polygamma
    igamma igammac std_mean var_mean aminmax renorm dist chain_matmul ger bitwise_not bitwise_left_shift
    bitwise_right_shift fliplr flipud adjoint positive deg2rad rad2deg isin isclose allclose equal clip
    cuda.is_available cuda.device_count backends.mps.is_available
"""
_TORCH_CONSTANTS = """
    float32 float64 float16 bfloat16 float double half int8 int16 int32 int64 uint8 bool complex64 complex128
    cfloat cdouble long int short strided contiguous_format channels_last channels_last_3d preserve_format
    pi e inf nan
"""
_FUNCTIONAL = """
    one_hot pad linear bilinear conv1d conv2d conv3d conv_transpose1d conv_transpose2d embedding embedding_bag
    interpolate max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d
    adaptive_avg_pool2d adaptive_max_pool2d layer_norm group_norm batch_norm instance_norm rms_norm mse_loss l1_loss
    smooth_l1_loss huber_loss cross_entropy nll_loss binary_cross_entropy binary_cross_entropy_with_logits kl_div
    unfold fold grid_sample affine_grid scaled_dot_product_attention glu softmin threshold prelu hardshrink
    softshrink pixel_shuffle pixel_unshuffle tanh sigmoid relu
"""
_LINALG = """
    norm vector_norm matrix_norm inv pinv solve det slogdet qr svd svdvals eig eigh eigvals eigvalsh cholesky lstsq
    matrix_rank matrix_power cross vecdot multi_dot diagonal
"""
_INIT = """
    zeros_ ones_ constant_ normal_ uniform_ trunc_normal_ xavier_uniform_ xavier_normal_ kaiming_uniform_
    kaiming_normal_ orthogonal_ eye_ dirac_ calculate_gain
"""
_FFT = "fft ifft rfft irfft fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn fftfreq rfftfreq fftshift ifftshift"
_SPECIAL = "erf erfc erfinv expit logit xlogy gammaln digamma i0 softmax log_softmax logsumexp ndtr sinc entr"
_NUMPY_FUNCTIONS = """
    array asarray ascontiguousarray zeros ones empty full zeros_like ones_like empty_like full_like arange linspace
    logspace eye identity stack concatenate vstack hstack reshape transpose expand_dims squeeze where clip abs exp
    log log2 log10 sqrt sin cos tan tanh sum mean std var min max amin amax argmax argmin cumsum prod dot matmul
    outer einsum maximum minimum floor ceil round sign isnan isinf isfinite allclose broadcast_to tile repeat sort
    argsort unique nonzero float32 float64 float16 int8 int16 int32 int64 uint8 bool_ complex64 complex128 intp
    random.rand random.randn random.randint random.random random.normal random.uniform random.seed
    random.default_rng random.permutation random.choice random.standard_normal
    linalg.norm linalg.inv linalg.solve fft.fft fft.rfft
"""
_NUMPY_CONSTANTS = "pi e inf nan newaxis"
_MATH = """
    acos acosh asin asinh atan atan2 atanh cbrt ceil comb copysign cos cosh degrees dist erf erfc exp exp2 expm1 fabs
    factorial floor fmod frexp fsum gamma gcd hypot isclose isfinite isinf isnan isqrt lcm ldexp lgamma log log10
    log1p log2 modf nextafter perm pow prod radians remainder sin sinh sqrt tan tanh trunc ulp
"""
_MATH_CONSTANTS = "pi e inf nan tau"


def _names(prefix: str, names: str) -> set:
    return {f"{prefix}.{name}" for name in names.split()}


def _op_table(form: str) -> set:
    """Every name of one form in the op table, aliases included (``torch.clip``, ``torch.concat``)."""
    return set().union(*(optable.names_of(family, form) for family in optable.Family))


def _op_table_functions() -> set:
    return ({f"torch.{name}" for name in _op_table("function")}
            | {f"torch.nn.functional.{name}" for name in _op_table("functional")})


def _layers() -> set:
    """``torch.nn.Linear(8, 16)``, ``torch.nn.Sequential(...)``: the layers the facts engine knows; building one only
    makes its parameters (what a benchmarked loop like ``out[i] = model(x[i])`` calls)."""
    from torchwise.analysis.layers import CONTAINERS, LAYERS

    return {f"torch.nn.{kind}" for kind in set(LAYERS) | (CONTAINERS - {"ModuleDict"})}


FUNCTIONS = frozenset(
    _layers() | _op_table_functions() | _names("torch", _TORCH_FACTORIES) | _names("torch", _TORCH_FUNCTIONS)
    | _names("torch.nn.functional", _FUNCTIONAL) | _names("torch.nn.init", _INIT) | _names("torch.linalg", _LINALG)
    | _names("torch.fft", _FFT)
    | _names("torch.special", _SPECIAL) | _names("numpy", _NUMPY_FUNCTIONS) | _names("math", _MATH))
CONSTANTS = frozenset(
    _names("torch", _TORCH_CONSTANTS) | _names("numpy", _NUMPY_CONSTANTS) | _names("math", _MATH_CONSTANTS))

# Methods of the values setup code makes (tensors, ndarrays, lists, dicts, numpy generators), by name.
_METHOD_EXTRAS = """
    size dim numel item tolist numpy type type_as view_as reshape_as expand_as new_zeros new_ones new_empty new_full
    new_tensor fill_ zero_ normal_ uniform_ random_ bernoulli_ exponential_ copy_ masked_fill_ masked_select
    masked_scatter index_select index_add index_add_ index_copy_ index_fill_ index_put_ gather scatter scatter_
    scatter_add scatter_add_ nonzero argwhere requires_grad_ stride is_contiguous element_size nelement ndimension
    unfold narrow select squeeze_ unsqueeze_ t_ transpose_ resize_ addmm addcmul addcdiv baddbmm repeat_interleave
    tile movedim moveaxis rot90 unique bincount histc kthvalue msort diag diag_embed cpu cuda where
    astype copy fill ravel take nonzero dot
    append extend insert pop index count reverse sort clear remove keys values items get update setdefault
    normal uniform integers random standard_normal choice permutation manual_seed
"""
METHODS = frozenset(
    _op_table("method") | {f"{name}_" for name in _op_table("inplace")}
    | set(_METHOD_EXTRAS.split()))
# Attributes of those values read without a call (``x.shape[0]``, ``w.T``).
ATTRIBUTES = frozenset("""
    shape dtype device ndim T mT H mH real imag is_cuda requires_grad grad data layout itemsize nbytes strides
""".split())


def allowed_module(qualname: str) -> bool:
    return qualname in MODULES


def allowed_function(qualname: str) -> bool:
    return qualname in FUNCTIONS


def allowed_value(qualname: str) -> bool:
    """A qualified name that may be read as a value: a constant, or a function passed on (``key=math.fabs``)."""
    return qualname in CONSTANTS or qualname in FUNCTIONS


def allowed_import(qualname: str) -> bool:
    """``import numpy as np``, ``import torch.nn.functional as F``, ``from torch import float32``."""
    return allowed_module(qualname) or allowed_value(qualname)
