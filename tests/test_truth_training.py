"""The TW7xx rules, and the facts the widened TW1xx/TW2xx rules rely on, checked against real PyTorch (CPU).

The examples of TW701-TW704 do not raise, so the generic runtime test cannot check them. Here each example runs
with PyTorch instrumented to observe the pitfall itself, and every invalid example must show it while no valid
example (and no fixed one) does:

- TW701 / TW702: the tensor given to cross-entropy (BCE-with-logits) came out of softmax (sigmoid);
- TW703: a model with dropout or batch-norm is called in training mode while gradients are off;
- TW704: `backward()` adds into gradients that were already used by an optimizer `step()`;
- TW705: on torch >= 2.6 a `torch.load` without `weights_only=` refuses a pickled module, and the fix that the rule
  prefers for a whole-model load loads it.

Plus the numbers behind the messages: a double softmax flattens the gradients, a double sigmoid squeezes
predictions into (0.5, 0.73), log-softmax into cross-entropy changes nothing.
"""

from __future__ import annotations

import contextlib
import os
import warnings

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import torch.nn.functional as F  # noqa: E402

from torchwise.engine import analyze  # noqa: E402
from torchwise.fixing import apply_edits  # noqa: E402
from torchwise.rules import RULES_BY_CODE  # noqa: E402
from torchwise.rules.sync import TENSOR_ONLY_METHODS  # noqa: E402


def run(code: str, driver: str = "") -> dict:
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code + driver, "<example>", "exec"), namespace)
    return namespace


def fixed(code: str, rule_code: str) -> str:
    (finding,) = [f for f in analyze(code).findings if f.code == rule_code]
    return apply_edits(code, finding.fixes[0].edits)


def examples(rule_code: str, kind: str):
    return [pytest.param(ex, id=f"{rule_code}-{kind}-{i}") for i, ex in enumerate(getattr(RULES_BY_CODE[rule_code], kind))]


@contextlib.contextmanager
def patched(owner, name: str, wrapper):
    original = getattr(owner, name)
    setattr(owner, name, wrapper(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


# -- TW701 / TW702: what the loss is given ---------------------------------------------------------------------
class ActivationTrace:
    """Records the tensors an activation returned, and the predictions a loss was given."""

    def __init__(self):
        self.outputs: list = []
        self.fed: list = []

    def activation(self, original):
        def wrapper(*args, **kwargs):
            out = original(*args, **kwargs)
            self.outputs.append(out)
            return out
        return wrapper

    def loss(self, original):
        def wrapper(input, *args, **kwargs):
            self.fed.append(input)
            return original(input, *args, **kwargs)
        return wrapper

    def fed_an_activation(self) -> bool:
        return any(any(p is out for out in self.outputs) for p in self.fed)


def traced(code: str, activations, loss) -> ActivationTrace:
    trace = ActivationTrace()
    with contextlib.ExitStack() as stack:
        for owner, name in activations:
            stack.enter_context(patched(owner, name, trace.activation))
        stack.enter_context(patched(F, loss, trace.loss))
        run(code)
    return trace


SOFTMAXES = [(F, "softmax"), (torch, "softmax"), (torch.Tensor, "softmax")]
SIGMOIDS = [(torch, "sigmoid"), (torch.Tensor, "sigmoid"), (F, "sigmoid")]


@pytest.mark.parametrize("example", examples("TW701", "invalid"))
def test_double_softmax_examples_feed_softmax_to_cross_entropy(example):
    trace = traced(example.code + DRIVERS.get(example.code, ""), SOFTMAXES, "cross_entropy")
    assert trace.fed and trace.fed_an_activation()
    if example.fixed:
        assert not traced(example.fixed + DRIVERS.get(example.code, ""), SOFTMAXES, "cross_entropy").fed_an_activation()


@pytest.mark.parametrize("example", examples("TW701", "valid"))
def test_softmax_valid_examples_feed_no_softmax_output(example):
    assert not traced(example.code, SOFTMAXES, "cross_entropy").fed_an_activation()


@pytest.mark.parametrize("example", examples("TW702", "invalid"))
def test_double_sigmoid_examples_feed_sigmoid_to_bce_with_logits(example):
    code = example.code + DRIVERS.get(example.code, "")
    trace = traced(code, SIGMOIDS, "binary_cross_entropy_with_logits")
    assert trace.fed and trace.fed_an_activation()
    if example.fixed:
        again = traced(example.fixed, SIGMOIDS, "binary_cross_entropy_with_logits")
        assert not again.fed_an_activation()


@pytest.mark.parametrize("example", examples("TW702", "valid"))
def test_sigmoid_valid_examples_feed_no_sigmoid_output(example):
    assert not traced(example.code, SIGMOIDS, "binary_cross_entropy_with_logits").fed_an_activation()


def test_double_softmax_flattens_the_gradient_and_log_softmax_is_harmless():
    torch.manual_seed(0)
    logits = (torch.randn(64, 10) * 3).requires_grad_()
    y = torch.randint(0, 10, (64,))
    right, = torch.autograd.grad(F.cross_entropy(logits, y), logits)
    double, = torch.autograd.grad(F.cross_entropy(F.softmax(logits, dim=1), y), logits)
    assert double.norm() < 0.5 * right.norm()
    torch.testing.assert_close(F.cross_entropy(F.log_softmax(logits, dim=1), y), F.cross_entropy(logits, y))


def test_double_sigmoid_squeezes_predictions():
    z = torch.linspace(-50, 50, 1001)
    twice = torch.sigmoid(torch.sigmoid(z))
    assert twice.min() >= 0.5 and twice.max() < 0.7311


# -- TW703: the mode a model is evaluated in -------------------------------------------------------------------
MODE_LAYERS = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._BatchNorm)


class ModeTrace:
    def __init__(self):
        self.depth = 0
        self.in_training_mode = 0

    def call(self, original):
        trace = self

        def wrapper(module, *args, **kwargs):
            outermost = trace.depth == 0
            if outermost and not torch.is_grad_enabled() and module.training and \
                    any(isinstance(m, MODE_LAYERS) for m in module.modules()):
                trace.in_training_mode += 1
            trace.depth += 1
            try:
                return original(module, *args, **kwargs)
            finally:
                trace.depth -= 1
        return wrapper


def evaluated_in_training_mode(code: str) -> int:
    trace = ModeTrace()
    if "test(model)" in code:  # an unknown helper in the example: here, one that switches the mode
        code = "def test(model):\n    model.eval()\n\n\n" + code
    with patched(torch.nn.Module, "__call__", trace.call):
        run(code)
    return trace.in_training_mode


def _runnable(code: str) -> bool:
    return "torchvision" not in code


@pytest.mark.parametrize("example", examples("TW703", "invalid"))
def test_eval_examples_run_a_training_mode_model_without_grad(example):
    if not _runnable(example.code):
        pytest.skip("needs torchvision")
    assert evaluated_in_training_mode(example.code) >= 1
    assert evaluated_in_training_mode(example.fixed) == 0


@pytest.mark.parametrize("example", examples("TW703", "valid"))
def test_eval_valid_examples_evaluate_in_eval_mode_or_harmlessly(example):
    if "backward" not in example.code:
        pytest.skip("no training before the evaluation: outside what the rule claims")
    assert evaluated_in_training_mode(example.code) == 0


def test_dropout_in_training_mode_is_random_under_no_grad():
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5))
    x = torch.randn(4, 8)
    with torch.no_grad():
        assert not torch.equal(model(x), model(x))  # training mode: a new mask every call
        model.eval()
        assert torch.equal(model(x), model(x))


# -- TW704: gradients that add up across steps -----------------------------------------------------------------
class GradTrace:
    def __init__(self):
        self.optimizers: list = []
        self.stale_backwards = 0  # backward passes that added into gradients a step already used

    def init(self, original):
        trace = self

        def wrapper(optimizer, *args, **kwargs):
            original(optimizer, *args, **kwargs)
            optimizer._tw_stepped = False
            trace.optimizers.append(optimizer)
            # Each optimizer class has its own `step`: wrap this instance's.
            step, zero_grad = optimizer.step, optimizer.zero_grad

            def stepped(*a, **k):
                optimizer._tw_stepped = True
                return step(*a, **k)

            def cleared(*a, **k):
                optimizer._tw_stepped = False
                return zero_grad(*a, **k)
            optimizer.step, optimizer.zero_grad = stepped, cleared
        return wrapper

    def backward(self, original):
        trace = self

        def wrapper(tensor, *args, **kwargs):
            for optimizer in trace.optimizers:
                if getattr(optimizer, "_tw_stepped", False) and any(
                        p.grad is not None and bool(p.grad.abs().sum() > 0)
                        for group in optimizer.param_groups for p in group["params"]):
                    trace.stale_backwards += 1
            return original(tensor, *args, **kwargs)
        return wrapper


def stale_backwards(code: str) -> int:
    trace = GradTrace()
    with patched(torch.optim.Optimizer, "__init__", trace.init), patched(torch.Tensor, "backward", trace.backward):
        run(code, DRIVERS.get(code, ""))
    return trace.stale_backwards


@pytest.mark.parametrize("example", examples("TW704", "invalid"))
def test_missing_zero_grad_examples_accumulate_across_steps(example):
    assert stale_backwards(example.code) >= 1
    if example.fixed:
        assert stale_backwards(example.fixed) == 0


@pytest.mark.parametrize("example", [e for e in examples("TW704", "valid") if "gym" not in e.values[0].code
                                     and "dist_autograd" not in e.values[0].code])
def test_zero_grad_valid_examples_never_reuse_stale_gradients(example):
    assert stale_backwards(example.code) == 0


def test_backward_adds_into_grad():
    w = torch.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    (w * 2).sum().backward()
    assert torch.equal(w.grad, torch.full((3,), 4.0))


# -- TW705: torch.load's default --------------------------------------------------------------------------------
@pytest.fixture
def in_tmp(tmp_path):
    before = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(before)


def _newer_than(version: str) -> bool:
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    return (major, minor) >= tuple(int(p) for p in version.split("."))


@pytest.mark.skipif(not _newer_than("2.6"), reason="the default changed in torch 2.6")
def test_load_without_weights_only_breaks_a_whole_model_load(in_tmp):
    whole = RULES_BY_CODE["TW705"].invalid[2]
    torch.save(torch.nn.Linear(2, 2), "model.pt")
    with pytest.raises(Exception, match="(?i)weights_only|unpickl"):
        run(whole.code)
    assert isinstance(run(whole.fixed)["model"], torch.nn.Linear)  # weights_only=False, preferred here


def test_load_fixes_keep_state_dict_loads_working(in_tmp):
    torch.save({"step": 3}, "ckpt.pt")
    second = RULES_BY_CODE["TW705"].invalid[1]
    assert run(second.code)["step"] == run(second.fixed)["step"] == 3
    torch.save(torch.nn.Linear(2, 2).state_dict(), "ckpt.pt")
    first = RULES_BY_CODE["TW705"].invalid[0]
    run(first.fixed)


# -- facts the widened rules read off the code ----------------------------------------------------------------
def test_tensor_only_methods_are_torch_only():
    """TW203 takes `y.clone()` as proof that `y` is a tensor: numpy arrays and lists have none of these methods
    (numpy's `.size` is a number), while numpy scalars do have `.item()`, which therefore proves nothing."""
    array = np.zeros(2)
    for method in TENSOR_ONLY_METHODS:
        assert hasattr(torch.Tensor, method), method
        assert not (hasattr(array, method) and callable(getattr(array, method))), method
        assert not hasattr([], method), method
    assert np.float64(1.5).item() == 1.5


def test_legacy_constructor_arguments_size_or_data():
    """TW101: two or more arguments are a size whatever they are; TW102's `meant a shape`: a tuple is data."""
    assert torch.LongTensor(torch.tensor(2), np.int64(3)).shape == (2, 3)
    assert torch.Tensor(np.int64(3)).shape == (3,)  # one numpy int: a size too
    made = torch.FloatTensor((5, 1, 1, 1))
    assert made.shape == (4,) and made.tolist() == [5.0, 1.0, 1.0, 1.0]
    assert torch.empty((5, 1, 1, 1), dtype=torch.float32).shape == (5, 1, 1, 1)


def test_meant_a_shape_fix_makes_that_shape():
    example = RULES_BY_CODE["TW102"].invalid[-1]
    x = torch.randn(5, 3, 4, 4)
    before = run(example.code)["drop_path"]
    after = run(example.fixed)["drop_path"]
    keep_before = torch.FloatTensor((x.shape[0], 1, 1, 1)).uniform_() > 0.5
    assert keep_before.shape == (4,)  # broadcast along the last dimension: the wrong mask, silently
    assert before(x, 0.5).shape == after(x, 0.5).shape == x.shape
    torch.manual_seed(0)
    dropped = after(x, 0.5)
    assert all(bool((dropped[i] == 0).all()) or bool((dropped[i] == x[i]).all()) for i in range(5))  # per sample


def test_create_then_move_fix_is_not_preferred_when_the_file_seeds():
    code = ("import torch\ntorch.manual_seed(0)\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "noise = torch.randn(4, 8).to(device)\n")
    (finding,) = [f for f in analyze(code).findings if f.code == "TW202"]
    assert "other random numbers" in finding.fixes[0].title and not finding.fixes[0].preferred
    plain = code.replace("torch.manual_seed(0)\n", "")
    (finding,) = [f for f in analyze(plain).findings if f.code == "TW202"]
    assert finding.fixes[0].preferred


# Code run after an example that only defines functions, so that the instrumented torch sees the pitfall.
DRIVERS = {
    RULES_BY_CODE["TW704"].invalid[1].code:
        "\n_m = torch.nn.Linear(4, 1)\n_opt = torch.optim.SGD(_m.parameters(), lr=0.1)\n"
        "train(_m, [(torch.randn(2, 4), torch.randn(2, 1))] * 3, _opt)\n",
    RULES_BY_CODE["TW704"].invalid[1].fixed:
        "\n_m = torch.nn.Linear(4, 1)\n_opt = torch.optim.SGD(_m.parameters(), lr=0.1)\n"
        "train(_m, [(torch.randn(2, 4), torch.randn(2, 1))] * 3, _opt)\n",
    RULES_BY_CODE["TW701"].invalid[3].code:
        "\n_t = Trainer(torch.nn.Linear(8, 3))\n_t.loss(torch.randn(4, 8), torch.tensor([0, 1, 2, 0]))\n",
    RULES_BY_CODE["TW702"].invalid[2].code: "\nstep(torch.randn(4), torch.ones(4))\n",
}
