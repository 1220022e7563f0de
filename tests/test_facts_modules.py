"""Module patterns from real model code (vit-pytorch's XCiT, LayerScale wrappers, depthwise convs, helpers
mapped over q and k): each program is run with real torch and every module-level name the engine claims is
compared (``check_source`` of the facts truth suite), and the names listed must be *known* — these are the
facts whose absence left whole forward passes blank on the corpus."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from program_gen import HEADER  # noqa: E402
from test_facts_truth import Stats, check_source  # noqa: E402

from torchwise.analysis.values import TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

CASES = {
    # `self.fn = fn` wrapping a layer: the wrapper's call runs the wrapped layer (the call analysed while the
    # module's first pass ran, before the attributes were known, is analysed again).
    "layer-scale-wrapper": ("""
class LayerScale(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.scale = nn.Parameter(torch.full((dim,), 0.1))

    def forward(self, x, **kwargs):
        return self.fn(x, **kwargs) * self.scale

scale = LayerScale(64, nn.Linear(64, 32 * 2)).scale
y = LayerScale(64, nn.Linear(64, 32 * 2))(torch.randn(2, 5, 64))
""", ("scale", "y")),
    # A list of wrapped blocks walked by a loop, as in XCiT's transformer.
    "wrapped-blocks-in-a-loop": ("""
class LayerScale(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.scale = nn.Parameter(torch.full((dim,), 0.1))

    def forward(self, x):
        return self.fn(x) * self.scale

class Blocks(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([LayerScale(dim, nn.Linear(dim, dim)), LayerScale(dim, nn.GELU())]))

    def forward(self, x):
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return x

y = Blocks(16, 2)(torch.randn(3, 7, 16))
""", ("y",)),
    # Depthwise convolution: `groups = dim` with dim known only by name inside __init__.
    "depthwise-conv-symbolic-groups": ("""
class LocalMix(nn.Module):
    def __init__(self, dim, kernel_size = 3):
        super().__init__()
        padding = kernel_size // 2
        self.conv = nn.Conv2d(dim, dim, kernel_size, padding = padding, groups = dim)

    def forward(self, x):
        return self.conv(x)

y = LocalMix(8)(torch.randn(2, 8, 5, 5))
""", ("y",)),
    # `map` of a function of this file over a tuple of tensors.
    "map-of-a-helper": ("""
def l2norm(t):
    return F.normalize(t, dim = -1)

q, k = torch.randn(2, 4, 8), torch.randn(2, 4, 8)
qn, kn = map(l2norm, (q, k))
""", ("qn", "kn")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_pattern_is_known_and_true(name):
    body, must_know = CASES[name]
    source = HEADER + body
    problems = check_source(source, {}, Stats(), known_bugs=())
    assert not problems, "\n".join(map(str, problems))
    analysis = analyze(source, "case.py")
    known = {}
    for node in ast.walk(analysis.source.tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.col_offset == 0 \
                or isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in must_know:
            value = analysis.facts.values.get(node)
            if isinstance(value, TensorValue) and value.shape is not None and value.dtype is not None:
                known[node.id] = value
    missing = [n for n in must_know if n not in known]
    assert not missing, f"not known: {missing}"
