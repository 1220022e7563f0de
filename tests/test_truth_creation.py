"""The creation rules checked against real PyTorch (CPU): what the rule claims must be what torch does.

- every rule example runs; the fixed code gives tensors of the same shape and dtype (and the same
  values where the original's values are defined);
- generated legacy-constructor calls: TW101 only where torch reads a size, TW102 only where it
  reads data;
- generated `torch.tensor([...])` of tensors: TW106 as an error only where torch raises, as a
  warning only where it does not, and its fix (`torch.stack`) runs and agrees.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from torchwise.engine import analyze  # noqa: E402
from torchwise.fixing import apply_edits  # noqa: E402
from torchwise.rules import ALL_RULES  # noqa: E402


def execute(code: str) -> dict:
    namespace: dict = {}
    torch.manual_seed(0)  # random factories must draw the same numbers in both versions
    np.random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "<example>", "exec"), namespace)
    return namespace


def tensors(namespace: dict) -> dict:
    return {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor)}


# The creation rules (TW1xx); the rules about code that raises have their own runtime test.
RUNNABLE = [(rule.code, i, ex) for rule in ALL_RULES for i, ex in enumerate(rule.invalid)
            if rule.code.startswith("TW1") and ex.fixed and "cuda" not in ex.code]


@pytest.fixture(autouse=True)
def default_dtype():
    before = torch.get_default_dtype()
    yield
    torch.set_default_dtype(before)


@pytest.mark.parametrize(("code", "i", "example"), RUNNABLE, ids=[f"{c}-{i}" for c, i, _ in RUNNABLE])
def test_fixed_example_builds_the_same_tensors(code, i, example):
    try:
        original = tensors(execute(example.code))
    except ValueError:
        assert code == "TW106"  # the bug TW106 reports as an error
        original = None
    torch.set_default_dtype(torch.float32)
    fixed = tensors(execute(example.fixed))
    if original is None:
        return
    assert original.keys() == fixed.keys()
    for name, before in original.items():
        after = fixed[name]
        if code == "TW104" and before.dtype == torch.float64:  # the fix's purpose: float32, same values
            assert after.dtype == torch.float32, name
            torch.testing.assert_close(after, before.float(), msg=name)
            continue
        assert (after.shape, after.dtype, after.device) == (before.shape, before.dtype, before.device), name
        if code != "TW101":  # TW101's original holds uninitialized memory
            torch.testing.assert_close(after, before, msg=name)


# -- legacy constructors: size or data? -----------------------------------------------------------
LEGACY_TYPES = ["Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor",
                "HalfTensor"]
SETUP = "import torch\nimport numpy as np\nn = 3\nt = torch.zeros(2, 3)\na = np.zeros((2, 3))\nlst = [1, 2]\n"
ARGUMENTS = [
    "3", "2, 3", "n", "n, 2", "", "len(lst)", "n * 2", "t.size()", "t.shape", "torch.Size([2, 2])",
    "a.shape", "[1, 2]", "(1, 2)", "lst", "[[1, 2], [3, 4]]", "[i for i in range(3)]", "np.array([1.5, 2.5])",
    "list(range(3))", "a", "t", "2, n",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(LEGACY_TYPES), args=st.sampled_from(ARGUMENTS),
       alias=st.sampled_from(["torch", "T"]))
def test_legacy_constructor_verdicts_agree_with_torch(kind, args, alias):
    imports = "import torch as T\n" if alias == "T" else ""
    code = f"{SETUP}{imports}result = {alias}.{kind}({args})\n"
    codes = {f.code for f in analyze(code).findings}
    namespace = execute(SETUP)
    try:
        made = tuple(eval(f"torch.{kind}({args})", namespace).shape)
    except (TypeError, RuntimeError, ValueError):
        made = None  # torch rejects it: neither verdict may claim what happens
    values = eval(f"({args},)", namespace) if args else ()
    as_size, as_data = _size_reading(values), _data_reading(values)
    read_size = made is not None and made == as_size and made != as_data
    read_data = made is not None and made == as_data and made != as_size
    if "TW101" in codes:
        assert read_size, f"TW101 claims a size for {code!r}; torch made shape {made}"
    if "TW102" in codes:
        assert read_data, f"TW102 claims data for {code!r}; torch made shape {made}"


def _size_reading(values: tuple):
    """The shape torch would make if it read the arguments as a size."""
    flat = values[0] if len(values) == 1 and not isinstance(values[0], int) else values
    try:
        return tuple(int(v) for v in flat) if flat != () else (0,)
    except (TypeError, ValueError):
        return None


def _data_reading(values: tuple):
    """The shape torch would make if it read the single argument as data."""
    if len(values) != 1:
        return None
    try:
        return tuple(np.asarray(values[0]).shape)
    except (TypeError, ValueError):
        return None


# -- torch.tensor of tensors ------------------------------------------------------------------------
ELEMENTS = {
    "torch.randn(3)": (3,), "torch.randn(1)": (1,), "torch.zeros(2, 2)": (2, 2), "torch.ones(1, 1)": (1, 1),
    "torch.tensor(1.5)": (), "torch.randn(4).sum()": (), "torch.randn(2, 3).mean()": (),
    "torch.tensor([1.0, 2.0])": (2,), "(torch.randn(3) * 2).max()": (), "torch.randn(0)": (0,),
}


@settings(max_examples=300, deadline=None)
@given(elements=st.lists(st.sampled_from(sorted(ELEMENTS)), min_size=1, max_size=4),
       bind=st.booleans())
def test_tensor_of_tensors_verdicts_agree_with_torch(elements, bind):
    if bind:
        names = [f"e{i}" for i in range(len(elements))]
        body = "".join(f"{n} = {e}\n" for n, e in zip(names, elements)) + f"r = torch.tensor([{', '.join(names)}])\n"
    else:
        body = f"r = torch.tensor([{', '.join(elements)}])\n"
    code = "import torch\ntorch.manual_seed(0)\n" + body
    [*findings] = [f for f in analyze(code).findings if f.code == "TW106"]
    try:
        original = execute(code)["r"]
    except ValueError:
        original = None
    if original is None:
        assert findings and findings[0].severity.label == "error", f"torch raised but TW106 missed it: {code}"
    elif findings:
        assert findings[0].severity.label == "warning", f"TW106 says error but torch works: {code}"
    for finding in findings:
        if finding.fixes:
            fixed = execute(apply_edits(code, finding.fixes[0].edits))["r"]
            if original is not None:
                torch.testing.assert_close(fixed, original)
            else:
                assert fixed.shape == (len(elements), *ELEMENTS[elements[0]])


def test_the_generated_space_exercises_both_verdicts():
    verdicts = {}
    for args in ARGUMENTS:
        codes = {f.code for f in analyze(f"{SETUP}result = torch.Tensor({args})\n").findings}
        verdicts[args] = codes & {"TW101", "TW102"}
    assert sum(v == {"TW101"} for v in verdicts.values()) >= 10, verdicts
    assert sum(v == {"TW102"} for v in verdicts.values()) >= 8, verdicts
    assert verdicts["t"] == set() and "TW101" not in verdicts["a.shape"]  # an ndarray's shape is data
