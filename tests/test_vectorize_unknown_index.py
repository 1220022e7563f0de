"""An index of unknown origin into a tensor of known rank, in a per-element loop: flagged with the reason, never silent.

``hidden[b, idx[b]]`` in a function whose ``hidden`` is unpacked (``B, T, D = hidden.shape``) walks ``hidden``'s
rows whatever ``idx`` is; where nothing is known of ``idx`` (a function nobody in the file calls) no rewrite can
be proven, and the loop gets its TW40x finding, without a fix, naming the index. Called with a known index
tensor, the same loop is rewritten and checked against real torch. Near-misses (a random draw per row, an early
exit, a recurrence through the output) get no fix, the first two no finding at all.
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_vectorize_forms import counter  # noqa: E402,I001
from test_vectorize_truth import FLOATS, MANY, STATS, loop_findings, program, seed, tensor  # noqa: E402

FORMS: dict = {}  # this file's forms, reported by its own test_zz report
counted = counter(FORMS)

INDICES = ["{idx}[b]", "int({idx}[b])", "{idx}[b] - 1", "{idx}[b].item()"]
STORES = [
    # (rank of the data, the loop body with {i} the index expression, the output's allocation, the code)
    (3, ["    out[b] = x[b, {i}]"], "torch.zeros(B, D)", "TW401"),
    (3, ["    out[b] = x[b][{i}] * 2"], "torch.zeros(B, D)", "TW401"),
    (2, ["    out[b] = x[b, {i}]"], "torch.zeros(B)", "TW401"),
    (2, ["    out[b] = torch.relu(x[b, {i}] - 0.5)"], "torch.zeros(B)", "TW401"),
    (2, ["    out += x[b, {i}]"], "0.0", "TW405"),
]
NEAR_MISSES = [
    (["    if x[b].sum() > 1e9:", "        break", "    out[b] = x[b, {i}]"], True),  # an early exit
    (["    out[b] = x[b, {i}] * torch.rand(())"], True),  # a draw per row
    (["    out[b] = x[b, {i}] + out[b - 1]"], False),  # a recurrence through the output
]


def _function(rank: int, body: list, alloc: str, index: str) -> list:
    unpack = "B, T, D = x.shape" if rank == 3 else "B, T = x.shape"
    return ["def pick(x, idx):", f"    {unpack}", f"    out = {alloc}", "    for b in range(B):"] + \
        ["    " + line.format(i=index) for line in body] + ["    return out"]


@MANY
@given(st.randoms(use_true_random=False))
def test_unknown_index_into_a_known_tensor(r):
    """Not called: flagged with the index named, no fix. Called with an index tensor (some rows out of range: the
    loop raises, and so must the rewrite): the rewrite, if any, gives the loop's values."""
    index = r.choice(INDICES).format(idx="idx")
    near = r.random() < 0.25
    if near:
        body, silent = r.choice(NEAR_MISSES)
        rank, alloc, code = 3, "torch.zeros(B, D)", "TW401"
    else:
        rank, body, alloc, code = r.choice(STORES)
    lines = [seed(r)] + _function(rank, body, alloc, index)
    if r.random() < 0.5:
        n, t = r.choice([0, 1, 4]), r.choice([1, 5])
        shape = (n, t, 3) if rank == 3 else (n, t)
        high = t + (1 if r.random() < 0.2 else 0)  # now and then one index past the end
        lines += [f"x_arg = {tensor(r, shape, r.choice(FLOATS))}",
                  f"idx_arg = torch.randint({1 if '- 1' in index else 0}, {max(high, 1)}, ({n},))",
                  "result = pick(x_arg, idx_arg)"]
        if near:
            STATS.setdefault("near miss: unknown index", [0, 0])[0] += 1
            assert not any(f.fixes for f in loop_findings(program(lines))), program(lines)
            FORMS["near miss: unknown index"] = STATS["near miss: unknown index"]
            return
        counted("unknown index: called with known indices", program(lines))
        return
    found = loop_findings(program(lines))
    stats = STATS.setdefault("near miss: unknown index, flagged", [0, 0])
    stats[0] += 1
    FORMS["near miss: unknown index, flagged"] = stats
    assert not any(f.fixes for f in found), (program(lines), [f.message for f in found])
    if near and silent:
        assert not found, (program(lines), [f.message for f in found])
    elif not near:
        assert [f.code for f in found] == [code], (program(lines), [f.message for f in found])
        assert "the index `" in found[0].message and "`idx` is not a known tensor" in found[0].message, \
            found[0].message


OPERAND_READS = ["points[b] @ R[b]", "points[b] * R[b]", "torch.relu(points[b] - R[b])", "points[b] + R[b].sum()",
                 # near-misses: the unknown operand is not read per element (silent), or read along another loop dim
                 "points[b] @ R", "points[b] * R[0]"]


@MANY
@given(st.randoms(use_true_random=False))
def test_unknown_operand_read_per_element(r):
    """``rotated[b] = points[b] @ R[b]`` where nothing is known of ``R`` (``torch.linalg.qr(...).Q`` has no facts, a
    parameter no one passes): flagged with ``R`` named, no fix. Read whole or at a constant it stays silent (the loop
    may not be per element at all). With ``R`` known, the rewrite is checked against torch."""
    read = r.choice(OPERAND_READS)
    per_element = "R[b]" in read
    n, d = r.choice([0, 1, 3]), r.choice([1, 3])
    unknown = r.random() < 0.5
    lines = [seed(r), f"points = {tensor(r, (n, 4, d), 'torch.float32')}",
             "R = torch.linalg.qr(torch.randn(max(len(points), 1), 3, 3)).Q[:len(points), :d, :d]" if unknown else
             f"R = {tensor(r, (n, d, d), 'torch.float32')}",
             f"out = torch.zeros({n}, 4, d)".replace("d)", f"{d})"), "for b in range(points.shape[0]):",
             f"    out[b] = {read}"]
    if not unknown:
        counted("unknown operand: known, rewritten", program(lines), tolerance=1e-4)
        return
    found = loop_findings(program(lines))
    stats = STATS.setdefault("near miss: unknown operand, flagged or silent", [0, 0])
    stats[0] += 1
    FORMS["near miss: unknown operand, flagged or silent"] = stats
    assert not any(f.fixes for f in found), (program(lines), [f.message for f in found])
    if per_element:
        assert found and "`R` is not a known tensor" in found[0].message, (program(lines), [f.message for f in found])
    else:
        assert not found, (program(lines), [f.message for f in found])


def test_zz_unknown_index_report():
    print({form: FORMS[form] for form in FORMS if "unknown" in form})
