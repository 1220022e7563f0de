"""A loop whose body writes a tensor at one slot and reads it at another (greedy matching's ``taken`` set): when
it is refused, its reason says the state is carried between iterations and that no vectorized form exists, not
the statement the translator happened to stop at (issue 12: fresh-stay-greedy-detection-matching read "a `for`
statement in the loop body", as if only the nested loop stood in the way). Never a fix.
"""

from __future__ import annotations

import pytest

from torchwise.engine import analyze

GREEDY_IN_FUNCTION = """import torch


def match(ious, scores, thr=0.5):
    order = scores.argsort(descending=True)
    taken = torch.zeros(ious.shape[1], dtype=torch.bool)
    tp = torch.zeros(len(scores))
    for d in order.tolist():
        best, best_g = thr, -1
        for g in range(ious.shape[1]):
            if taken[g]:
                continue
            if ious[d, g] >= best:
                best, best_g = ious[d, g], g
        if best_g >= 0:
            taken[best_g] = True
            tp[d] = 1.0
    return tp


tp = match(torch.rand(30, 8), torch.rand(30))
"""

GREEDY_MODULE = """import torch
cost = torch.rand(12, 5)
used = torch.zeros(5, dtype=torch.bool)
assign = torch.full((12,), -1)
for r in range(12):
    pick = -1
    for c in range(5):
        if not used[c] and cost[r, c] < 0.5:
            pick = c
    if pick >= 0:
        used[pick] = True
        assign[r] = pick
"""

CARRIED = {"greedy-in-function": (GREEDY_IN_FUNCTION, "taken"), "greedy-module": (GREEDY_MODULE, "used")}

# Nested loops whose body reads only the slot it writes: the carried-state reason must not be given.
NOT_CARRIED = {
    "same-slot": """import torch
x = torch.rand(6, 4)
out = torch.zeros(6)
for i in range(6):
    for j in range(4):
        out[i] = out[i] + x[i, j]
""",
}


def _loop_findings(code: str) -> list:
    return [f for f in analyze(code, "case.py").findings if f.code.startswith("TW40")]


@pytest.mark.parametrize("name", sorted(CARRIED))
def test_carried_state_is_named_and_never_fixed(name):
    code, tensor = CARRIED[name]
    for finding in _loop_findings(code):
        assert not finding.fixes, code
        if "no automatic rewrite" in finding.message and "for` statement" not in finding.message:
            assert f"`{tensor}` is written at one slot and read at another" in finding.message
            assert "no vectorized form" in finding.message


@pytest.mark.parametrize("name", sorted(CARRIED))
def test_the_outer_loop_gives_the_carried_reason(name):
    code, tensor = CARRIED[name]
    messages = [f.message for f in _loop_findings(code)]
    assert any(f"`{tensor}` is written at one slot and read at another" in m for m in messages), messages


@pytest.mark.parametrize("name", sorted(NOT_CARRIED))
def test_a_body_reading_only_its_own_slot_is_not_called_carried(name):
    for finding in _loop_findings(NOT_CARRIED[name]):
        assert "read at another" not in finding.message


def test_carried_tensor_helper():
    import ast

    from torchwise.vectorize.carried import carried_tensor

    body = ast.parse("if t[g]:\n    pass\nt[k] = True\n").body
    assert carried_tensor(body) == "t"
    assert carried_tensor(ast.parse("t[k] = t[k] + 1\n").body) is None
    assert carried_tensor(ast.parse("y = t[k]\n").body) is None
