"""Every TW4xx rewrite of the seed examples, run against its loop in the real worker (CPU torch).

A mismatch here is a vectorizer bug: the benchmark's own check (``torch.testing.assert_close``
on the outputs) is the oracle. The measured speedups are printed (``pytest -s``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchwise.bench.api import run_benchmark
from torchwise.bench.result import inline_text
from torchwise.engine import analyze
from torchwise.rules import ALL_RULES

pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "examples" / "vectorize_me.py"
pytestmark = pytest.mark.skipif(not any(r.code.startswith("TW4") for r in ALL_RULES),
                                reason="the TW4xx rules are not registered yet")


@pytest.fixture(scope="module")
def session():
    from torchwise.bench.session import BenchSession

    s = BenchSession(sys.executable, time_limit=120)
    yield s
    s.shutdown()


def _loops():
    text = SEED.read_text(encoding="utf-8")
    analysis = analyze(text, str(SEED))
    return text, analysis, [f for f in analysis.findings if f.code.startswith("TW4") and f.fixes]


def test_every_seed_rewrite_matches_its_loop(session):
    text, analysis, findings = _loops()
    assert {f.code for f in findings} >= {"TW401", "TW402", "TW403", "TW404", "TW405", "TW406", "TW407"}
    lines = []
    for finding in findings:
        result = run_benchmark(session, text, finding.span.start.line, device="cpu", budget_s=0.3,
                               analysis=analysis, threads=1)
        where = f"{finding.code} line {finding.span.start.line + 1}"
        assert result["ok"], f"{where}: {result['message']}"
        assert result["match"], f"{where}: {result['message']}"
        lines.append(f"{where}: {inline_text(result)}")
    print("\n" + "\n".join(lines))


def test_the_dot_product_loop_is_much_slower(session):
    text, analysis, findings = _loops()
    dot = next(f for f in findings if f.code == "TW401")
    result = run_benchmark(session, text, dot.span.start.line, device="cpu", analysis=analysis, threads=1)
    assert result["ok"] and result["match"], result["message"]
    assert result["speedup"] > 10, result


def test_every_rule_example_rewrite_matches_its_loop(session):
    """The TW4xx rules' own examples (``Invalid``), each benchmarked: prepared, run, compared."""
    checked = 0
    for rule in ALL_RULES:
        if not rule.code.startswith("TW4"):
            continue
        for example in rule.invalid:
            analysis = analyze(example.code)
            for finding in analysis.findings:
                if finding.code != rule.code or not finding.fixes:
                    continue
                result = run_benchmark(session, example.code, finding.span.start.line, device="cpu",
                                       budget_s=0.1, analysis=analysis, threads=1)
                assert result["ok"], f"{rule.code} {example.code!r}: {result['message']}"
                assert result["match"], f"{rule.code} {example.code!r}: {result['message']}"
                checked += 1
    assert checked >= 7
