"""Chained stores in a loop body: ``a[i] = b[i] = v`` (issue 12).

Python evaluates ``v`` once, then stores it into each slot, left to right, each tensor converting it to its own
dtype. The body translator does the same: one batched value, one store per target. Generated programs (outputs of
different dtypes and shapes, a third target, a condition, a loop in a function, zero iterations) are checked
against real torch; near-misses (two targets in one tensor, a recurrence through a target, a target that is a view
of the other, a name among the targets) must get no fix.
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_vectorize_forms import counter  # noqa: E402,I001
from test_vectorize_truth import FLOATS, MANY, STATS, check_refused, loop_findings, program, seed, tensor  # noqa: E402

FORMS: dict = {}  # this file's forms, reported by its own test_zz report
counted = counter(FORMS)

ROW_VALUES = ["x[i].sum()", "x[i].sum() * 3", "x[i].max()", "torch.dot(x[i], w)", "(x[i] ** 2).mean()", "x[i, 0]",
              "x[i].abs().sum() + 1"]
SLICE_VALUES = ["x[i]", "x[i] * 2", "torch.relu(x[i] - 0.5)", "x[i] / (x[i].abs().sum() + 1)", "x[i] + w"]


@MANY
@given(st.randoms(use_true_random=False))
def test_chained_stores(r):
    n = r.choice([0, 1, 5])
    dtype = r.choice(FLOATS)
    per_row = r.random() < 0.5
    value = r.choice(ROW_VALUES if per_row else SLICE_VALUES)
    targets = r.choice([["a", "b"], ["a", "b"], ["a", "b", "c"]])
    allocs = []
    for name in targets:
        out_dtype = r.choice([dtype, dtype, "torch.float64", "torch.int64"])
        shape = "n" if per_row else "n, 3"
        allocs.append(f"{name} = torch.{r.choice(['zeros', 'empty', 'ones'])}({shape}, dtype={out_dtype})")
    store = " = ".join(f"{name}[i]" for name in targets) + f" = {value}"
    body = [f"    {store}"] if r.random() < 0.7 else ["    if x[i, 0] > 0:", f"        {store}"]
    if body[0].startswith("    if") and "empty" in " ".join(allocs):
        allocs = [a.replace("torch.empty", "torch.zeros") for a in allocs]  # masked slots keep what was there
    lines = [seed(r), f"x = {tensor(r, (n, 3), dtype)}", f"w = {tensor(r, (3,), dtype)}", f"n = {n}"] + allocs + \
        ["for i in range(x.shape[0]):"] + body
    counted("chained stores (a[i] = b[i] = v)", program(lines), tolerance=1e-4)


def test_chained_stores_are_rewritten():
    code = program(["x = torch.randn(30, 8)", "a = torch.zeros(30)", "b = torch.zeros(30, dtype=torch.int64)",
                    "for i in range(30):", "    a[i] = b[i] = x[i].sum() * 3"])
    findings = [f for f in loop_findings(code) if f.fixes]
    assert findings and "a_all" in findings[0].message, [f.message for f in loop_findings(code)]
    counted("chained stores (a[i] = b[i] = v)", code, must_fix=True)


def test_chained_stores_in_a_function():
    code = program(["def fill(x):", "    lo = torch.empty(x.shape[0])", "    hi = torch.empty(x.shape[0])",
                    "    for i in range(x.shape[0]):", "        lo[i] = hi[i] = x[i].mean()", "    return lo, hi",
                    "lo, hi = fill(torch.randn(7, 4))"])
    counted("chained stores (a[i] = b[i] = v)", code, must_fix=True)


NEAR_MISSES = [
    # two targets in one tensor (written twice in one iteration)
    ["x = torch.randn(6, 3)", "a = torch.zeros(7)", "for i in range(6):", "    a[i] = a[i + 1] = x[i].sum()"],
    # a recurrence through a target
    ["x = torch.randn(6, 3)", "a = torch.zeros(6)", "b = torch.zeros(6)", "for i in range(1, 6):",
     "    a[i] = b[i] = a[i - 1] + x[i].sum()"],
    ["x = torch.randn(6, 3)", "a = torch.zeros(6)", "b = torch.zeros(6)", "for i in range(1, 6):",
     "    a[i] = b[i] = b[i - 1] * 0.5 + x[i].sum()"],
    # one target a view of the other
    ["x = torch.randn(6, 3)", "a = torch.zeros(6, 2)", "b = a[:, 0]", "for i in range(6):",
     "    b[i] = a[i, 1] = x[i].sum()"],
    # a name among the targets: it keeps the last row's value (not a store)
    ["x = torch.randn(6, 3)", "a = torch.zeros(6)", "for i in range(6):", "    last = a[i] = x[i].sum()"],
    # a random draw per element
    ["x = torch.randn(6, 3)", "a = torch.zeros(6)", "b = torch.zeros(6)", "for i in range(6):",
     "    a[i] = b[i] = x[i].sum() + torch.rand(())"],
]


@pytest.mark.parametrize("lines", NEAR_MISSES, ids=[str(i) for i in range(len(NEAR_MISSES))])
def test_chained_near_misses_get_no_fix(lines):
    check_refused("near miss: chained stores", program(lines))
    FORMS["near miss: chained stores"] = STATS["near miss: chained stores"]


def test_zz_chained_report():
    if not FORMS:
        pytest.skip("run with the generating tests")
    for form, (programs, fixed) in sorted(FORMS.items()):
        print(f"{form:45s} {programs:6d} programs, {fixed:6d} rewritten and checked")
    for form, (programs, fixed) in FORMS.items():
        if not form.startswith("near miss"):
            assert fixed >= programs * 0.15, f"{form}: only {fixed} of {programs} generated loops were rewritten"
