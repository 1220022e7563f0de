"""Several stores into one tensor per iteration at slots that never meet (issue 12): ``coords[k, 0] = idx % W``
then ``coords[k, 1] = idx // W``. At one index position both stores write distinct non-negative int literals, and
every position before it is one dim in both, so no slot of one is ever a slot of the other, on any iterations:
each store is its own vectorized statement, in any order. Generated programs (two or three columns, a column out of
range, conditions, dtypes, nested loops, zero rows) are checked against real torch; near-misses (a negative
column that may be the same slot, misaligned positions, a store reading the tensor) get no fix.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_vectorize_forms import counter  # noqa: E402,I001
from test_vectorize_truth import FLOATS, MANY, STATS, check_refused, loop_findings, program, seed, tensor  # noqa: E402

FORMS: dict = {}
counted = counter(FORMS)

VALUES = ["x[i].sum()", "x[i].max()", "x[i, 0] * 2", "x[i].argmax()", "x[i].mean() + 1", "x[i, -1]", "3"]


@MANY
@given(st.randoms(use_true_random=False))
def test_stores_into_separate_columns(r):
    n = r.choice([0, 1, 5])
    dtype = r.choice(FLOATS)
    columns = r.choice([2, 3, 3, 1])  # 1: the second column is out of range, the loop raises
    out_dtype = r.choice([dtype, "torch.int64", "torch.float64"])
    reach = min(columns + 1, 3) if r.random() < 0.2 else columns  # sometimes a column out of range
    written = r.sample(range(max(reach, 2)), min(r.choice([2, 2, 3]), max(reach, 2)))
    nested = r.random() < 0.25
    lines = [seed(r), f"x = {tensor(r, (n, 4), dtype)}"]
    if nested:
        lines += [f"out = torch.{r.choice(['zeros', 'ones'])}({n}, 2, {columns}, dtype={out_dtype})",
                  "for i in range(x.shape[0]):", "    for j in range(2):"]
        indent, slot = "        ", "i, j, {c}"
    else:
        lines += [f"out = torch.{r.choice(['zeros', 'ones'])}({n}, {columns}, dtype={out_dtype})",
                  "for i in range(x.shape[0]):"]
        indent, slot = "    ", r.choice(["i, {c}", "i][{c}"])
    conditioned = r.random() < 0.25
    if conditioned:
        lines.append(f"{indent}if x[i, 1] > 0:")
        indent += "    "
    for c in written:
        lines.append(f"{indent}out[{slot.format(c=c)}] = {r.choice(VALUES)}")
    counted("stores into separate columns", program(lines), tolerance=1e-4)


def test_the_heatmap_coordinates_are_rewritten():
    code = program(["def heatmaps_to_coords(heatmaps):", "    K, H, W = heatmaps.shape",
                    "    coords = torch.zeros(K, 2, dtype=torch.long)", "    for k in range(K):",
                    "        idx = heatmaps[k].argmax()", "        coords[k, 0] = idx % W", "        coords[k, 1] = idx // W",
                    "    return coords", "coords = heatmaps_to_coords(torch.randn(17, 48, 36))"])
    assert any(f.fixes for f in loop_findings(code)), [f.message for f in loop_findings(code)]
    counted("stores into separate columns", code, must_fix=True)


NEAR_MISSES = [
    # -1 is column 0 when there is one column
    ["x = torch.randn(5, 4)", "out = torch.zeros(5, 1)", "for i in range(5):", "    out[i, 0] = x[i].sum()",
     "    out[i, -1] = x[i].max()"],
    # positions that are not the same dim
    ["x = torch.randn(5, 4)", "out = torch.zeros(5, 5)", "for i in range(5):", "    out[i, 0] = x[i].sum()",
     "    out[0, i] = x[i].max()"],
    # the second store reads the first
    ["x = torch.randn(5, 4)", "out = torch.zeros(5, 2)", "for i in range(5):", "    out[i, 0] = x[i].sum()",
     "    out[i, 1] = out[i, 0] * 2"],
    # the same column twice (the last one wins)
    ["x = torch.randn(5, 4)", "out = torch.zeros(5, 2)", "for i in range(5):", "    out[i, 0] = x[i].sum()",
     "    out[i, 0] = x[i].max()"],
]


@pytest.mark.parametrize("lines", NEAR_MISSES, ids=[str(i) for i in range(len(NEAR_MISSES))])
def test_apart_near_misses_get_no_fix(lines):
    check_refused("near miss: stores into separate columns", program(lines))
    FORMS["near miss: stores into separate columns"] = STATS["near miss: stores into separate columns"]


# Wrong rewrites on main 505c71d that the generator above found (each raised where the loop did not), now refused or
# right: a condition of the outer loop only, used as a boolean index of the (N, M) slots; `masked_fill_` of a view
# that an int index narrows (its mask got a dim too many); an int index out of range in a loop that runs zero times.
FOUND = [
    ["x = torch.randn(3, 4)", "out = torch.zeros(3, 2, 2)", "for i in range(x.shape[0]):", "    for j in range(2):",
     "        if x[i, 1] > 0:", "            out[i, j, 0] = x[i].sum()"],
    ["x = torch.randn(3, 4)", "out = torch.zeros(3, 2, 2)", "for i in range(x.shape[0]):", "    for j in range(2):",
     "        if x[i, 1] > 0:", "            out[i, j, 0] = 3"],
    ["x = torch.randn(0, 4)", "out = torch.zeros(0, 2, 2)", "for i in range(x.shape[0]):", "    for j in range(2):",
     "        out[i, j, 2] = 3"],
]


@pytest.mark.parametrize("lines", FOUND, ids=[str(i) for i in range(len(FOUND))])
def test_conditional_and_literal_index_stores_found_wrong(lines):
    counted("near miss: found wrong on main", program(lines))


def test_zz_apart_report():
    if not FORMS:
        pytest.skip("run with the generating tests")
    for form, (programs, fixed) in sorted(FORMS.items()):
        print(f"{form:45s} {programs:6d} programs, {fixed:6d} rewritten and checked")
    for form, (programs, fixed) in FORMS.items():
        if not form.startswith("near miss"):
            assert fixed >= programs * 0.15, f"{form}: only {fixed} of {programs} generated loops were rewritten"
