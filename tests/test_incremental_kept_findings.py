"""Kept findings: what a rule found on a def or class whose code and facts did not change, and whose reach the edit
did not touch, is found again without running the rule, moved with the statement; its fixes are built, when asked
for, by running the rule on the current analysis (issue 13, "Scale": re-running the rules that fired was most of
the rules' share of an edit in a 200k-line file). Whatever the edit, the findings, their messages, spans and
severities, and every fix's edits must be exactly a fresh analysis's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from torchwise.engine import analyze

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(Path(__file__).parent))
from test_incremental_analysis import FILES, SNIPPETS, TEXTS, edit, observed  # noqa: E402
from test_incremental_module_rules import _MODULE, SNIPPETS as MODULE_SNIPPETS  # noqa: E402
from test_incremental_scale import REACH_NAMES, REACH_SNIPPETS, REACH_TEXTS  # noqa: E402


def with_edits(analysis):
    """``observed`` and every fix's edits (built now: the rule runs again on this analysis for a kept finding)."""
    return observed(analysis), [[fix.edits for fix in f.fixes] for f in analysis.findings]


def kept(analysis) -> list:
    """The findings that were found again, not found by running their rule."""
    return [f for f in analysis.findings if f.fixes and f.fixes[0]._build.__qualname__.startswith("_rebuild")]


@settings(max_examples=60, deadline=None)
@given(which=st.integers(0, len(TEXTS) - 1),
       edits=st.lists(st.tuples(st.integers(0, 250), st.integers(0, 2), st.sampled_from(SNIPPETS)),
                      min_size=1, max_size=4))
def test_kept_findings_equal_a_fresh_analysis(which, edits):
    text = TEXTS[which]
    previous = analyze(text, FILES[which].name)
    for at, delete, snippet in edits:
        text = edit(text, at, delete, snippet)
        incremental = analyze(text, FILES[which].name, previous=previous)
        assert with_edits(incremental) == with_edits(analyze(text, FILES[which].name))
        if incremental.parse_error is None:
            previous = incremental


@settings(max_examples=40, deadline=None)
@given(which=st.integers(0, len(REACH_TEXTS) - 1),
       edits=st.lists(st.tuples(st.integers(0, 900), st.integers(0, 2), st.sampled_from(REACH_SNIPPETS)),
                      min_size=1, max_size=4))
def test_kept_findings_of_rules_with_a_reach_equal_a_fresh_analysis(which, edits):
    text, name = REACH_TEXTS[which], REACH_NAMES[which]
    previous = analyze(text, name)
    for at, delete, snippet in edits:
        text = edit(text, at % (text.count("\n") + 1), delete, snippet)
        incremental = analyze(text, name, previous=previous)
        assert with_edits(incremental) == with_edits(analyze(text, name))
        if incremental.parse_error is None:
            previous = incremental


@settings(max_examples=40, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 20), st.integers(0, 1), st.sampled_from(MODULE_SNIPPETS)),
                      min_size=1, max_size=4),
       notebook=st.booleans())
def test_kept_findings_of_module_level_code_equal_a_fresh_analysis(edits, notebook):
    path = "m.ipynb" if notebook else "m.py"
    text = _MODULE
    previous = analyze(text, path)
    for at, delete, snippet in edits:
        text = edit(text, at, delete, snippet)
        incremental = analyze(text, path, previous=previous)
        assert with_edits(incremental) == with_edits(analyze(text, path))
        if incremental.parse_error is None:
            previous = incremental


_UNIT = '''
def load_{i}(path):
    return torch.load(path)


def move_{i}(n):
    x = torch.zeros(n, 3).cuda()
    return x.cpu()
'''


def test_an_edit_above_moves_the_kept_findings_and_their_fixes():
    text = "import torch\n" + "".join(_UNIT.format(i=i) for i in range(6))
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("def move_2")) + 1
    for new in (edit(text, at, 0, "probe = torch.zeros(2)\n"),  # inside move_2: the units below move a line
                edit(text, at, 1, "x = torch.ones(n, 3).cuda()\n"),  # the same count of lines
                edit(text, at, 0, "a = 1\nb = 2\nc = 3\n")):
        changed = analyze(new, "m.py", previous=analyze(text, "m.py"))  # (a last analysis serves one edit)
        assert with_edits(changed) == with_edits(analyze(new, "m.py"))
        again = kept(changed)
        # Every unit but move_2 keeps the loads' TW705 (with its fix). TW202 is found by its rule each time: its
        # fix's title reads the whole file (whether it ever checks CUDA).
        assert {f.code for f in again} == {"TW705"}
        assert all(f.span.start.line < at - 1 or f.span.start.line > at + 3 for f in again)
        loads = [f for f in changed.findings if f.code == "TW705"]
        assert len(again) >= len(loads) - 1


def test_a_fix_title_that_reads_the_whole_file_follows_an_edit_elsewhere():
    """Found by the scale suite in CI: TW202's fix says "falling back to the CPU without CUDA (this file never
    checks)" only while no line of the file checks CUDA; a kept finding kept the title after a check was added."""
    text = "import torch\n\n\ndef make():\n    return torch.zeros(3).cuda()\n\n\ndef other():\n    pass\n"
    first = analyze(text, "c.py")
    assert "never checks" in first.findings[0].fixes[0].title
    new = text.replace("    pass\n", "    return torch.cuda.is_available()\n")
    changed = analyze(new, "c.py", previous=first)
    assert with_edits(changed) == with_edits(analyze(new, "c.py"))
    assert "never checks" not in changed.findings[0].fixes[0].title


def test_a_finding_that_names_a_line_elsewhere_is_found_by_its_rule():
    # TW601's message names the line of each draw: an edit above the draw moves it, though the seeding's unit
    # stays as it was.
    text = ("import random\nimport torch\n\n\ndef seed():\n    torch.manual_seed(0)\n\n\n"
            "def draw():\n    return random.random()\n")
    first = analyze(text, "s.py")
    assert [f.code for f in first.findings] == ["TW601"]
    new = text.replace("def draw():\n", "def draw():\n    pass\n")
    changed = analyze(new, "s.py", previous=first)
    assert observed(changed) == observed(analyze(new, "s.py"))
    assert "line 11" in changed.findings[0].message
