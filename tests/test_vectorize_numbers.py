"""Python numbers computed from ranges and made one tensor (``torch.tensor([i // k for i in range(n)])``,
``torch.FloatTensor([[p / 10000 ** (2 * (i // 2) / d) ...]])``), against real PyTorch.

The rewrite computes the same arithmetic on int64 / float64 aranges (``torch.arange(n) // k``). The generator
writes random expressions of the indices, known ints and floats with ``+ - * / // % **``, ``int()`` and ``float()``,
on ranges that start, step, run backwards or are empty, at module level and in functions, with constants that
make Python raise (a zero divisor, an overflowing float power) or leave int64 (``10 ** 18``): the rewrite must
then be refused or raise too (``check``). Near-misses that must get no fix are listed below.
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_vectorize_truth import MANY, check, check_refused, program  # noqa: E402,I001
from test_vectorize_forms import in_function  # noqa: E402

FORM = "numbers from ranges made a tensor"
_INTS = ["2", "1", "3", "-2", "7", "2", "3"]
_HOSTILE = ["0", "10 ** 18", "2 ** 40", "1e300", "0.0"]
_FLOATS = ["0.5", "2.0", "-1.5", "1e-3", "10000.0"]


def expression(r: random.Random, names: list, depth: int) -> str:
    if depth == 0 or r.random() > 0.75:
        pool = names * 3 + _INTS + (_FLOATS if r.random() > 0.6 else [])
        return r.choice(_HOSTILE if r.random() > 0.95 else pool)
    if r.random() > 0.9:
        return f"{r.choice(['float', 'int'])}({expression(r, names, depth - 1)})"
    op = r.choice(["*", "+", "-", "//", "+", "*", "%", "/", "**"])
    left = expression(r, names, depth - 1)
    if op == "**":
        base = r.choice(["10000", "2", "0.5", "10000.0", "-2", "0", left])
        exponent = r.choice(["2", "3", f"({expression(r, names, depth - 1)})", "-1", "0.5", "(i / 7)", "(i // 2)",
                             "400"])
        return f"({base} ** {exponent})"
    return f"({left} {op} {expression(r, names, depth - 1)})"


def _range(r: random.Random, size: str) -> str:
    return r.choice([f"range({size})", f"range(1, {size})", f"range({size}, 0, -1)", f"range(0, {size}, 2)",
                     f"range(-3, {size})"])


def generated(r: random.Random) -> list:
    n, m, k = r.choice([12, 5, 1, 0, 12]), r.choice([4, 1]), r.choice([3, 1, -2, 0, 3])
    nested = r.random() > 0.6
    names = ["i", "k"] + (["j"] if nested else [])
    loops = ["i", "j"] if nested else ["i"]
    for _ in range(20):  # an element that varies along every loop (one that does not is not a walk at all)
        element = expression(r, names, r.choice([1, 1, 2, 3]))
        if all(name in element for name in loops):
            break
    inner = f"[{element} for j in {_range(r, 'm')}]" if nested else element
    listed = f"[{inner} for i in {_range(r, 'n')}]"
    make = r.choice(["torch.tensor", "torch.tensor", "torch.FloatTensor", "torch.DoubleTensor"])
    lines = [f"out = {make}({listed})"]
    if not nested and make == "torch.tensor" and r.random() > 0.7:
        lines = [f"base = torch.arange(100) * 3", f"out = base[torch.tensor({listed})]"]
    placed = in_function(r, lines, {"n": n, "m": m, "k": k})
    return [f"n = {n}", f"m = {m}", f"k = {k}"] + lines if placed is lines else placed


@MANY
@given(st.randoms(use_true_random=False))
def test_numbers_from_ranges(r):
    check(FORM, program(generated(r)), tolerance=1e-5)


# Near what is rewritten, but not the same: each must get no fix.
NEAR_MISSES = [
    # Python raises where a float tensor would give inf
    ["n = 5", "out = torch.tensor([1 / i for i in range(n)])"],
    ["n = 5", "out = torch.tensor([2.0 // (i - 2) for i in range(n)])"],
    ["out = torch.tensor([10.0 ** i for i in range(400)])"],
    ["out = torch.tensor([(i - 2) ** 0.5 for i in range(5)])"],  # complex in Python
    # Python ints past int64: torch.tensor raises, int64 would wrap
    ["out = torch.tensor([i * 10 ** 18 for i in range(20)])"],
    ["out = torch.tensor([2 ** i for i in range(70)])"],
    # an int power with a negative exponent is a Python float
    ["out = torch.tensor([2 ** (i - 3) for i in range(5)])"],
    # a value not known: its bounds are unknown
    ["def f(n, k):", "    return torch.tensor([i * k for i in range(n)])", "out = f(4, 10 ** 17)"],
    # an empty list is float32 where the ints are int64
    ["def f(n):", "    return torch.tensor([i // 2 for i in range(n)])", "out = f(0)"],
    # not made a tensor: Python numbers stay Python numbers
    ["n = 5", "out = sum(i * i for i in range(n))"],
    ["n = 5", "out = [i // 2 for i in range(n)]"],
    # Python numbers of tensor elements divided by one that may be zero (ZeroDivisionError, not inf)
    ["x = torch.randn(5)", "y = torch.tensor([1.0, 0.0, 2.0, 3.0, 4.0])",
     "out = torch.tensor([a.item() / b.item() for a, b in zip(x, y)])"],
    ["x = torch.randn(5)", "y = torch.tensor([1, 0, 2, 3, 4])", "total = 0.0", "for a, b in zip(x, y):",
     "    total += a.item() / b.item()"],
    ["x = torch.randn(5)", "z = 0", "out = torch.tensor([a.item() / z for a in x])"],
    # a legacy constructor of bools
    ["n = 5", "out = torch.FloatTensor([i > 2 for i in range(n)])"],
]


@pytest.mark.parametrize("lines", NEAR_MISSES, ids=[str(i) for i in range(len(NEAR_MISSES))])
def test_near_miss_gets_no_fix(lines):
    check_refused("near miss (numbers from ranges)", program(lines))


# The corpus's forms, written as they are there.
REWRITTEN = [
    ["num_repeats = 3", "indices = torch.randperm(1000)",
     "indices = indices[torch.tensor([int(i // num_repeats) for i in range(1000 * num_repeats)])]"],
    ["def sinusoidal_embedding(n_channels, dim):",
     "    pe = torch.FloatTensor([[p / (10000 ** (2 * (i // 2) / dim)) for i in range(dim)]",
     "                            for p in range(n_channels)])", "    return pe", "pos = sinusoidal_embedding(64, 128)"],
    ["n = 6", "out = torch.tensor([i * 0.5 - 1 for i in range(n)])"],
    # ... and of tensor elements divided by a known nonzero number
    ["x = torch.randn(5)", "n = 4", "out = torch.tensor([a.item() / n for a in x])"],
]


@pytest.mark.parametrize("lines", REWRITTEN, ids=[str(i) for i in range(len(REWRITTEN))])
def test_corpus_forms_rewritten(lines):
    check(FORM, program(lines), must_fix=True, tolerance=1e-6)


def test_zz_numbers_report():
    from test_vectorize_truth import STATS

    programs, fixed = STATS.get(FORM, [0, 0])
    if not programs:
        pytest.skip("run with the generating test")
    print(f"{FORM}: {programs} programs, {fixed} rewritten and checked")
    assert fixed >= programs * 0.1, f"only {fixed} of {programs} generated programs were rewritten"
