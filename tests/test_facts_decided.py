"""Tests the facts decide: ``if x.ndim == 4:`` with x's rank known, ``if not return_hiddens: return x`` when every
call passes True. The code after such an ``if`` goes on from the branch taken only, and a ``return`` in the other
branch is not part of the function's result (vit-pytorch's VAT and VAAT: ``if video.ndim == 4: video =
rearrange(...)``; their transformers' ``return x`` vs ``return x, hiddens``).

Generated over ranks, comparisons (``==``, ``!=``, ``<``, ``>=``), the three ways to ask a rank (``x.ndim``,
``x.dim()``, ``len(x.shape)``) and ``and`` / ``or`` with a flag: each program runs for real under
``realmodels.recorder`` and every fact the engine states must hold (``realmodels.checking``); the names after the
``if`` must be known, with the rank torch gives.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).parent))
from realmodels.checked import checked, stores  # noqa: E402

from torchwise.analysis.values import TensorValue  # noqa: E402

RANK_TESTS = ("x.ndim {op} {k}", "x.dim() {op} {k}", "len(x.shape) {op} {k}")
OPS = ("==", "!=", "<", ">=")
JOINS = ("{test}", "{test} and flag", "not flag or {test}", "flag and not {test}")


def _case_source(name: str, parameter: str, rank: int, test: str) -> str:
    """A function whose ``after`` has rank ``rank + 1`` when ``test`` holds, else 0."""
    return f"""
def {name}({parameter}):
    x = torch.randn({", ".join(str(2 + i) for i in range(rank))})
    if {test}:
        y = x.unsqueeze(0)
    else:
        y = x.sum()
    after = y
    return after
"""


def _cases():
    """(function name, its source, the rank of ``after`` torch gives); ``flag`` is True in every call."""
    cases = []
    for number, (rank, k, form, op, join) in enumerate(itertools.product((1, 2, 3), (1, 2, 3), RANK_TESTS, OPS,
                                                                         JOINS)):
        test = join.format(test=form.format(op=op, k=k))
        name = f"case_{number}"
        source = _case_source(name, "flag", rank, test)
        x = torch.randn(*(2 + i for i in range(rank)))
        taken = eval(test, {"x": x, "flag": True})
        cases.append((name, source, rank + 1 if taken else 0))
    return cases


CASES = _cases()

RETURNS = """
class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, return_hiddens=False):
        hiddens = [x]
        x = self.proj(x)
        if not return_hiddens:
            return x
        return x, hiddens


class Head(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.encoder = Encoder(dim)

    def forward(self, video):
        if video.ndim == 4:
            video = video.unsqueeze(1)
        if video.ndim == 5:
            video = video.unsqueeze(3)
        frames = video.flatten(0, 3)
        out, hiddens = self.encoder(frames, return_hiddens=True)
        pooled = out.mean(dim=1)
        return pooled


def run():
    head = Head(8)
    head(torch.randn(2, 2, 3, 1, 4, 8))
    head(torch.randn(3, 2, 3, 1, 4, 8))
"""


def test_decided_rank_tests_agree_with_torch(tmp_path):
    source = "import torch\n" + "".join(s for _, s, _ in CASES) + "\n\ndef run():\n" + \
        "".join(f"    {name}(True)\n" for name, _, _ in CASES)
    analysis, checker = checked(source, tmp_path, "decided")
    facts = analysis.facts.values
    tree = analysis.source.tree
    for (name, _, rank), after in zip(CASES, stores(tree, "after")):
        fact = facts.get(after)
        assert isinstance(fact, TensorValue) and fact.shape is not None and len(fact.shape) == rank, \
            f"{name}: {fact}"
    assert checker.counts["ranks"] > len(CASES)


def test_untaken_return_is_not_the_result(tmp_path):
    analysis, _ = checked("import torch\nimport torch.nn as nn\n" + RETURNS, tmp_path, "returns")
    facts = analysis.facts.values
    for name, rank in (("frames", 3), ("out", 3), ("pooled", 2)):
        fact = facts.get(stores(analysis.source.tree, name)[0])
        assert isinstance(fact, TensorValue) and fact.shape is not None and len(fact.shape) == rank, \
            f"{name}: {fact}"


@pytest.mark.parametrize("test, decided", [("3 == 3", True), ("2 < 3 <= 3", True), ("2 < 3 < 3", False),
                                           ("'mean' == 'cls'", False), ("1 == 1.0", True), ("True == 1", True)])
def test_comparisons_of_constants_are_python_s(tmp_path, test, decided):
    analysis, _ = checked(f"import torch\n\ndef run():\n    t = {test}\n", tmp_path, "consts")
    fact = analysis.facts.values.get(stores(analysis.source.tree, "t")[0])
    assert fact.kind == "bool" and fact.value is eval(test) is decided


def _short_circuit_cases():
    """As ``_cases``, with an operand the engine knows nothing of after the rank test (``opts.flag``: Python does
    not evaluate it once the rank test stops the ``and`` / ``or``); the rank torch gives, or None where the
    unknown operand decides."""
    cases = []
    for number, (rank, k, op, join) in enumerate(itertools.product(
            (1, 2, 3), (1, 2, 3), OPS, ("{test} and not opts.flag", "not {test} or opts.flag", "{test} and opts.flag"))):
        test = join.format(test=f"x.ndim {op} {k}")
        first = eval(f"{rank} {op} {k}")
        stops = not first  # a False rank test stops the `and`; its `not`, True, stops the `or`
        name = f"short_{number}"
        source = _case_source(name, "opts", rank, test)
        cases.append((name, source, (0 if join.startswith("{test} and") else rank + 1) if stops else None))
    return cases


def test_a_rank_test_stops_an_and_or_an_or_whatever_comes_after_it(tmp_path):
    # `audio.ndim == 2 and not self.accept_spec` with a 3-d audio was undecided (the flag unknown), so the branch
    # that never runs was analysed with the 3-d facts: a false TW507 error in vit-pytorch's VAAT.
    cases = _short_circuit_cases()
    source = "import torch\nimport types\n" + "".join(s for _, s, _ in cases) + "\n\ndef run():\n" + \
        "    opts = types.SimpleNamespace(flag=True)\n" + "".join(f"    {name}(opts)\n" for name, _, _ in cases)
    analysis, checker = checked(source, tmp_path, "short")
    facts = analysis.facts.values
    decided = 0
    for (name, _, rank), after in zip(cases, stores(analysis.source.tree, "after")):
        if rank is None:
            continue
        decided += 1
        fact = facts.get(after)
        assert isinstance(fact, TensorValue) and fact.shape is not None and len(fact.shape) == rank, \
            f"{name}: {fact}"
    assert checker.counts["ranks"] > decided


DEAD_BRANCH = """
import torch
from torch import nn
from einops import rearrange


class Head(nn.Module):
    def __init__(self, accept_spec=False):
        super().__init__()
        self.accept_spec = accept_spec

    def forward(self, video, audio):
        if video.ndim == 4:
            video = rearrange(video, 'b 1 c h w')
        if video.ndim == 5:
            video = rearrange(video, 'b v c h w -> b v c 1 h w')
        if audio.ndim == 2 and not self.accept_spec:
            audio = rearrange(audio, 'b t -> b 1 t')
        return video.flatten(1).sum(1) + audio.flatten(1).sum(1)


head = Head()
out = head(torch.randn(2, 2, 3, 4, 8, 8), torch.randn(2, 1, 16))
"""


def test_no_shape_error_in_a_branch_the_facts_rule_out():
    # vit-pytorch's VAT / VAAT / VAT-SigLIP: `if video.ndim == 5: rearrange(video, 'b v c h w -> ...')` called with a
    # 6-d video was a TW507 error ("Received 6-dim tensor"); the branch never runs with these facts. A pattern that
    # is malformed whatever the input (no '->') is still one, dead branch or not.
    from torchwise.engine import analyze

    findings = analyze(DEAD_BRANCH, "dead.py").findings
    assert [(f.code, f.span.start.line + 1) for f in findings] == [("TW507", 14)], \
        [(f.code, f.span.start.line + 1, f.message) for f in findings]
    assert "malformed" in findings[0].message
