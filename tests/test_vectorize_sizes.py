"""Sizes of the slices read in a loop body (issue 12): ``img.shape[1]``, ``row.shape[-1]``.

Every slice of a tensor has the same shape, so ``x[i].shape[k]`` is one known int on every iteration: it is read
as that int, products and sums of such sizes are folded exactly, and ``count += img.shape[1] * img.shape[2]``
(the same Python int added each time to a Python int) is that int times the number of iterations. Generated
programs are checked against real torch; near-misses (a list of tensors of different shapes, a float or tensor
start, a size that varies) get no fix.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_vectorize_forms import counter  # noqa: E402,I001
from test_vectorize_truth import FLOATS, MANY, STATS, check_refused, loop_findings, program, seed, tensor  # noqa: E402

FORMS: dict = {}  # this file's forms, reported by its own test_zz report
counted = counter(FORMS)

SIZES = ["{r}.shape[0]", "{r}.shape[1]", "{r}.shape[-1]", "{r}.shape[0] * {r}.shape[1]", "{r}.shape[-1] + {r}.shape[0]",
         "{r}.shape[1] - {r}.shape[0]"]


@MANY
@given(st.randoms(use_true_random=False))
def test_sizes_of_slices(r):
    n = r.choice([0, 1, 4])
    dtype = r.choice(FLOATS)
    shape = (n, r.choice([1, 3]), r.choice([2, 5]))
    walk, row = r.choice([("for img in x:", "img"), ("for i in range(x.shape[0]):", "x[i]"),
                          ("for i in range(len(x)):", "x[i]")])
    size = r.choice(SIZES).format(r=row)
    form = r.random()
    if form < 0.5:
        start = r.choice(["0", "0", "7"])
        op = r.choice(["+=", "-="]) if start != "0" else "+="
        body = [f"    count {op} {size}"]
        head = [seed(r), f"x = {tensor(r, shape, dtype)}", f"count = {start}"]
        if r.random() < 0.5:  # beside a tensor accumulation, as in channel statistics
            per_column = r.random() < 0.5
            head.append(f"total = torch.zeros({shape[2]})" if per_column else "total = torch.zeros(())")
            body.insert(r.randrange(2), f"    total += {row}.sum(dim=0)" if per_column else f"    total += {row}.sum()")
        lines = head + [walk] + body
    else:
        if walk.startswith("for img"):
            walk, row = "for i in range(x.shape[0]):", "x[i]"
            size = r.choice(SIZES).format(r=row)
        lines = [seed(r), f"x = {tensor(r, shape, dtype)}", f"out = torch.zeros({n})", walk,
                 f"    out[i] = {row}.sum() / ({size} + 10)"]
    counted("sizes of the slices (x[i].shape[k])", program(lines), tolerance=1e-4)


def test_the_channel_stats_loop_is_rewritten():
    code = program(["images = torch.rand(16, 3, 24, 24)", "psum = torch.zeros(3)", "psum_sq = torch.zeros(3)",
                    "count = 0", "for img in images:", "    psum += img.sum(dim=[1, 2])",
                    "    psum_sq += (img ** 2).sum(dim=[1, 2])", "    count += img.shape[1] * img.shape[2]",
                    "mean = psum / count", "std = torch.sqrt(psum_sq / count - mean ** 2)"])
    findings = [f for f in loop_findings(code) if f.fixes]
    assert findings, [f.message for f in loop_findings(code)]
    counted("sizes of the slices (x[i].shape[k])", code, must_fix=True)


NEAR_MISSES = [
    # a list of tensors of different shapes: the size varies
    ["xs = [torch.randn(k, 3) for k in (2, 5, 1)]", "count = 0", "for t in xs:", "    count += t.shape[0]"],
    # a float start: not the Python int sum proven here
    ["x = torch.randn(4, 3)", "count = 0.0", "for row in x:", "    count += row.shape[0]"],
    # a tensor start: adds in the tensor's dtype
    ["x = torch.randn(4, 3)", "count = torch.zeros((), dtype=torch.int8)", "for row in x:",
     "    count += row.shape[0] * 50"],
    # a size of a value that depends on the element (a ragged selection)
    ["x = torch.randn(4, 3)", "count = 0", "for row in x:", "    count += row[row > 0].shape[0]"],
    # a draw per element next to the count
    ["x = torch.randn(4, 3)", "count = 0", "s = torch.zeros(())", "for row in x:", "    count += row.shape[0]",
     "    s += torch.rand(())"],
]


@pytest.mark.parametrize("lines", NEAR_MISSES, ids=[str(i) for i in range(len(NEAR_MISSES))])
def test_size_near_misses_get_no_fix(lines):
    check_refused("near miss: sizes of the slices", program(lines))
    FORMS["near miss: sizes of the slices"] = STATS["near miss: sizes of the slices"]


def test_zz_sizes_report():
    if not FORMS:
        pytest.skip("run with the generating tests")
    for form, (programs, fixed) in sorted(FORMS.items()):
        print(f"{form:45s} {programs:6d} programs, {fixed:6d} rewritten and checked")
    for form, (programs, fixed) in FORMS.items():
        if not form.startswith("near miss"):
            assert fixed >= programs * 0.15, f"{form}: only {fixed} of {programs} generated loops were rewritten"
