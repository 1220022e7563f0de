"""Every row of the op table against real PyTorch: what the engine claims for a call must be what torch does.

For each row (and each of its forms: ``torch.op``, ``t.op``, ``F.op``) the calls are generated from the
row's family: inputs of every dtype and several shapes (0-d, empty, broadcasting partners, transposed,
requiring grad), second operands that are tensors, 0-d tensors and Python numbers, dims in and out of
range, ``keepdim`` and ``dtype=``. Each call is analysed (one program per row and form) and run with real
torch. Where the engine states a fact (dtype, shape, device, requires_grad, strides, a tuple's length) it
must equal torch's; where torch raises, the engine must state nothing. Silence is allowed and counted:
``test_coverage`` prints, per row, how often the engine knew the result of a call that torch ran.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")

from torchwise.analysis import optable  # noqa: E402
from torchwise.analysis.dtypes import DType  # noqa: E402
from torchwise.analysis.optable import Family  # noqa: E402
from torchwise.analysis.values import SeqValue, TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64"]
SHAPES = [(), (4,), (2, 3), (0, 3), (2, 3, 4)]
HEADER = "import torch\nimport torch.nn.functional as F\n"


@dataclass
class Case:
    setup: list  # statements making the operands
    call: str  # the expression, over the names the setup binds


def tensor(name: str, shape: tuple, dtype: str, grad: bool = False, transposed: bool = False) -> str:
    size = ", ".join(map(str, shape)) if shape else "()"
    text = f"{name} = torch.ones({size}, dtype=torch.{dtype})"
    if transposed and len(shape) >= 2:
        text = f"{name} = torch.ones({', '.join(map(str, shape[::-1]))}, dtype=torch.{dtype}).transpose(0, 1)"
    if grad:
        text += ".requires_grad_()"
    return text


def inputs():
    """(setup, shape) of the first operand: every dtype and shape, some transposed, some requiring grad."""
    for dtype, shape in itertools.product(DTYPES, SHAPES):
        yield [tensor("x", shape, dtype)], shape
    yield [tensor("x", (2, 3), "float32", grad=True)], (2, 3)
    yield [tensor("x", (2, 3), "float32", transposed=True)], (3, 2)
    yield [tensor("x", (2, 3, 4), "float64", transposed=True)], (3, 2, 4)


def seconds(shape: tuple):
    """Second operands for ``x`` of ``shape``: tensors that broadcast (or not), 0-d tensors, Python numbers."""
    yield [tensor("y", shape, "float32")], "y"
    yield [tensor("y", shape, "int64")], "y"
    yield [tensor("y", shape, "bool")], "y"
    if shape:
        yield [tensor("y", shape[-1:], "float64")], "y"
        yield [tensor("y", (5,), "float32")], "y"  # does not broadcast (unless a dim is 5)
    yield [tensor("y", (), "float64")], "y"
    yield [tensor("y", (), "int32")], "y"
    yield [], "2"
    yield [], "0.5"
    yield [], "True"


def call_text(form: str, name: str, args: str) -> str:
    args = args.strip(", ")
    if form == "method":
        return f"x.{name}({args})"
    prefix = "torch" if form == "function" else "F"
    return f"{prefix}.{name}(x{', ' + args if args else ''})"


def cases(op: optable.Op, form: str):
    """The generated calls of one row in one form."""
    name = op.name
    for setup, shape in inputs():
        for extra, args in _arguments(op, shape):
            yield Case(setup + extra, call_text(form, name, args) if op.name != "where" else args)


def _arguments(op: optable.Op, shape: tuple):
    family, kernel = op.family, op.kernel
    if family is Family.POINTWISE and kernel is None:
        yield [], ""
        return
    if kernel in ("add", "sub", "mul", "div", "pow", "mod", "floordiv", "max", "and", "compare", "order", "logical"):
        for extra, other in seconds(shape):
            yield extra, other
        if op.name in ("div", "divide", "true_divide"):
            yield [], "2, rounding_mode='floor'"
            yield [tensor("y", shape, "int64")], "y, rounding_mode='trunc'"
        if op.name in ("add", "sub"):
            yield [tensor("y", shape, "int64")], "y, alpha=2"
            yield [tensor("y", shape, "int64")], "y, alpha=0.5"
        return
    if kernel == "clamp":
        names = [p.name for p in op.signature.params[1:]]
        if names == ["min", "max"]:
            for args in ("min=0", "0, 2", "min=0.5", "max=1", "0.5, 1.5", "min=None, max=2"):
                yield [], args
            yield [tensor("y", shape, "float32")], "min=y"
            yield [], ""
        else:
            for value in ("0", "0.5", "True"):
                yield [], value
            yield [tensor("y", shape, "float64")], "y"
        return
    if kernel == "where":
        for extra, other in seconds(shape):
            yield extra, f"torch.where(x > 0, x, {other})"
            yield extra, f"torch.where(x != 0, {other}, x)"
        yield [tensor("c", shape, "int64")], "torch.where(c, x, x)"
        return
    if kernel == "masked_fill":
        yield [tensor("m", shape, "bool")], "m, 0"
        yield [tensor("m", shape, "bool")], "m, 0.5"
        yield [tensor("m", shape[-1:], "bool")], "m, 1"
        yield [tensor("m", shape, "int64")], "m, 1"
        yield [tensor("m", shape, "bool"), "v = torch.tensor(2.0)"], "m, v"
        return
    if kernel == "lerp":
        yield [tensor("y", shape, "float32")], "y, 0.5"
        yield [tensor("y", shape, "float64")], "y, 0.5"
        yield [tensor("y", shape, "float32"), tensor("w", shape[-1:], "float32")], "y, w"
        return
    if family is Family.REDUCTION:
        if len(op.inputs) == 2:
            for extra, other in seconds(shape):
                if other[0] == "y":
                    yield extra, other
                    yield extra, other + ", dim=0"
                    yield extra, other + ", dim=-1"
            if op.name == "pairwise_distance":
                yield [tensor("y", shape, "float32")], "y, keepdim=True"
            return
        yield [], ""
        dims = op.signature.param("dim")
        for dim in ("0", "-1", "1", "5", "dim=0", "dim=(0, 1)" if dims and "[]" in dims.type else "dim=-2"):
            yield [], dim
            if op.signature.param("keepdim"):
                yield [], dim + ", keepdim=True"
        if op.signature.param("dtype"):
            yield [], "dtype=torch.float64"
            yield [], "0, dtype=torch.int32"
        if op.name in ("max", "min"):
            for extra, other in seconds(shape):
                if other[0] == "y":
                    yield extra, other
        if op.name == "norm":
            for args in ("2", "1, dim=0", "p=2, dim=-1, keepdim=True", "'fro'", "dim=1"):
                yield [], args
        if op.name in ("std", "var"):
            yield [], "0, True"
            yield [], "dim=0, correction=0"
        return
    if family is Family.SCAN:
        if op.name in ("flip",):
            for dims in ("[0]", "(0, 1)", "[-1]", "[3]"):
                yield [], dims
            return
        if op.name == "roll":
            for args in ("1", "1, 0", "(1, 2), (0, 1)", "1, 5"):
                yield [], args
            return
        if op.name in ("tril", "triu"):
            yield [], ""
            yield [], "1"
            return
        if op.signature.param("dim").default is not optable.REQUIRED:
            yield [], ""
        for dim in ("0", "-1", "1", "4", "dim=0"):
            yield [], dim
        if op.signature.param("dtype"):
            yield [], "0, dtype=torch.float64"
            yield [], "0, dtype=torch.int64"
        if op.name in ("sort", "argsort"):
            yield [], "descending=True"
        return
    raise AssertionError(f"no argument generator for {op.name}")


# -- running and comparing ------------------------------------------------------------------------------------
def real_result(case: Case):
    """What torch gives: ("value", result) or ("raises", error)."""
    namespace = {"torch": torch, "F": torch.nn.functional}
    try:
        for line in case.setup:
            exec(line, namespace)  # noqa: S102
        return "value", eval(case.call, namespace)  # noqa: S307
    except Exception as error:  # noqa: BLE001  (torch raises RuntimeError, TypeError, IndexError, ...)
        return "raises", error


def engine_results(cases: list) -> list:
    """The engine's fact for each case's result, from one program holding every case (each in its own function)."""
    lines = [HEADER]
    for i, case in enumerate(cases):
        lines.append(f"def case_{i}():\n")
        lines.extend(f"    {line}\n" for line in case.setup)
        lines.append(f"    r = {case.call}\n")
    source = "".join(lines)
    analysis = analyze(source, "<optable>")
    facts = analysis.facts.values
    results = []
    for stmt in analysis.source.tree.body[2:]:
        target = stmt.body[-1].targets[0]
        results.append(facts.get(target))
    assert len(results) == len(cases)
    return results


def problems_of(fact, kind: str, real) -> list:
    if fact is None:
        return []
    if kind == "raises":
        return [f"torch raises {type(real).__name__}: {str(real)[:100]}, the engine claims {fact}"]
    if isinstance(fact, SeqValue):
        if not isinstance(real, tuple) or (fact.items is not None and len(fact.items) != len(real)):
            return [f"the engine claims a {len(fact.items or ())}-tuple, torch gives {type(real).__name__}"]
        return [p for f, r in zip(fact.items or (), real) for p in problems_of(f, "value", r)]
    if not isinstance(fact, TensorValue):
        return []
    if not isinstance(real, torch.Tensor):
        return [f"the engine claims a tensor, torch gives {type(real).__name__}"]
    found = []
    if fact.dtype is not None and fact.dtype != DType(str(real.dtype).removeprefix("torch.")):
        found.append(f"dtype {fact.dtype.short} vs torch {real.dtype}")
    if fact.shape is not None and tuple(fact.shape) != tuple(real.shape):
        found.append(f"shape {fact.shape} vs torch {tuple(real.shape)}")
    if fact.device is not None and fact.device != str(real.device):
        found.append(f"device {fact.device} vs torch {real.device}")
    if fact.requires_grad is not None and fact.requires_grad != real.requires_grad:
        found.append(f"requires_grad {fact.requires_grad} vs torch {real.requires_grad}")
    if fact.strides is not None and all(isinstance(s, int) for s in fact.strides) \
            and tuple(fact.strides) != tuple(real.stride()) and real.numel() > 1:
        found.append(f"strides {fact.strides} vs torch {real.stride()}")
    return found


def _row_forms():
    seen = set()
    for op in optable.ROWS:
        if op.family is Family.CUSTOM:
            continue
        for form in sorted(op.forms - {"inplace"}):
            if (op.name, form) not in seen:
                seen.add((op.name, form))
                yield pytest.param(op, form, id=f"{form}-{op.name}")


STATS: Counter = Counter()


@pytest.mark.parametrize("op,form", list(_row_forms()))
def test_row_agrees_with_torch(op, form):
    generated = list(cases(op, form))
    facts = engine_results(generated)
    failures = []
    for case, fact in zip(generated, facts):
        kind, real = real_result(case)
        if kind == "value":
            STATS[(op.name, form, "ran")] += 1
            if fact is not None:
                STATS[(op.name, form, "known")] += 1
        for problem in problems_of(fact, kind, real):
            failures.append(f"{'; '.join(case.setup)}; r = {case.call}: {problem}")
    assert not failures, f"{len(failures)} of {len(generated)} calls disagree:\n" + "\n".join(failures[:12])


def test_coverage(capsys):
    """Not a check: how often the engine knows the result of a call torch ran, per row."""
    rows = sorted({(name, form) for name, form, _ in STATS})
    with capsys.disabled():
        print("\nop table coverage (calls torch ran / the engine knew):")
        for name, form in rows:
            ran, known = STATS[(name, form, "ran")], STATS[(name, form, "known")]
            print(f"  {form:10} {name:18} {known:4} / {ran:4}  {100 * known / max(ran, 1):5.1f}%")


def test_every_row_is_reachable_by_its_forms():
    for op in optable.ROWS:
        for form in op.forms:
            lookup = {"function": optable.function, "method": optable.method, "functional": optable.functional,
                      "inplace": lambda n: optable.inplace(n + "_")}[form]
            assert lookup(op.name) is not None, (op.name, form)


def test_signatures_bind_like_pytorch():
    sig = optable.method("sum").signature
    assert optable.bind(sig, [1], {"keepdim": True}, receiver="x") == {"input": "x", "dim": 1, "keepdim": True}
    with pytest.raises(optable.Unbound):
        optable.bind(sig, [1, True, 3], {}, receiver="x")
    with pytest.raises(optable.Unbound):
        optable.bind(sig, [], {"axis": 1}, receiver="x")
    assert optable.Signature.parse("f(Tensor x, int[] dim=(), *, bool k=False)").params[1].default == ()
