"""The rules on real code: the judged findings on ../shared/corpus stay what they were judged to be.

tests/rules_corpus/judged.json lists every finding torchwise gives on the corpus (six public PyTorch repositories),
each judged by reading the code. Here, on every file of the corpus:

- every finding judged true still fires (recall does not slip back);
- no rule checked here gives a finding that is not in the list (a new one must be judged and added), nor one
  judged a false alarm or noise;
- one pass of preferred fixes is final: fixing the fixed text again changes nothing (what `--fix` needs to reach a
  fixed point in one run, notebooks included, whose cells are fixed in one pass).

The corpus is read from $TORCHWISE_CORPUS, else <repo>/../shared/corpus; the test skips when it is absent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from torchwise.engine import analyze
from torchwise.fixing import apply_edits, preferred_edits

ROOT = Path(__file__).resolve().parents[1]
JUDGED = json.loads((Path(__file__).parent / "rules_corpus" / "judged.json").read_text(encoding="utf-8"))
CORPUS = Path(os.environ.get("TORCHWISE_CORPUS", ROOT.parent / "shared" / "corpus"))
# Every family but TW4xx (the vectorizer), which the corpus census of tests/test_loops_eval.py checks. TW5xx (shapes)
# is here since stop 26: four false TW507 errors came in unseen, in files no judged finding named.
CHECKED = ("TW1", "TW2", "TW3", "TW5", "TW6", "TW7")

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus at {CORPUS}")


def _checked(code: str) -> bool:
    return code.startswith(CHECKED)


def _judged() -> dict:
    return {(f["file"], f["line"], f["code"]): f for f in JUDGED["after"]["findings"] if _checked(f["code"])}


def _files() -> list:
    named = {f["file"] for part in ("before", "after") for f in JUDGED[part]["findings"]}
    return sorted(named)


@pytest.fixture(scope="module")
def found() -> dict:
    """(file, line, code) -> finding, for the checked rules on every file of the corpus."""
    result = {}
    for path in sorted(CORPUS.rglob("*.py")):
        name = path.relative_to(CORPUS).as_posix()
        text = path.read_text(encoding="utf-8")
        for finding in analyze(text, str(path)).findings:
            if _checked(finding.code):
                result[(name, finding.span.start.line + 1, finding.code)] = finding
    return result


def test_judged_true_findings_still_fire(found):
    missing = [key for key, judged in _judged().items() if judged["verdict"] == "true" and key not in found]
    assert not missing, f"judged true on the corpus, no longer found: {missing}"


def test_no_unjudged_or_unwanted_finding(found):
    judged = _judged()
    unjudged = [key for key in found if key not in judged]
    assert not unjudged, f"new findings on the corpus: judge them and add them to judged.json: {unjudged}"
    unwanted = [key for key in found if judged[key]["verdict"] != "true"]
    assert not unwanted, f"findings judged a false alarm or noise fire: {unwanted}"


def test_precision_of_the_checked_rules_is_at_least_95_percent():
    judged = list(_judged().values())
    true = sum(1 for f in judged if f["verdict"] == "true")
    assert judged and true / len(judged) >= 0.95
    assert not [f for f in judged if f["verdict"] == "false_alarm"]


@pytest.mark.parametrize("name", [n for n in _files() if n.endswith(".py")])
def test_one_pass_of_fixes_is_final(name):
    path = CORPUS / name
    text = path.read_text(encoding="utf-8")
    # --fix applies only preferred fixes (a move that changes a seeded script's draws is offered, not applied)
    first = [f for f in analyze(text, str(path)).findings if f.autofix and _checked(f.code)]
    fixed = apply_edits(text, preferred_edits(first))
    again = [(f.code, f.span.start.line + 1) for f in analyze(fixed, str(path)).findings
             if f.autofix and _checked(f.code)]
    assert not again, f"a second pass would fix more: {again}"
