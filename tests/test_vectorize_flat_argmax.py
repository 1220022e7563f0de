"""``row.argmax()`` / ``row.argmin()`` of slices of two or more dims (issue 12): the index into the flattened slice,
which is the same op on the slices flattened (``x.flatten(1).argmax(dim=1)``): ties give the first index both ways,
NaN counts as the largest both ways. Generated programs (ranks 3-4, ties, NaN, ints, layouts, zero rows) are
checked against real torch; near-misses (keepdim, a dim given along a loop value, an empty slice) get no wrong fix.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_vectorize_forms import counter  # noqa: E402,I001
from test_vectorize_truth import FLOATS, INTS, MANY, program, seed, tensor  # noqa: E402

FORMS: dict = {}
counted = counter(FORMS)


@MANY
@given(st.randoms(use_true_random=False))
def test_argmax_of_a_whole_slice(r):
    n = r.choice([0, 1, 4])
    dtype = r.choice(FLOATS + INTS)
    shape = r.choice([(n, 3, 4), (n, 2, 2, 3), (n, 1, 5)])
    data = tensor(r, shape, dtype)
    if r.random() < 0.3:
        data = f"{data}.round()" if dtype in FLOATS else data  # ties
    if dtype in FLOATS and r.random() < 0.2:
        data = f"{data}.masked_fill(torch.rand({', '.join(map(str, shape))}) < 0.2, float('nan'))"
    if r.random() < 0.3 and len(shape) == 3:
        data = f"{tensor(r, (shape[0], shape[2], shape[1]), dtype)}.transpose(1, 2)"  # not row-major
    op = r.choice(["argmax", "argmin"])
    use = r.choice(["idx", "idx % {w}", "idx // {w}", "idx + 1"]).format(w=shape[-1])
    lines = [seed(r), f"h = {data}", f"out = torch.zeros({n}, dtype=torch.long)", "for k in range(h.shape[0]):",
             f"    idx = h[k].{op}()", f"    out[k] = {use}"]
    counted("argmax/argmin of a whole slice", program(lines))


NEAR_MISSES = [
    ["h = torch.randn(4, 3, 0)", "out = torch.zeros(4, dtype=torch.long)", "for k in range(4):",
     "    out[k] = h[k].argmax()"],  # an empty slice: the loop raises
    ["h = torch.randn(4, 3, 5)", "out = []", "for k in range(4):", "    out.append(h[k].argmax(dim=k % 2))"],
]


@pytest.mark.parametrize("lines", NEAR_MISSES, ids=[str(i) for i in range(len(NEAR_MISSES))])
def test_argmax_near_misses(lines):
    counted("near miss: argmax of a whole slice", program(lines))  # a fix, if any, must agree with the loop


def test_zz_flat_argmax_report():
    if not FORMS:
        pytest.skip("run with the generating tests")
    for form, (programs, fixed) in sorted(FORMS.items()):
        print(f"{form:45s} {programs:6d} programs, {fixed:6d} rewritten and checked")
    assert FORMS["argmax/argmin of a whole slice"][1] >= FORMS["argmax/argmin of a whole slice"][0] * 0.5
