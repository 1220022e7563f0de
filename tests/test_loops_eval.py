"""The loop development set (``tests/loops_eval/cases``) run with real torch.

For every case: the program runs; for a vectorizable case the hand-written vectorized program gives the
same results (values, dtype, shape, Python type); whatever fix torchwise offers is applied and must give
the same results as the loop (every shared variable, contiguity included), and a loop that must stay a
loop gets no fix at all. The rewrite rate is reported (a warning with the totals), not asserted: it is
what ``benchmarks/loop_eval.py`` measures, with timings.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("torch")

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "loop_eval.py"
_spec = importlib.util.spec_from_file_location("loop_eval", _PATH)
loop_eval = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("loop_eval", loop_eval)
_spec.loader.exec_module(loop_eval)

CASES = {case.name: case for case in loop_eval.load_cases()}
OUTCOMES: dict = {}


def outcome(name: str):
    if name not in OUTCOMES:
        OUTCOMES[name] = loop_eval.evaluate(CASES[name])
    return OUTCOMES[name]


def test_the_set_is_large_and_covers_both_kinds():
    kinds = [c.kind for c in CASES.values()]
    assert kinds.count("vectorizable") >= 60 and kinds.count("must-stay-loop") >= 15
    for article in ("article-dot-product-bias", "article-positive-filter", "article-image-normalization",
                    "article-cosine-similarity-fn", "article-comprehension-double", "article-stack-user-function",
                    "article-cat-accumulation"):
        assert article in CASES


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    case, out = CASES[name], outcome(name)
    assert not out.program_error, f"{case.path}: {out.program_error}"
    if case.kind == "vectorizable":
        assert out.expected_ok, f"{case.path}: the vectorized program disagrees: {out.expected_problems}"
    assert out.verdict != "crash", f"torchwise crashed on {case.path}:\n{out.problems[0]}"
    if case.kind == "must-stay-loop":
        assert out.verdict not in ("correct", "WRONG"), \
            f"a fix was offered for {case.path}, which must stay a loop ({case.why}):\n{out.fixed}"
    assert out.verdict != "WRONG", f"wrong rewrite of {case.path}: {out.problems}\n--- rewrite ---\n{out.fixed}"


def test_report_the_rewrite_rate():
    outcomes = [outcome(name) for name in sorted(CASES)]
    summary = loop_eval.totals(outcomes)
    v, s = summary["vectorizable"], summary["must-stay-loop"]
    line = (f"loop set: {v['correct']}/{v['cases']} vectorizable loops rewritten correctly "
            f"({100 * v['rewrite_rate']:.0f}%), {v['flagged']} flagged without a fix, {v['silent']} silent, "
            f"{v['WRONG']} wrong; must-stay loops: {s['fixed (WRONG)']} fixed, {s['flagged']} flagged, "
            f"{s['silent']} silent")
    print(line)
    warnings.warn(line, UserWarning)
