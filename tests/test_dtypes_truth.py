"""torchwise.analysis.dtypes checked against real PyTorch and NumPy (CPU): zero disagreements.

- every name table (torch attributes, tensor cast methods, numpy attributes, numpy dtype strings);
- categories against ``dtype.is_floating_point`` / ``is_complex``;
- ``promote_types`` for every pair, raising exactly where torch raises;
- ``result_type`` for every pair of operands (dim>0 tensor, 0-dim tensor, Python scalar) under
  each default dtype, against ``torch.result_type`` and the dtype of ``+ - * / ==``;
- n-ary ``result_type`` against ops that promote all their inputs: ``torch.cat`` (1-4 tensors),
  ``torch.addcmul`` (3 tensors), ``torch.clamp`` (a tensor and two scalars, every combination);
- ``torch.tensor`` and ``np.array`` of generated nested lists of literals.
"""

from __future__ import annotations

import ast
import itertools
import operator
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from torchwise.analysis.dtypes import (  # noqa: E402
    PYTHON_SCALAR_TYPES,
    Category,
    DType,
    DTypeError,
    Operand,
    OperandKind,
    category,
    comparison_type,
    is_complex,
    is_floating,
    is_integral,
    literal_kind,
    numpy_array_literal_dtype,
    numpy_default_for,
    parse_cast_method,
    parse_dtype_string,
    parse_numpy_dtype,
    parse_torch_dtype,
    promote_types,
    result_type,
    to_complex,
    torch_tensor_literal_dtype,
    true_divide_type,
)
from torchwise.analysis import dtypes as dtypes_module  # noqa: E402

TORCH = {d: getattr(torch, d.short) for d in DType}
FROM_TORCH = {v: k for k, v in TORCH.items()}
DEFAULT_FLOATS = (DType.float32, DType.float64, DType.float16, DType.bfloat16)
SCALAR_VALUES = {"bool": True, "int": 1, "float": 1.5, "complex": 1j}
# Numpy names whose size follows the platform's C long or pointer: deliberately not in the tables.
PLATFORM_SIZED_NUMPY = {"int_", "intp", "uint", "uintp", "long", "ulong", "longlong", "ulonglong"}

ALL_OPERANDS = ([Operand.tensor(d) for d in DType] + [Operand.zero_dim(d) for d in DType]
                + [Operand.scalar(k) for k in PYTHON_SCALAR_TYPES])
A_FEW_HUNDRED = settings(max_examples=300, deadline=None)


@pytest.fixture(autouse=True)
def quiet_and_restore_default_dtype():
    before = torch.get_default_dtype()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "ComplexHalf support is experimental"
        yield
    torch.set_default_dtype(before)


def real(operand: Operand):
    if operand.kind is OperandKind.TENSOR:
        return torch.ones(2, dtype=TORCH[operand.dtype])
    if operand.kind is OperandKind.ZERO_DIM:
        return torch.ones((), dtype=TORCH[operand.dtype])
    return SCALAR_VALUES[operand.python_type]


def is_promotion_error(error: Exception) -> bool:
    return "Promotion for uint16, uint32, uint64 types is not supported" in str(error)


def torch_outcome(fn):
    """The dtype torch gives, 'raises' for a promotion error, None where torch rejects it otherwise."""
    try:
        out = fn()
    except (RuntimeError, TypeError, NotImplementedError) as error:
        return "raises" if is_promotion_error(error) else None
    return FROM_TORCH[out.dtype if isinstance(out, torch.Tensor) else out]


def ours(fn):
    try:
        return fn()
    except DTypeError:
        return "raises"


def test_the_module_imports_neither_torch_nor_numpy():
    tree = ast.parse(Path(dtypes_module.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "enum", "dataclasses", "typing"}


# --- names -----------------------------------------------------------------------------------


def test_names():
    for d in DType:
        assert str(TORCH[d]) == d.torch_name and d.short == d.torch_name.removeprefix("torch.")


def test_every_torch_dtype_attribute_parses():
    seen = set()
    for name in dir(torch):
        value = getattr(torch, name)
        if isinstance(value, torch.dtype):
            assert parse_torch_dtype(name) == FROM_TORCH.get(value), name
            seen.add(name)
    assert set(dtypes_module._TORCH_ALIASES) <= seen
    assert parse_torch_dtype("float8_e4m3fn") is None and parse_torch_dtype("Tensor") is None


def test_cast_methods():
    x = torch.ones(1)
    for name, d in dtypes_module._CAST_METHODS.items():
        assert getattr(x, name)().dtype == TORCH[d], name
    assert parse_cast_method("cuda") is None


def numpy_as_torch(np_dtype):
    return FROM_TORCH[torch.from_numpy(np.zeros(1, dtype=np_dtype)).dtype]


def test_every_numpy_scalar_type_parses():
    seen = set()
    for name in dir(np):
        value = getattr(np, name, None)
        if not (isinstance(value, type) and issubclass(value, np.generic)) or name in PLATFORM_SIZED_NUMPY:
            continue
        try:
            expected = numpy_as_torch(value)
        except (TypeError, ValueError):  # abstract (np.floating), or no torch counterpart (np.str_)
            expected = None
        assert parse_numpy_dtype(name) == expected, name
        seen.add(name)
    assert set(dtypes_module._NUMPY_ALIASES) <= seen


def test_numpy_dtype_strings():
    for text, d in dtypes_module._NUMPY_DTYPE_STRINGS.items():
        assert numpy_as_torch(np.dtype(text)) == d, text
    with pytest.raises(TypeError):  # torch itself takes no dtype strings
        torch.zeros(1, dtype="float32")
    assert parse_dtype_string("bfloat16") is None


def test_categories():
    for d in DType:
        t = TORCH[d]
        assert is_floating(d) == t.is_floating_point and is_complex(d) == t.is_complex
        assert is_integral(d) == (not t.is_floating_point and not t.is_complex and t is not torch.bool)
        assert is_integral(d, include_bool=True) == (not t.is_floating_point and not t.is_complex)
        assert (category(d) is Category.BOOL) == (t is torch.bool)


# --- promotion -------------------------------------------------------------------------------


def test_to_complex_keeps_the_precision():
    for d in DType:
        if is_floating(d) or is_complex(d):
            # A dim>0 tensor meeting a complex 0-dim tensor goes complex at its own precision (toComplexType).
            zero_dim_complex = torch.ones((), dtype=torch.complex32)
            assert to_complex(d) == FROM_TORCH[torch.result_type(torch.ones(2, dtype=TORCH[d]), zero_dim_complex)]
        else:
            with pytest.raises(ValueError):
                to_complex(d)


def test_promote_types_every_pair():
    checked = 0
    for a, b in itertools.product(DType, repeat=2):
        expected = torch_outcome(lambda: torch.promote_types(TORCH[a], TORCH[b]))
        assert expected is not None
        assert ours(lambda: promote_types(a, b)) == expected, (a, b)
        checked += 1
    assert checked == len(DType) ** 2


BINARY_OPS = {"+": operator.add, "*": operator.mul, "-": operator.sub}


def check_pair(x: Operand, y: Operand, default_float: DType) -> int:
    """Every truth torch offers about one pair; returns how many it checked."""
    a, b = real(x), real(y)
    predicted = ours(lambda: result_type([x, y], default_float))
    expected = torch_outcome(lambda: torch.result_type(a, b))
    assert predicted == expected, (x, y, default_float)
    checked = 1
    if x.kind is OperandKind.SCALAR and y.kind is OperandKind.SCALAR:
        return checked  # Python does the arithmetic; no tensor
    for symbol, op in BINARY_OPS.items():
        got = torch_outcome(lambda: op(a, b))
        if got is not None:  # None: torch has no kernel (uint16 add) or rejects it (bool - bool)
            assert got == predicted, (symbol, x, y, default_float)
            checked += 1
    got = torch_outcome(lambda: a / b)
    if got is not None:
        assert got == (predicted if predicted == "raises" else true_divide_type(predicted, default_float)), (x, y)
        checked += 1
    got = torch_outcome(lambda: a == b)
    if got is not None:
        assert got == ours(lambda: comparison_type([x, y], default_float)), (x, y)
        checked += 1
    return checked


@pytest.mark.parametrize("default_float", DEFAULT_FLOATS, ids=lambda d: d.short)
def test_result_type_every_pair(default_float):
    torch.set_default_dtype(TORCH[default_float])
    checked = sum(check_pair(x, y, default_float) for x, y in itertools.product(ALL_OPERANDS, repeat=2))
    assert checked > len(ALL_OPERANDS) ** 2


def test_result_type_needs_operands_and_a_float_default():
    with pytest.raises(ValueError):
        result_type([])
    with pytest.raises(ValueError):
        result_type([Operand.scalar("float")], default_float=DType.int64)
    with pytest.raises(ValueError):
        Operand.scalar("str")


# --- n-ary promotion -------------------------------------------------------------------------

default_floats = st.sampled_from(DEFAULT_FLOATS)
dtypes = st.sampled_from(list(DType))
tensor_operands = st.builds(Operand.tensor, dtypes) | st.builds(Operand.zero_dim, dtypes)


def agree(operands, default_float, run_torch):
    torch.set_default_dtype(TORCH[default_float])
    expected = torch_outcome(run_torch)
    if expected is not None:
        assert ours(lambda: result_type(operands, default_float)) == expected


@A_FEW_HUNDRED
@given(st.lists(st.builds(Operand.tensor, dtypes), min_size=1, max_size=4), default_floats)
def test_cat_promotes_like_result_type(operands, default_float):
    agree(operands, default_float, lambda: torch.cat([real(o) for o in operands]))


@A_FEW_HUNDRED
@given(st.lists(tensor_operands, min_size=3, max_size=3), default_floats)
def test_addcmul_promotes_like_result_type(operands, default_float):
    agree(operands, default_float, lambda: torch.addcmul(*[real(o) for o in operands]))


@pytest.mark.parametrize("default_float", DEFAULT_FLOATS, ids=lambda d: d.short)
def test_clamp_promotes_like_result_type(default_float):
    # clamp(Tensor, Scalar, Scalar) feeds all three to the same promotion as result_type.
    tensors = [o for o in ALL_OPERANDS if o.kind is not OperandKind.SCALAR]
    scalars = [o for o in ALL_OPERANDS if o.kind is OperandKind.SCALAR]
    for x, low, high in itertools.product(tensors, scalars, scalars):
        agree([x, low, high], default_float, lambda: torch.clamp(real(x), real(low), real(high)))


@pytest.mark.parametrize("default_float", DEFAULT_FLOATS, ids=lambda d: d.short)
def test_result_type_of_one_operand(default_float):
    for x in ALL_OPERANDS:  # result_type(x, x) is x's own
        agree([x], default_float, lambda: torch.result_type(real(x), real(x)))


# --- literals --------------------------------------------------------------------------------

literals = st.one_of(st.booleans(), st.integers(-3, 3), st.floats(-3, 3), st.complex_numbers(max_magnitude=3))


@st.composite
def nested_lists(draw):
    """A rectangular nested list (0-3 dims, some empty) of mixed Python literals, and its kinds."""
    shape = draw(st.lists(st.integers(0, 3), max_size=3))
    count = 1
    for size in shape:
        count *= size
    flat = draw(st.lists(literals, min_size=count, max_size=count))
    kinds = {literal_kind(v) for v in flat}

    def build(dims, items):
        if not dims:
            return items.pop()
        return [build(dims[1:], items) for _ in range(dims[0])]

    return build(shape, list(flat)), kinds


@A_FEW_HUNDRED
@given(nested_lists(), default_floats)
def test_torch_tensor_of_literals(literal_and_kinds, default_float):
    literal, kinds = literal_and_kinds
    torch.set_default_dtype(TORCH[default_float])
    try:
        expected = FROM_TORCH[torch.tensor(literal).dtype]
    except RuntimeError as error:
        assert "invalid default scalar type for complex" in str(error)
        expected = "raises"
    assert ours(lambda: torch_tensor_literal_dtype(kinds, default_float)) == expected


@A_FEW_HUNDRED
@given(nested_lists())
def test_numpy_array_of_literals(literal_and_kinds):
    literal, kinds = literal_and_kinds
    assert numpy_as_torch(np.array(literal).dtype) == numpy_array_literal_dtype(kinds)


def test_numpy_defaults():
    for kind, value in SCALAR_VALUES.items():
        assert numpy_as_torch(np.array([value]).dtype) == numpy_default_for(kind)
    assert literal_kind(True) == "bool" and literal_kind(1) == "int" and literal_kind("x") is None
