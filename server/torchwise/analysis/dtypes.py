"""PyTorch's dtype rules as plain data: names, categories, promotion, and what literals become.

Pure Python on purpose: an editor runs this, so it must never import torch or numpy.
``tests/test_dtypes_truth.py`` checks every table and rule here against the real thing.

Where torch itself raises (e.g. promoting ``uint16`` with ``int64``), the functions here raise
:class:`DTypeError` rather than guess.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable


class DTypeError(ValueError):
    """A combination of dtypes that torch rejects (it raises ``RuntimeError`` there)."""


class Category(enum.IntEnum):
    """The ordered kinds of dtype; a higher category always wins in promotion."""

    BOOL = 0
    INTEGRAL = 1
    FLOATING = 2
    COMPLEX = 3


class DType(enum.Enum):
    """A torch dtype, by its canonical short name."""

    bool = "bool"
    uint8 = "uint8"
    int8 = "int8"
    int16 = "int16"
    int32 = "int32"
    int64 = "int64"
    # The "barebones" unsigned types: storage only, promotable with themselves and floats.
    uint16 = "uint16"
    uint32 = "uint32"
    uint64 = "uint64"
    float16 = "float16"
    bfloat16 = "bfloat16"
    float32 = "float32"
    float64 = "float64"
    complex32 = "complex32"
    complex64 = "complex64"
    complex128 = "complex128"

    @property
    def short(self) -> str:
        return self.value

    @property
    def torch_name(self) -> str:
        return f"torch.{self.value}"

    def __repr__(self) -> str:
        return self.torch_name


_CATEGORY = {
    DType.bool: Category.BOOL,
    **{d: Category.INTEGRAL for d in (DType.uint8, DType.int8, DType.int16, DType.int32, DType.int64,
                                      DType.uint16, DType.uint32, DType.uint64)},
    **{d: Category.FLOATING for d in (DType.float16, DType.bfloat16, DType.float32, DType.float64)},
    **{d: Category.COMPLEX for d in (DType.complex32, DType.complex64, DType.complex128)},
}
_BITS = {
    DType.bool: 8, DType.uint8: 8, DType.int8: 8, DType.int16: 16, DType.int32: 32, DType.int64: 64,
    DType.uint16: 16, DType.uint32: 32, DType.uint64: 64,
    DType.float16: 16, DType.bfloat16: 16, DType.float32: 32, DType.float64: 64,
    DType.complex32: 32, DType.complex64: 64, DType.complex128: 128,
}
# torch has no promotion rules for these yet: with anything but themselves or a floating type,
# torch.promote_types raises "Promotion for uint16, uint32, uint64 types is not supported".
_BAREBONES_UNSIGNED = frozenset((DType.uint16, DType.uint32, DType.uint64))
# The complex dtype of the same precision (c10::toComplexType). bfloat16 has float32's range,
# so it goes to complex64: there is no complex bfloat16.
_COMPLEX_OF = {
    DType.float16: DType.complex32, DType.bfloat16: DType.complex64,
    DType.float32: DType.complex64, DType.float64: DType.complex128,
}
_REAL_PART = {DType.complex32: DType.float16, DType.complex64: DType.float32, DType.complex128: DType.float64}
# Pairs of one category where neither holds the other's values, so both go one size up:
# uint8 has no negatives and int8 no 128..255; float16 has precision bfloat16 lacks and vice versa for range.
_NEITHER_HOLDS_THE_OTHER = {
    frozenset((DType.uint8, DType.int8)): DType.int16,
    frozenset((DType.float16, DType.bfloat16)): DType.float32,
}


def category(d: DType) -> Category:
    return _CATEGORY[d]


def is_floating(d: DType) -> bool:
    """Like ``dtype.is_floating_point``: real floating types only, not complex."""
    return _CATEGORY[d] is Category.FLOATING


def is_complex(d: DType) -> bool:
    return _CATEGORY[d] is Category.COMPLEX


def is_integral(d: DType, include_bool: bool = False) -> bool:
    """Like ``torch.is_integral`` / c10's ``isIntegralType(t, includeBool)``."""
    return _CATEGORY[d] is Category.INTEGRAL or (include_bool and d is DType.bool)


def to_complex(d: DType) -> DType:
    """The complex dtype matching a floating (or complex) dtype's precision."""
    if is_complex(d):
        return d
    if d not in _COMPLEX_OF:
        raise ValueError(f"{d!r} has no complex counterpart")
    return _COMPLEX_OF[d]


# ---------------------------------------------------------------------------------------------
# Names


# Every `torch.<name>` that is one of the dtypes above, aliases included.
_TORCH_ALIASES = {
    **{d.short: d for d in DType},
    "float": DType.float32, "double": DType.float64, "half": DType.float16,
    "long": DType.int64, "int": DType.int32, "short": DType.int16,
    "cfloat": DType.complex64, "cdouble": DType.complex128, "chalf": DType.complex32,
}
# Tensor methods that convert: `x.float()`. Note `x.byte()` is uint8 and `x.char()` int8,
# yet there is no `torch.byte` or `torch.char`.
_CAST_METHODS = {
    "bool": DType.bool, "byte": DType.uint8, "char": DType.int8, "short": DType.int16,
    "int": DType.int32, "long": DType.int64, "half": DType.float16, "bfloat16": DType.bfloat16,
    "float": DType.float32, "double": DType.float64, "chalf": DType.complex32,
    "cfloat": DType.complex64, "cdouble": DType.complex128,
}
# `np.<name>` scalar types. Only names whose size is the same on every platform: `np.int_`,
# `np.intp`, `np.long` and friends follow the C `long`/pointer size (int32 on Windows with NumPy 1).
# Careful: `np.byte` is int8, while torch's `x.byte()` is uint8.
_NUMPY_ALIASES = {
    **{d.short: d for d in DType if d not in (DType.bfloat16, DType.complex32)},  # numpy has neither
    "bool_": DType.bool,
    "byte": DType.int8, "ubyte": DType.uint8, "short": DType.int16, "ushort": DType.uint16,
    "intc": DType.int32, "uintc": DType.uint32,
    "half": DType.float16, "single": DType.float32, "double": DType.float64,
    "csingle": DType.complex64, "cdouble": DType.complex128,
}
# `dtype="..."` strings as numpy reads them (torch takes no dtype strings). Note "float" is
# float64 and "complex" complex128 (Python's own float/complex), not torch's float32.
_NUMPY_DTYPE_STRINGS = {
    **{d.short: d for d in DType if d not in (DType.bfloat16, DType.complex32)},
    "float": DType.float64, "complex": DType.complex128,
    "int": DType.int64,  # NumPy 2 on 64-bit platforms (NumPy 1 on Windows: int32)
    "half": DType.float16, "single": DType.float32, "double": DType.float64,
    "?": DType.bool, "b1": DType.bool,
    "u1": DType.uint8, "u2": DType.uint16, "u4": DType.uint32, "u8": DType.uint64,
    "i1": DType.int8, "i2": DType.int16, "i4": DType.int32, "i8": DType.int64,
    "f2": DType.float16, "f4": DType.float32, "f8": DType.float64,
    "c8": DType.complex64, "c16": DType.complex128,
}


def parse_torch_dtype(attr: str) -> DType | None:
    """`torch.<attr>` as a dtype: "float32", "float", "double", "long", "cfloat", ...; None if not one."""
    return _TORCH_ALIASES.get(attr)


def parse_cast_method(method: str) -> DType | None:
    """The dtype of `x.<method>()` for the converting tensor methods: "float", "long", "byte", ..."""
    return _CAST_METHODS.get(method)


def parse_numpy_dtype(attr: str) -> DType | None:
    """`np.<attr>` as a dtype: "float32", "bool_", "double", ...; None if not one (or platform-sized)."""
    return _NUMPY_ALIASES.get(attr)


def parse_dtype_string(text: str) -> DType | None:
    """A numpy dtype string, as in `dtype="float32"` or `astype("f4")`; None if not known."""
    return _NUMPY_DTYPE_STRINGS.get(text)


# ---------------------------------------------------------------------------------------------
# Promotion


def promote_types(a: DType, b: DType) -> DType:
    """Exactly ``torch.promote_types(a, b)``: the dtype torch computes ``a`` and ``b`` tensors in.

    Raises DTypeError where torch raises.
    """
    if a is b:
        return a
    if a in _BAREBONES_UNSIGNED or b in _BAREBONES_UNSIGNED:
        other = b if a in _BAREBONES_UNSIGNED else a
        if is_floating(other):
            return other
        raise DTypeError(f"torch cannot promote {a!r} with {b!r} (uint16/32/64 promote only with floats)")
    if category(a) != category(b):
        lower, higher = sorted((a, b), key=category)
        if is_complex(higher) and is_floating(lower):
            # The complex result must also hold the float's precision: float64 + complex64 -> complex128.
            return _COMPLEX_OF[promote_types(lower, _REAL_PART[higher])]
        return higher  # bool < any int < any float: int64 + float16 -> float16
    if frozenset((a, b)) in _NEITHER_HOLDS_THE_OTHER:
        return _NEITHER_HOLDS_THE_OTHER[frozenset((a, b))]
    return max(a, b, key=_BITS.get)  # same category: the wider (uint8 + int16 -> int16)


PYTHON_SCALAR_TYPES = ("bool", "int", "float", "complex")
_DEFAULT_FLOATS = frozenset(_COMPLEX_OF)  # torch.set_default_dtype takes only real floating types


class OperandKind(enum.Enum):
    """The three priority groups of torch's type promotion, highest first."""

    TENSOR = "tensor"      # a tensor with at least one dimension
    ZERO_DIM = "zero_dim"  # a 0-dim tensor: torch.tensor(2.0), x.sum()
    SCALAR = "scalar"      # a Python bool, int, float or complex


@dataclass(frozen=True)
class Operand:
    """One input of an element-wise op: a tensor's dtype, or a Python scalar's type name."""

    kind: OperandKind
    dtype: DType | None = None       # tensors
    python_type: str | None = None   # scalars: "bool" | "int" | "float" | "complex"

    def __post_init__(self):
        if (self.kind is OperandKind.SCALAR) != (self.python_type is not None):
            raise ValueError("a scalar operand has a python_type, a tensor operand has not")
        if self.kind is OperandKind.SCALAR and self.python_type not in PYTHON_SCALAR_TYPES:
            raise ValueError(f"not a Python scalar type: {self.python_type!r}")
        if (self.kind is not OperandKind.SCALAR) != isinstance(self.dtype, DType):
            raise ValueError("a tensor operand has a dtype, a scalar operand has not")

    @classmethod
    def tensor(cls, dtype: DType) -> Operand:
        return cls(OperandKind.TENSOR, dtype=dtype)

    @classmethod
    def zero_dim(cls, dtype: DType) -> Operand:
        return cls(OperandKind.ZERO_DIM, dtype=dtype)

    @classmethod
    def scalar(cls, python_type: str) -> Operand:
        return cls(OperandKind.SCALAR, python_type=python_type)

    def promotes_as(self, default_float: DType = DType.float32) -> DType:
        """The dtype this operand enters promotion with."""
        if self.dtype is not None:
            return self.dtype
        return python_scalar_dtype(self.python_type, default_float)


def default_complex(default_float: DType = DType.float32) -> DType:
    """torch's default complex dtype for a default float (complex64 under float32, and also under bfloat16)."""
    _check_default_float(default_float)
    return _COMPLEX_OF[default_float]


def python_scalar_dtype(python_type: str, default_float: DType = DType.float32) -> DType:
    """What a Python scalar counts as in promotion: int is int64, float the default dtype, complex its complex."""
    _check_default_float(default_float)
    return {
        "bool": DType.bool,
        "int": DType.int64,
        "float": default_float,
        "complex": _COMPLEX_OF[default_float],
    }[python_type]


def result_type(operands: Iterable[Operand], default_float: DType = DType.float32) -> DType:
    """Exactly ``torch.result_type``: the dtype of ``a + b`` (or of an n-ary element-wise op).

    torch promotes within each priority group (dim>0 tensors, 0-dim tensors, Python scalars),
    then lets a lower group change the result only if it is of a higher category: so
    ``int8_tensor + 1000`` stays int8 and ``float16_tensor + float64_zero_dim`` stays float16,
    but ``int_tensor + 1.5`` is the default float.
    """
    group: dict[OperandKind, DType | None] = dict.fromkeys(OperandKind)
    count = 0
    for operand in operands:
        count += 1
        d = operand.promotes_as(default_float)
        group[operand.kind] = d if group[operand.kind] is None else promote_types(group[operand.kind], d)
    if not count:
        raise ValueError("result_type needs at least one operand")
    # The nesting is torch's own (aten TypeProperties.cpp, result_type(ResultTypeState)).
    lower_groups = _let_through(group[OperandKind.ZERO_DIM], group[OperandKind.SCALAR])
    return _let_through(group[OperandKind.TENSOR], lower_groups)


def _let_through(higher: DType | None, lower: DType | None) -> DType | None:
    """Combine a higher-priority group with a lower one (c10 ``combine_categories``)."""
    if higher is None:
        return lower
    if lower is None or category(lower) <= category(higher):
        return higher
    if is_complex(lower):
        # A floating result keeps its precision as it goes complex: float16_tensor * 1j -> complex32,
        # float64_tensor + complex64_zero_dim -> complex128. Any other takes the lower complex as is,
        # without promoting: uint16_tensor + complex32_zero_dim -> complex32, no error.
        return _COMPLEX_OF[higher] if is_floating(higher) else lower
    # A bool result meeting an int or float, or an int meeting a float, does promote: so a bool
    # tensor with a uint16 0-dim tensor raises, as in torch.
    return promote_types(higher, lower)


def true_divide_type(result: DType, default_float: DType = DType.float32) -> DType:
    """The dtype of ``a / b`` given ``result_type`` of a and b: integer and bool division gives the default float."""
    _check_default_float(default_float)
    return default_float if category(result) <= Category.INTEGRAL else result


def comparison_type(operands: Iterable[Operand], default_float: DType = DType.float32) -> DType:
    """The dtype of ``a == b``, ``a < b`` ...: always bool, but the operands still promote (and may raise)."""
    result_type(operands, default_float)
    return DType.bool


# ---------------------------------------------------------------------------------------------
# Literals


def literal_kind(value: object) -> str | None:
    """"bool", "int", "float" or "complex" for a Python scalar (bool before int: True is an int too)."""
    kind = type(value).__name__
    return kind if kind in PYTHON_SCALAR_TYPES else None


def _widest_kind(kinds: Iterable[str]) -> str | None:
    present = set(kinds)
    unknown = present - set(PYTHON_SCALAR_TYPES)
    if unknown:
        raise ValueError(f"not Python scalar types: {sorted(unknown)}")
    return max(present, key=PYTHON_SCALAR_TYPES.index, default=None)


def torch_tensor_literal_dtype(kinds: Iterable[str], default_float: DType = DType.float32) -> DType:
    """The dtype ``torch.tensor(<nested list of literals>)`` infers from the kinds of literal in it.

    bools alone give bool; any int makes it int64; any float the default dtype; any complex the
    default complex. No literals at all (``torch.tensor([])``) gives the default dtype.
    """
    _check_default_float(default_float)
    widest = _widest_kind(kinds)
    if widest is None:
        return default_float
    if widest == "complex" and default_float is DType.bfloat16:
        # Unlike promotion (complex64), torch.tensor raises "invalid default scalar type for complex".
        raise DTypeError("torch.tensor of complex literals raises under default dtype bfloat16")
    return python_scalar_dtype(widest, default_float)


_NUMPY_LITERAL_DTYPE = {
    "bool": DType.bool,
    "int": DType.int64,  # NumPy 2 (and NumPy 1 off Windows, where it was int32)
    "float": DType.float64,  # numpy's default is float64 where torch's is float32
    "complex": DType.complex128,
}


def numpy_default_for(kind: str) -> DType:
    """The dtype numpy gives a Python literal of this kind: ``np.array([1.0])`` is float64."""
    return _NUMPY_LITERAL_DTYPE[kind]


def numpy_array_literal_dtype(kinds: Iterable[str]) -> DType:
    """The dtype ``np.array(<nested list of literals>)`` infers (``np.array([])`` is float64)."""
    widest = _widest_kind(kinds)
    return DType.float64 if widest is None else _NUMPY_LITERAL_DTYPE[widest]


def _check_default_float(default_float: DType) -> None:
    if default_float not in _DEFAULT_FLOATS:
        raise ValueError(f"torch's default dtype is a real floating type, not {default_float!r}")
