"""Scale (issue 13): the passes over module code replay what a statement did last time (``analysis/modpass.py``).

Every statement is recorded here (``RECORD_AFTER_S`` below zero), so that every statement that can be replayed is:
after random edits of real files (the examples, the test corpus, the shared corpus, generated model code), the
findings and facts of the incremental analysis must equal a fresh analysis's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchwise.analysis import modpass
from torchwise.engine import analyze

sys.path.insert(0, str(Path(__file__).parent))
from test_incremental_analysis import FILES, SNIPPETS, TEXTS, edit, observed  # noqa: E402

SHARED = Path("/work/shared/corpus")
_SHARED_FILES = sorted(p for p in SHARED.rglob("*.py") if p.stat().st_size < 60_000)[:40] if SHARED.is_dir() else []
ALL_FILES = FILES + _SHARED_FILES
ALL_TEXTS = TEXTS + [p.read_text(encoding="utf-8", errors="replace") for p in _SHARED_FILES]

# Edits inside function bodies too: what changes the code a module-level call runs, or a summary.
MORE_SNIPPETS = SNIPPETS + [
    "x = x.view(-1)\n",
    "return None\n",
    "raise ValueError('no')\n",
    "print(x.shape)\n",
    "x.unsqueeze_(0)\n",
    "items.append(x)\n",
    "if __name__ == '__main__':\n    main()\n",
]


@pytest.fixture(autouse=True)
def record_every_statement(monkeypatch):
    monkeypatch.setattr(modpass, "RECORD_AFTER_S", -1.0)


@settings(max_examples=200, deadline=None)
@given(which=st.integers(0, len(ALL_TEXTS) - 1),
       edits=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 2), st.sampled_from(MORE_SNIPPETS)),
                      min_size=2, max_size=5))
def test_replayed_module_code_equals_fresh_analysis(which, edits):
    text = ALL_TEXTS[which]
    name = ALL_FILES[which].name
    previous = analyze(text, name)
    for at, delete, snippet in edits:
        text = edit(text, at, delete, snippet)
        incremental = analyze(text, name, previous=previous)
        assert observed(incremental) == observed(analyze(text, name))
        if incremental.parse_error is None:
            previous = incremental


def _replayed(before, after) -> int:
    return sum(id(r) in {id(o) for o in before.facts._passes[tag][1]}
               for tag in after.facts._passes for r in after.facts._passes[tag][1])


def test_an_edit_inside_one_function_replays_the_module_code():
    text = (Path(__file__).parent / "corpus" / "gpt_train.py").read_text(encoding="utf-8")
    first = analyze(text, "gpt_train.py")
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("    def forward")) + 1
    second = analyze("".join(lines[:at] + ["        y = torch.randn(3, 4)\n"] + lines[at:]), "gpt_train.py",
                     previous=first)
    third_text = "".join(lines[:at] + ["        y = torch.randn(3, 5)\n"] + lines[at:])
    third = analyze(third_text, "gpt_train.py", previous=second)
    assert _replayed(second, third) > 0
    assert observed(third) == observed(analyze(third_text, "gpt_train.py"))


def test_module_code_calling_an_edited_function_runs_again():
    text = ("import torch\n\ndef make(n):\n    return torch.zeros(n, 3)\n\n"
            "x = make(4)\ny = x.view(12)\nz = y + 1\n")
    first = analyze(text, "m.py")
    changed = text.replace("torch.zeros(n, 3)", "torch.zeros(n, 5)")
    second = analyze(changed, "m.py", previous=first)
    again = analyze(changed.replace("torch.zeros(n, 5)", "torch.zeros(n, 3)"), "m.py", previous=second)
    for analysis, source in ((second, changed), (again, text)):
        assert observed(analysis) == observed(analyze(source, "m.py"))
    assert [f.code for f in second.findings] == [f.code for f in analyze(changed, "m.py").findings]


def test_module_names_used_as_ints_hold_after_an_edit_elsewhere():
    # (Each top-level statement's int uses are kept between analyses; the module's were filed under the tree they
    # were found in, so a reused statement's were lost: `n` was no longer an int after an edit of `f`.)
    text = "import torch\n\nn = unknown_fn()\nx = torch.zeros(n, 3)\ny = x.view(n * 3)\n\ndef f():\n    return 1\n"
    first = analyze(text, "m.py")
    changed = text.replace("return 1", "return 2")
    assert observed(analyze(changed, "m.py", previous=first)) == observed(analyze(changed, "m.py"))


_MODULE_READING_AN_ATTRIBUTE = (
    "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.k = 3\n\n\nm = M()\nq = {use}\nr = torch.ones(4)\ns = r.view(2, 2)\nt = q\n")


@pytest.mark.parametrize("use", ["isinstance(m.k, int)", "m.k + 1"])
def test_a_statement_run_again_keeps_the_sync_only_when_it_did_the_same(use):
    # `q = ...` reads M's attributes, which the edit changes: it runs again. `isinstance(m.k, int)` binds q alike
    # (the same effects) while its own facts differ (m.k is 4 now): the statements after it are replayed, and its
    # facts must be the new ones. `m.k + 1` binds q otherwise: what comes after must run again (t = q).
    text = _MODULE_READING_AN_ATTRIBUTE.format(use=use)
    changed = text.replace("self.k = 3", "self.k = 4")
    first = analyze(text, "m.py")
    second = analyze(text, "m.py", previous=first)  # (the first analysis records nothing to replay)
    third = analyze(changed, "m.py", previous=second)
    assert observed(third) == observed(analyze(changed, "m.py"))
    assert _replayed(second, third) > 0


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the shared corpus")
def test_an_attribute_no_longer_used_as_an_int_is_seen_so_in_reused_functions():
    """``self.config.batch_size`` is an int-sized name while some code uses it as an int; an edit that breaks that
    use must reach functions reused from the last analysis (they kept ``is_int=True``: incremental != fresh)."""
    path = SHARED / "examples/distributed/minGPT-ddp/mingpt/trainer.py"
    text = path.read_text(encoding="utf-8")
    previous = analyze(text, path.name)
    for at, delete, snippet in [(0, 0, "x = torch.randn(4, 3)\n"), (23, 2, "x = torch.randn(4, 3)\n")]:
        text = edit(text, at, delete, snippet)
        incremental = analyze(text, path.name, previous=previous)
        assert observed(incremental) == observed(analyze(text, path.name))
        previous = incremental


@settings(max_examples=60, deadline=None)
@given(which=st.integers(0, len(ALL_TEXTS) - 1),
       edits=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 2), st.sampled_from(MORE_SNIPPETS)),
                      min_size=1, max_size=3))
def test_recorded_on_open_the_first_edit_equals_fresh_analysis(which, edits):
    """As the language server runs: compound module statements recorded on opening (the default threshold
    otherwise), replayed from the first edit on."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(modpass, "RECORD_AFTER_S", 0.0001)
        patch.setattr(modpass, "RECORD_ON_OPEN", True)
        text = ALL_TEXTS[which]
        name = ALL_FILES[which].name
        previous = analyze(text, name)
        for at, delete, snippet in edits:
            text = edit(text, at, delete, snippet)
            incremental = analyze(text, name, previous=previous)
            assert observed(incremental) == observed(analyze(text, name))
            if incremental.parse_error is None:
                previous = incremental


def test_the_first_edit_after_opening_replays_module_loops(monkeypatch):
    monkeypatch.setattr(modpass, "RECORD_AFTER_S", 0.0001)
    text = ("import torch\n\nlayers = []\nfor i in range(3):\n    layers.append(torch.nn.Linear(4, 4))\n\n"
            "if layers:\n    w = torch.zeros(2, 4)\n\ndef f(x):\n    y = x + 1\n    return y\n")
    changed = text.replace("    y = x + 1\n", "    y = x + 1\n    z = y * 2\n")
    for on, replays in ((False, False), (True, True)):
        monkeypatch.setattr(modpass, "RECORD_ON_OPEN", on)
        first = analyze(text, "m.py")
        second = analyze(changed, "m.py", previous=first)
        assert (_replayed(first, second) > 0) is replays
        assert observed(second) == observed(analyze(changed, "m.py"))
