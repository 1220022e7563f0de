"""Scale (issue 13): local rules at module level are asked again only where their answer may have changed.

A local rule that reads nothing of module-level code but the top-level statement holding the node (its code, its
facts, what its names are bound to: ``Rule.reads_around_at_module_level`` False) is not asked again about a
module-level statement of the last analysis whose facts are the same and none of whose names may mean something
else, where it found nothing last time: neither after an edit inside a def (module-level code kept), nor after an
edit of other module-level code (a notebook's cell edit). Each case below moves what such a statement's rules read,
and the incremental analysis must equal a fresh one; the two rules that do read around (TW305, TW306) must see an
edit of another statement or of a comment.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchwise.engine import analyze
from torchwise.findings import Severity
from torchwise.rules import ALL_RULES
from torchwise.rules.base import Rule

sys.path.insert(0, str(Path(__file__).parent))
from test_incremental_analysis import edit, observed  # noqa: E402  (one edit maker and comparison for all)


class _Asked(Rule):
    """A local rule reading only the call it is asked about: it notes where it is asked, and flags `flag(...)`."""

    code = "TW999"
    name = "asked"
    severity = Severity.INFO
    summary = why = "test probe"
    local = True

    def __init__(self):
        self.asked: list[int] = []

    def check(self, node, scope, ctx):
        self.asked.append(node.lineno)
        if isinstance(node.func, ast.Name) and node.func.id == "flag":
            yield self.finding(ctx, node, "flagged")


_PROBED = "a = f(1)\nb = flag(2)\nc = f(3)\n\n\ndef g():\n    return h(4)\n"


def _probe_edits(first: str, edited: str) -> tuple[list[int], list]:
    probe = _Asked()
    previous = analyze(first, "m.py", rules=(probe,))
    probe.asked.clear()
    incremental = analyze(edited, "m.py", rules=(probe,), previous=previous)
    fresh = analyze(edited, "m.py", rules=(_Asked(),))
    assert observed(incremental) == observed(fresh)
    return probe.asked, [(f.code, f.span.start.line) for f in incremental.findings]


def test_an_edit_inside_a_def_asks_a_local_rule_only_about_the_def():
    asked, found = _probe_edits(_PROBED, _PROBED.replace("h(4)", "h(5)"))
    assert asked == [7]  # the edited def (the finding on line 2 is found again without asking: kept findings)
    assert found == [("TW999", 1)]


def test_an_edit_of_other_module_code_asks_a_local_rule_only_about_the_new_statement():
    asked, found = _probe_edits(_PROBED, _PROBED + "d = f(0)\n")
    assert asked == [8]  # the new statement (the finding is found again without asking)
    assert found == [("TW999", 1)]


def test_a_statement_whose_facts_changed_is_asked_again():
    first = "x = 1\na = f(x)\nb = flag(2)\n"
    asked, found = _probe_edits(first, first.replace("x = 1", "x = 2.5"))
    assert asked == [2]  # `f(x)` reads x: its facts changed; b's finding is found again without asking
    assert found == [("TW999", 2)]


def test_a_statement_whose_names_mean_something_else_is_asked_again():
    first = "a = f(1)\nb = flag(2)\n\n\ndef h():\n    return 1\n"
    asked, _ = _probe_edits(first, first.replace("def h", "def f"))  # `f` in `a = f(1)` is this file's def now
    assert 1 in asked


# (first text, edited text): each edit moves what a reused module-level statement's rules read.
CASES = {
    # The operand's shape is made by an earlier statement: the sum's facts change, TW501 fires.
    "facts-from-an-earlier-statement": (
        "import torch\na = torch.randn(3, 4)\nb = torch.randn(4)\nc = a + b\n",
        "import torch\na = torch.randn(3, 4)\nb = torch.randn(3)\nc = a + b\n"),
    # ...and from a def's summary, edited inside the def.
    "facts-from-a-def": (
        "import torch\n\n\ndef make():\n    return torch.randn(4)\n\n\nc = torch.randn(3, 4) + make()\n",
        "import torch\n\n\ndef make():\n    return torch.randn(3)\n\n\nc = torch.randn(3, 4) + make()\n"),
    # A name made this file's def: `tensor` is no longer torch's.
    "a-name-bound-by-a-def": (
        "from torch import tensor\nimport torch\nt = torch.randn(3)\nx = tensor(t)\n\n\ndef tensor2(d):\n"
        "    return d\n",
        "from torch import tensor\nimport torch\nt = torch.randn(3)\nx = tensor(t)\n\n\ndef tensor(d):\n"
        "    return d\n"),
    # An import made inside a def (`global`): the module-level call is torch's now.
    "a-global-import-in-a-def": (
        "import torch\nT.set_default_dtype(torch.float64)\n\n\ndef setup():\n    pass\n",
        "import torch\nT.set_default_dtype(torch.float64)\n\n\ndef setup():\n    global T\n    import torch as T\n"),
    # TW305 reads the module-level statements after it: one that changes the array in place comes in.
    "shared-memory-changed-later": (
        "import numpy as np\nimport torch\narr = np.zeros(3)\nt = torch.from_numpy(arr)\nprint(t)\n",
        "import numpy as np\nimport torch\narr = np.zeros(3)\nt = torch.from_numpy(arr)\nprint(t)\narr[0] = 1.0\n"),
    # ...or goes.
    "shared-memory-change-gone": (
        "import numpy as np\nimport torch\narr = np.zeros(3)\nt = torch.from_numpy(arr)\narr[0] = 1.0\n",
        "import numpy as np\nimport torch\narr = np.zeros(3)\nt = torch.from_numpy(arr)\nprint(arr[0])\n"),
    # TW306 reads the comments after a bare expression: a cell marker makes it the cell's last (shown).
    "cell-marker-added": (
        "import torch\nx = torch.randn(3)\nx.float()\ny = 1\n",
        "import torch\nx = torch.randn(3)\nx.float()\n# %%\ny = 1\n"),
    "cell-marker-removed": (
        "import torch\nx = torch.randn(3)\nx.float()\n# %%\ny = 1\n# %%\nz = 2\n",
        "import torch\nx = torch.randn(3)\nx.float()\n# x\ny = 1\n# %%\nz = 2\n"),
    # A finding of a reused statement moves down: found again at its new place, with its fix.
    "finding-moves": (
        "import torch\nx = torch.randn(3, 4)\ny = x.t().view(12)\n\n\ndef f():\n    return 1\n",
        "import torch\nx = torch.randn(3, 4)\n# moved\ny = x.t().view(12)\n\n\ndef f():\n    return 1\n"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_level_cases(name):
    first, edited = CASES[name]
    incremental = analyze(edited, "f.py", previous=analyze(first, "f.py"))
    assert observed(incremental) == observed(analyze(edited, "f.py"))
    again = analyze(edited + "\n# end\n", "f.py", previous=incremental)  # the plans made on reuse hold too
    assert observed(again) == observed(analyze(edited + "\n# end\n", "f.py"))


def test_the_module_level_cases_find_something_on_one_side():
    # Each case is about a finding that comes or goes (or moves), else it would prove nothing.
    for name, (first, edited) in CASES.items():
        before = [(f.code, f.span.start.line) for f in analyze(first, "f.py").findings]
        after = [(f.code, f.span.start.line) for f in analyze(edited, "f.py").findings]
        assert before != after, name


def test_the_rules_that_read_around_at_module_level():
    assert {rule.code for rule in ALL_RULES if rule.local and rule.reads_around_at_module_level} == {"TW305", "TW306"}


# Module-level code, statement by statement (notebook-style), and snippets inserted at module level.
_MODULE = ("import torch\nimport numpy as np\nx = torch.randn(3, 4)\nh = torch.randn(4)\narr = np.zeros(3)\n"
           "t = torch.from_numpy(arr)\ny = x + h\nz = x.t().view(12)\nw = torch.zeros(3, requires_grad=True)\n"
           "x.float()\nq = x @ torch.ones(4, 2)\n\n\ndef f(v):\n    return v * 2\n\n\nk = f(h) + x\n")
SNIPPETS = [
    "h = torch.randn(3)\n",
    "x = torch.randn(4, 3)\n",
    "arr[0] = 1.0\n",
    "t.add_(1)\n",
    "w.add_(1)\n",
    "# %%\n",
    "# a comment\n",
    "def f(v):\n    return v.sum()\n",
    "def h():\n    return 1\n",
    "x = x.cuda()\n",
    "torch.set_default_dtype(torch.float64)\n",
    "from torch import tensor as T\n",
    "u = torch.tensor(x)\n",
    "pass\n",
    "",
]


@settings(max_examples=60, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 20), st.integers(0, 1), st.sampled_from(SNIPPETS)),
                      min_size=1, max_size=4),
       notebook=st.booleans())
def test_module_level_edits_equal_a_fresh_analysis(edits, notebook):
    path = "m.ipynb" if notebook else "m.py"
    text = _MODULE
    previous = analyze(text, path)
    for at, delete, snippet in edits:
        text = edit(text, at, delete, snippet)
        incremental = analyze(text, path, previous=previous)
        assert observed(incremental) == observed(analyze(text, path))
        if incremental.parse_error is None:
            previous = incremental
