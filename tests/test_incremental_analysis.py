"""Incremental analysis gives exactly what a fresh analysis gives, for any edit.

The server hands each analysis the document's previous one: unchanged statements are
not parsed again and unchanged top-level functions and classes are not inferred again
(``Inference`` reuses a unit when everything it read from outside itself is unchanged).
Here random edits (hypothesis) to realistic files, made of statements chosen to move
exactly those dependencies (module constants, summaries, `self.` attributes, call sites,
imports, defaults, globals), must give the same findings and the same facts as analysing
the new text from scratch.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchwise.engine import Analysis, analyze

ROOT = Path(__file__).parent.parent
FILES = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests" / "corpus").glob("*.py"))
TEXTS = [p.read_text(encoding="utf-8") for p in FILES]
sys.path.insert(0, str(ROOT / "benchmarks"))
from gen_code import generate  # noqa: E402  (the benchmarks' model-code generator: many classes and functions)

FILES += [Path(f"generated_{seed}.py") for seed in (1, 2)]
TEXTS += [generate(250, seed) for seed in (1, 2)]

# Each snippet is inserted at a line, at the indentation found there (one level in when it is a header).
SNIPPETS = [
    "x = torch.randn(4, 3)\n",
    "y = x.transpose(0, 1).view(12)\n",
    "z = x + torch.ones(3, 4)\n",
    "HIDDEN = 7\n",
    "BATCH = 16\n",
    "scale = torch.tensor(2.0, dtype=torch.float64)\n",
    "return torch.zeros(2, 2)\n",
    "return x * 2\n",
    "self.extra = nn.Linear(3, 4)\n",
    "self.fc = nn.Linear(8, 2)\n",
    "torch = None\n",
    "import numpy as torch\n",
    "from torch import tensor as T\n",
    "torch.set_default_dtype(torch.float64)\n",
    "global HIDDEN\n",
    "helper(torch.ones(5), *args)\n",
    "def helper(t):\n    return t * 2\n",
    "out = helper(torch.ones(5, 2))\n",
    "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n",
    "model = Net()\n",
    "for i in range(10):\n    x = x * 2\n",
    "with torch.no_grad():\n    w = torch.zeros(3, requires_grad=True)\n",
    "v = x.t().view(12)\n",
    "q = x @ torch.ones(5, 2)\n",
    "e = x[7]\n",
    "m = x.cuda() + torch.ones(4, 3)\n",
    "k = x.long() @ torch.ones(3, 2)\n",
    "w = torch.zeros(3, requires_grad=True)\n",
    "w.add_(1)\n",
    "s = torch.sigmoid(w)\ns += 1\n",
    "x = torch.randn(HIDDEN, 3)\n",
    "x = helper(x)\n",
    "x = self.fc(x)\n",
    "pass\n",
    "",
]


def _indent_at(lines: list[str], at: int) -> str:
    for line in lines[at:]:
        if line.strip():
            return line[:len(line) - len(line.lstrip())]
    return ""


def edit(text: str, at: int, delete: int, snippet: str) -> str:
    lines = text.splitlines(keepends=True)
    at = min(at, len(lines))
    indent = _indent_at(lines, at)
    inserted = "".join(indent + line if line.strip() else line for line in snippet.splitlines(keepends=True))
    return "".join(lines[:at]) + inserted + "".join(lines[at + delete:])


_FRESH = re.compile(r"#(?:\w+\.)*\d+")  # fresh symbols (`n#12`, `n#m1.3`): equal up to renaming


def observed(analysis: Analysis):
    findings = [(f.code, f.span, _FRESH.sub("#", f.message), f.severity,
                 [_FRESH.sub("#", fix.title) for fix in f.fixes]) for f in analysis.findings]
    facts = None
    if analysis.facts is not None:
        facts = sorted((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, type(node).__name__,
                        _FRESH.sub("#", repr(value))) for node, value in analysis.facts.values.items()
                       if hasattr(node, "lineno"))
    return findings, facts


@settings(max_examples=150, deadline=None)
@given(which=st.integers(0, len(TEXTS) - 1),
       edits=st.lists(st.tuples(st.integers(0, 250), st.integers(0, 2), st.sampled_from(SNIPPETS)),
                      min_size=1, max_size=4))
def test_incremental_analysis_equals_fresh_analysis(which, edits):
    text = TEXTS[which]
    previous = analyze(text, FILES[which].name)
    for at, delete, snippet in edits:
        text = edit(text, at, delete, snippet)
        incremental = analyze(text, FILES[which].name, previous=previous)
        assert observed(incremental) == observed(analyze(text, FILES[which].name))
        if incremental.parse_error is None:
            previous = incremental


def test_an_edit_inside_one_function_reuses_the_others():
    text = (ROOT / "tests" / "corpus" / "gpt_train.py").read_text(encoding="utf-8")
    first = analyze(text, "gpt_train.py")
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("    def forward")) + 1
    changed = analyze(edit(text, at, 0, "probe = torch.zeros(2)\n"), "gpt_train.py", previous=first)
    facts = changed.facts
    # The edit is in CausalSelfAttention.forward: its class is parsed again (its units are new), and the units
    # whose calls ran that forward (Block.forward, GPT.forward, generate, main) read its code: they run again.
    # Everything else is reused.
    again = {getattr(unit, "name", "?") for unit in facts._units if unit not in facts._reused_units}
    kept = {f"{c.node.name}.{m}" for c in facts.classes.values() for m, info in c.method_infos.items()
            if info.node in facts._reused_units} | {f for f, info in facts.functions.items()
                                                   if info.node in facts._reused_units}
    assert {"MLP.forward", "get_batch"} <= kept
    assert again <= {"CausalSelfAttention", "forward", "generate", "main"}
    assert len(facts._reused_units) >= len(facts._units) // 2


# Module-level code that hands a function sizes nobody knows (a mask's count, a demo's tensors): both passes over
# the module make the same fresh symbols on every analysis, so an edit elsewhere leaves those functions reused.
_FRESH_SITES = (
    "import torch\n\n\ndef scaled(t):\n    return t * 2\n\n\ndef shown(t):\n    return t.sum(0)\n\n\n"
    "def other():\n    return 1\n\n\nx = torch.randn(8, 3)\nkept = x[x[:, 0] > 0]\ny = scaled(kept)\n"
    "z = torch.cat([kept, kept]).view(-1)\n\nif __name__ == \"__main__\":\n    shown(torch.randn(5, 2))\n")


def test_units_called_with_fresh_sizes_from_module_code_are_reused():
    first = analyze(_FRESH_SITES, "f.py")
    text = _FRESH_SITES.replace("    return 1\n", "    probe = torch.Tensor(2, 3)\n    return 1\n")
    changed = analyze(text, "f.py", previous=first)
    facts = changed.facts
    assert {facts.functions["scaled"].node, facts.functions["shown"].node} <= facts._reused_units
    assert facts.functions["other"].node not in facts._reused_units
    assert observed(changed) == observed(analyze(text, "f.py"))


# A review's adversarial cases (each was a difference before its fix): (first text, edited text).
_CALLS = "".join("    g(torch.zeros(3))\n" for _ in range(33))
REVIEWED = {
    # The defaults left by the last unit analysed leaked out of the units (the vectorizer reads them).
    "defaults-after-units": (
        "import torch\ntorch.set_default_dtype(torch.float64)\n\n\ndef f(x):\n    pass\n\n\nxs = torch.randn(5)\n"
        "out = torch.zeros(5)\nfor i in range(5):\n    out[i] = xs[i] * 2.0\n",
        "import torch\ntorch.set_default_dtype(torch.float64)\n\n\ndef f(x):\n    pass\n\n\nxs = torch.randn(5)  # c\n"
        "out = torch.zeros(5)\nfor i in range(5):\n    out[i] = xs[i] * 2.0\n"),
    # The grad mode of a @torch.no_grad() function leaked into the module's second pass.
    "grad-mode-after-units": (
        "import torch\nw = torch.zeros(3, requires_grad=True)\n\n\ndef h():\n    return 1\n\n\n"
        "@torch.no_grad()\ndef f():\n    pass\n\n\nw.add_(1)\n",
        "import torch\nw = torch.zeros(3, requires_grad=True)\n\n\ndef h():\n    return 2\n\n\n"
        "@torch.no_grad()\ndef f():\n    pass\n\n\nw.add_(1)\n"),
    # A unit analysed afresh had its calls recorded twice (the 64-call-site limit then differed).
    "call-sites-once": (
        "import torch\n\n\ndef c():\n" + _CALLS + "\n\ndef g(x):\n    return x.view(5)\n",
        "import torch\n\n\ndef c():\n" + _CALLS + "\n\ndef g(x):\n    y = 1\n    return x.view(5)\n"),
    # A comprehension's first iterable belongs to the enclosing scope (the cached qualified name depended
    # on who asked first).
    "comprehension-scope": (
        "import torch\n\n\ndef f():\n    return [torch for torch in torch.FloatTensor(3)]\n\n\nA = 1\n",
        "import torch\n\n\ndef f():\n    return [torch for torch in torch.FloatTensor(3)]\n\n\nA = 2\n"),
    # 0.0 == -0.0, but hover shows the sign.
    "signed-zero": (
        "import torch\nEPS = 0.0\n\n\ndef f():\n    e = EPS\n    return torch.zeros(2) + e\n",
        "import torch\nEPS = -0.0\n\n\ndef f():\n    e = EPS\n    return torch.zeros(2) + e\n"),
}


@pytest.mark.parametrize("name", sorted(REVIEWED))
def test_reviewed_cases(name):
    first, edited = REVIEWED[name]
    incremental = analyze(edited, "f.py", previous=analyze(first, "f.py"))
    assert observed(incremental) == observed(analyze(edited, "f.py"))


# Scale (issue 13): a reused unit's rules run from its plan (the pairs that always run, and the local rules
# that found something last time), a join keeps identical values as they are, and a loop renames only the
# names it gave loop symbols. Each must still give what a fresh analysis gives.
_VIEWING = "def viewed():\n    x = torch.randn(3, 4)\n    return x.t().view(12)\n"
SCALE_CASES = {
    # The TW301 in a reused unit moves down two lines: found again, at its new place.
    "local-finding-moves": ("import torch\n\n\ndef f():\n    return 1\n\n\n" + _VIEWING,
                            "import torch\n\n\ndef f():\n    a = 1\n    b = 2\n    return 1\n\n\n" + _VIEWING),
    # ...and goes away when its own function changes.
    "local-finding-fixed": ("import torch\n\n\n" + _VIEWING, "import torch\n\n\n" + _VIEWING.replace(".t()", "")),
    # A module-level loop whose tensor grows each pass, next to names it never touches.
    "module-loop-symbols": (
        "import torch\nA = 1\nB = torch.zeros(2)\nx = torch.zeros(1, 3)\nfor i in range(4):\n"
        "    x = torch.cat([x, x])\ny = x.view(-1, 3)\nz = y + B[:, None]\n\n\ndef f():\n    return x\n",
        "import torch\nA = 2\nB = torch.zeros(2)\nx = torch.zeros(1, 3)\nfor i in range(4):\n"
        "    x = torch.cat([x, x])\ny = x.view(-1, 3)\nz = y + B[:, None]\n\n\ndef f():\n    return x\n"),
    # A name bound on one path only, and one the same on both.
    "join-one-path": ("import torch\nt = torch.ones(2)\nif A:\n    u = torch.ones(3)\nv = t + u\n\n\ndef f():\n    pass\n",
                      "import torch\nt = torch.ones(2)\nif A:\n    u = torch.ones(3)\nv = t + u\n\n\ndef f():\n    y = 1\n"),
}


@pytest.mark.parametrize("name", sorted(SCALE_CASES))
def test_scale_cases(name):
    first, edited = SCALE_CASES[name]
    previous = analyze(first, "f.py")
    incremental = analyze(edited, "f.py", previous=previous)
    assert observed(incremental) == observed(analyze(edited, "f.py"))
    again = analyze(edited, "f.py", previous=incremental)  # a plan made by a reused unit is reused too
    assert observed(again) == observed(incremental)


def test_other_rules_after_a_settings_change_run_everywhere():
    from torchwise.config import RuleConfig
    text = "import torch\n\n\n" + _VIEWING
    first = analyze(text, "f.py", RuleConfig(select=("TW5",)))
    assert not first.findings
    edited = text + "\n\ndef g():\n    return 2\n"
    incremental = analyze(edited, "f.py", previous=first)
    assert [f.code for f in incremental.findings] == ["TW301"]
    assert observed(incremental) == observed(analyze(edited, "f.py"))


def test_a_module_name_bound_otherwise_drops_only_the_units_that_mention_it():
    text = "import torch\nDIM = 4\n\n\ndef f():\n    return torch.zeros(DIM)\n\n\ndef g():\n    return torch.ones(3)\n"
    first = analyze(text, "f.py")
    edited = text + "DIM = 5\nscratch = torch.Tensor(2, 3)\n"  # DIM is bound twice now (unknown in f), scratch new
    incremental = analyze(edited, "f.py", previous=first)
    assert {unit.name for unit in incremental.facts._reused_units} == {"g"}
    assert observed(incremental) == observed(analyze(edited, "f.py"))


def test_module_names_used_as_ints_hold_after_an_edit_elsewhere():
    # Each top-level statement's int uses are kept between analyses; the module's were filed under the tree they were
    # found in, so a reused statement's were lost: `n` was no longer an int after an edit of `f` (found by helper-21).
    text = "import torch\n\nn = unknown_fn()\nx = torch.zeros(n, 3)\ny = x.view(n * 3)\n\ndef f():\n    return 1\n"
    first = analyze(text, "m.py")
    changed = text.replace("return 1", "return 2")
    assert observed(analyze(changed, "m.py", previous=first)) == observed(analyze(changed, "m.py"))
