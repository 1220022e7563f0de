"""Blocks some layers lack, and ``if``s inside the loop over them, checked against the modules run for real.

- ``nn.ModuleList([Attention(dim), PEG(dim) if is_first else None, FeedForward(dim)])`` (vit-pytorch's ScalableViT,
  VAT, simple U-ViT): the middle item is a module or None; ``for attn, peg, ff in self.layers`` unpacks it, ``if
  exists(peg): x = peg(x)`` calls the module;
- an ``if`` inside a loop that changes a size on one path only: after it, the tensor keeps its rank, the size that
  differs a symbol of that pass (one size per iteration, not per call), renamed on leaving the loop.

Each program runs under ``realmodels.recorder`` on several inputs; ``realmodels.checking`` compares every fact the
engine states at every name that ran (ranks, sizes, symbols standing for one value per call or per iteration).
None may be wrong, and the names listed must be known as tensors of the given rank.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).parent))
from realmodels.checked import checked, stores  # noqa: E402

from torchwise.analysis.values import TensorValue  # noqa: E402

HEADER = "import torch\nimport torch.nn as nn\n\n\ndef exists(val):\n    return val is not None\n"

SOME_BLOCKS_LACK = HEADER + """

class PEG(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Conv1d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x):
        return self.proj(x.transpose(1, 2)).transpose(1, 2) + x


class Transformer(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList([])
        for ind in range(depth):
            is_first = ind == 0
            self.layers.append(nn.ModuleList([
                nn.Linear(dim, dim),
                PEG(dim) if is_first else None,
                nn.Linear(dim, dim),
            ]))

    def forward(self, x):
        for attn, peg, ff in self.layers:
            x = attn(x) + x
            if exists(peg):
                x = peg(x)
            x = ff(x) + x
        out = x
        return out


def run():
    for depth, shape in ((1, (2, 5, 8)), (3, (3, 4, 8))):
        Transformer(8, depth)(torch.randn(*shape))
"""

IF_IN_LOOP = HEADER + """

def grow(x, steps):
    for i in range(steps):
        before = x
        if i % 2 == 0:
            x = torch.cat([x, x], dim=1)
        else:
            x = x[:, :1]
        doubled = x * 2
    last = x
    return last


def run():
    grow(torch.randn(2, 3), 4)
    grow(torch.randn(3, 2), 3)
"""


def _rank(analysis, name: str, nth: int = 0):
    fact = analysis.facts.values.get(stores(analysis.source.tree, name)[nth])
    return len(fact.shape) if isinstance(fact, TensorValue) and fact.shape is not None else None


def test_a_block_some_layers_lack(tmp_path):
    analysis, checker = checked(SOME_BLOCKS_LACK, tmp_path, "blocks")
    assert [_rank(analysis, "x", n) for n in range(3)] == [3, 3, 3]
    assert _rank(analysis, "out") == 3
    assert checker.counts["ranks"] > 0


def test_an_if_inside_a_loop_keeps_the_rank(tmp_path):
    analysis, checker = checked(IF_IN_LOOP, tmp_path, "ifloop")
    for name, nth in (("x", 0), ("x", 1), ("doubled", 0), ("last", 0), ("before", 0)):
        assert _rank(analysis, name, nth) == 2, name
    assert checker.counts["ranks"] > 0


# simple_vit_attn_residual's Attention: `context` may be None; a rank trial must not decide `exists(context)` (the
# trial assumes it is a tensor of the rank tried) and then pin a rank on it through `self.norm_context(context)`.
MAYBE_CONTEXT = HEADER + """
from einops import rearrange


class Attention(nn.Module):
    def __init__(self, dim, cross_attend=False):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.norm_context = nn.LayerNorm(dim) if cross_attend else None
        self.to_kv = nn.Linear(dim, dim * 2)

    def forward(self, x, context=None):
        x = self.norm(x)
        if exists(context):
            context = self.norm_context(context)
        else:
            context = x
        k, v = self.to_kv(context).chunk(2, dim=-1)
        k = rearrange(k, 'b n (h d) -> b h n d', h=2)
        return k


class Wrap(nn.Module):
    def __init__(self, fn, dim):
        super().__init__()
        self.fn = fn
        self.attn = Attention(dim, cross_attend=True)

    def forward(self, x):
        return self.fn(x) + self.attn(x, context=x).sum()


def run():
    Wrap(Attention(8), 8)(torch.randn(2, 3, 8))
"""


def test_a_parameter_that_may_be_none_gets_no_rank_by_trial(tmp_path):
    pytest.importorskip("einops")
    checked(MAYBE_CONTEXT, tmp_path, "maybe_context")


# The same in an if-expression: `context if context is not None else x` (a pattern of vit-pytorch's attention).
MAYBE_CONTEXT_EXPRESSION = HEADER + """
from einops import rearrange


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.to_kv = nn.Linear(dim, dim * 2)

    def forward(self, x, context=None):
        kv_input = context if context is not None else x
        k, v = self.to_kv(kv_input).chunk(2, dim=-1)
        return rearrange(k, 'b n (h d) -> b h n d', h=2)


class Wrap(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def run():
    Wrap(Attention(8))(torch.randn(2, 3, 8))
"""


def test_a_parameter_that_may_be_none_in_an_if_expression(tmp_path):
    pytest.importorskip("einops")
    checked(MAYBE_CONTEXT_EXPRESSION, tmp_path, "maybe_context_expression")
