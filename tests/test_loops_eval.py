"""The loop development set (``tests/loops_eval/cases``) run with real torch.

For every case: the program runs; for a vectorizable case the hand-written vectorized program gives the
same results (values, dtype, shape, Python type); whatever fix torchwise offers is applied and must give
the same results as the loop (every shared variable, contiguity included), and a loop that must stay a
loop gets no fix at all. The rewrite rate is reported (a warning with the totals), not asserted: it is
what ``benchmarks/loop_eval.py`` measures, with timings.
"""

from __future__ import annotations

import importlib.util
import os
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


@pytest.mark.skipif(not os.environ.get("TORCHWISE_CORPUS") or not loop_eval.CORPUS_DIR.exists(),
                    reason="set TORCHWISE_CORPUS (the corpus, /work/shared/corpus, takes a minute to analyse)")
def test_corpus_census_verdicts_are_the_decided_ones():
    """On the real loops of the corpus torchwise does what the census decided for each (rewrite, flag with its
    one reason, or nothing), and every loop the finder proposes or torchwise flags is classified."""
    result = loop_eval.corpus_census(loop_eval.CORPUS_DIR, loop_eval.CENSUS_FILE)
    assert not result["crashes"], result["crashes"]
    differences = [f"{r['file']}:{r['line']}: decided {r.get('decision', 'silent')}, torchwise {r['torchwise']} "
                   f"({r['torchwise_message']})" for r in loop_eval.census_differences(result["rows"])]
    assert not differences, differences
    assert not [r for r in result["unreviewed"] if r["torchwise"] != "silent"], result["unreviewed"]
