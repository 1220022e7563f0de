"""The autograd and memory-sharing rules (TW302-TW305) agree with what PyTorch does at runtime."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from torchwise.analysis import optable  # noqa: E402
from torchwise.engine import analyze  # noqa: E402
from torchwise.rules import RULES_BY_CODE  # noqa: E402

# How each op the engine knows is called, method or function.
CALLS = {
    "exp": "x.exp()", "exp2": "x.exp2()", "expm1": "x.expm1()", "sigmoid": "torch.sigmoid(x)",
    "tanh": "torch.tanh(x)", "softmax": "x.softmax(0)", "log_softmax": "F.log_softmax(x, dim=0)",
    "relu": "F.relu(x)", "sqrt": "x.sqrt()", "rsqrt": "x.rsqrt()", "reciprocal": "x.reciprocal()",
}
NOT_SAVING = ["x.pow(2)", "x ** 2", "x * 2", "x + 1", "x.log()", "x.sin()", "x.abs()", "F.gelu(x)", "x.clamp(0, 1)",
              "F.silu(x)", "x / 2", "x.sum(0, keepdim=True)"]
SETUP = "import torch\nimport torch.nn.functional as F\nx = (torch.rand(5) + 0.5).requires_grad_()\n"


def backward_after_inplace(expression: str) -> bool:
    """True when changing ``expression``'s result in place makes backward raise."""
    namespace: dict = {}
    exec(SETUP, namespace)
    y = eval(expression, namespace)
    y.add_(1)
    try:
        y.sum().backward()
    except RuntimeError:
        return True
    return False


@pytest.mark.parametrize("op", sorted(optable.names_with("saves_output", form=None)))
def test_every_op_listed_as_saving_its_output_does(op):
    assert op in CALLS, f"add a call for {op}"
    assert backward_after_inplace(CALLS[op])
    code = SETUP + f"y = {CALLS[op]}\ny.add_(1)\n"
    assert "TW303" in [f.code for f in analyze(code).findings]


@pytest.mark.parametrize("expression", NOT_SAVING)
def test_ops_that_keep_their_inputs_do_not_fire(expression):
    assert not backward_after_inplace(expression)
    code = SETUP + f"y = {expression}\ny.add_(1)\n"
    assert "TW303" not in [f.code for f in analyze(code).findings]


def test_pow_with_a_scalar_base_saves_its_output():
    assert backward_after_inplace("torch.pow(2.0, x)")


def run(code: str) -> dict:
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "<example>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("example", RULES_BY_CODE["TW304"].invalid, ids=lambda e: e.code.splitlines()[-2])
def test_write_through_view_changes_the_base(example):
    """TW304: in every invalid example the base's values change; after the fix they do not."""
    base = {"a": "a", "x": "x", "m": "m"}
    before_code = example.code.rsplit("\n", 3)[0] + "\n"  # up to the view assignment
    name = next(n for n in base if f"\n{n} = " in example.code)
    original = run(before_code)[name].clone()
    assert not torch.equal(run(example.code)[name], original)
    assert torch.equal(run(example.fixed)[name], original)


@pytest.mark.parametrize("example", RULES_BY_CODE["TW305"].invalid, ids=lambda e: e.code.splitlines()[-1])
def test_from_numpy_shares_memory_and_the_fix_copies(example):
    """TW305: the tensor and the array are one memory; with the fix they are not."""
    def shared(code: str) -> bool:
        namespace = run(code)
        tensor = next(v for v in namespace.values() if isinstance(v, torch.Tensor))
        array = next(v for k, v in namespace.items() if isinstance(v, np.ndarray))
        return np.shares_memory(tensor.numpy(), array)
    assert shared(example.code)
    assert not shared(example.fixed)
