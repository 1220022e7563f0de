"""NaViT's helpers (vit-pytorch na_vit*.py): ``next(self.parameters()).device`` in a ``device`` property,
``functools.partial`` of a torch function (``partial(torch.arange, device = device)``, ``partial(pad_sequence,
batch_first = True)``) and ``pad_sequence`` itself. Each program is run with real torch and every name the engine
claims is compared (``check_source`` of the facts truth suite, locals of methods too); the names listed must be
known tensors. Near misses (a positional argument in the partial, an in-place function, a batch_first not known,
sequences whose trailing sizes differ or whose ranks are not known, a receiver that is not a module) claim nothing
untrue, and the ones listed claim nothing at all."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from program_gen import HEADER  # noqa: E402
from test_facts_truth import Stats, check_source  # noqa: E402

from torchwise.analysis.dtypes import DType  # noqa: E402
from torchwise.analysis.values import DeviceValue, TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

CASES = {
    # na_vit.py's forward, cut down: the device property, both partials, padded sequences of patches.
    "navit-device-partials": ("""
from functools import partial
from torch.nn.utils.rnn import pad_sequence as orig_pad_sequence

class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(4, dim)

    @property
    def device(self):
        return next(self.parameters()).device

    def forward(self, sizes):
        device = self.device
        arange = partial(torch.arange, device = device)
        pad_sequence = partial(orig_pad_sequence, batch_first = True)
        ids = arange(5)
        grid = torch.stack(torch.meshgrid((arange(3), arange(2)), indexing = 'ij'), dim = -1)
        seqs = [torch.randn(3, 4, device = device), torch.randn(5, 4, device = device)]
        patches = pad_sequence(seqs)
        x = self.proj(patches)
        return x

out = Net(6)(None)
""", ("ids", "grid", "patches", "x")),
    "pad-sequence": ("""
from torch.nn.utils.rnn import pad_sequence
a = torch.randn(2, 3)
b = torch.randn(4, 3)
time_first = pad_sequence([a, b])
batch_first = pad_sequence((a, b), batch_first = True, padding_value = -1.)
ints = pad_sequence([torch.arange(3), torch.arange(5), torch.arange(1)], True)
left = pad_sequence([a, b], batch_first = True, padding_side = 'left')
same = pad_sequence([a, a.clone()])
grad = pad_sequence([torch.randn(2, 3, requires_grad = True), b])
rows = []
for i in range(4):
    rows.append(torch.randn(3, 2))
alike = pad_sequence(rows, batch_first = True)
""", ("time_first", "batch_first", "ints", "left", "same", "grad", "alike")),
    # Near miss, na_vit.py's grouping: per group of images, the patch sequences of each image concatenated and
    # appended; the items differ in length from pass to pass, and a list's items share one fact (a symbol stands
    # for one size): their padding claims nothing.
    "appended-per-group": ("""
from torch.nn.utils.rnn import pad_sequence
from einops import rearrange

class Patches(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(12, dim)

    def forward(self, groups):
        sequences = []
        lengths = []
        for images in groups:
            seqs = [rearrange(img, 'c (h p1) (w p2) -> (h w) (c p1 p2)', p1 = 2, p2 = 2) for img in images]
            joined = torch.cat(seqs, dim = 0)
            sequences.append(joined)
            lengths.append(joined.shape[0])
        first = sequences[0]
        patches = pad_sequence(sequences, batch_first = True)
        x = self.proj(patches)
        return x

out = Patches(8)([[torch.randn(3, 4, 4), torch.randn(3, 2, 4)], [torch.randn(3, 6, 2)]])
grown = []
for i in range(3):
    grown.append(torch.randn(i + 1, 2))
last = grown[-1]
padded = pad_sequence(grown)
""", ()),
    # Near misses: positional arguments in the partial (not followed, they would shift the call's), an in-place
    # init function, a flag not known, a list of several lengths appended in a loop (the longest is a size of
    # its own), sequences of a rank not known, `next()` of something that is not a module's parameters.
    "near-misses": ("""
from functools import partial
from torch.nn.utils.rnn import pad_sequence
three = partial(torch.arange, 3)
p = three(7)
fill = partial(nn.init.normal_, std = 0.02)
w = torch.empty(2, 3)
filled = fill(w)
flag = torch.randn(1).item() > 0
q = pad_sequence([torch.randn(2, 3), torch.randn(4, 3)], batch_first = flag)
varied = []
for n in (2, 5, 3):
    varied.append(torch.randn(n, 2))
r = pad_sequence(varied, batch_first = True)
first = next(iter([torch.randn(2)]))
class Plain:
    def parameters(self):
        return iter([torch.randn(3)])
s = next(Plain().parameters())
""", ()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_partial_and_pad_sequence_facts_are_true(name):
    body, must_know = CASES[name]
    source = HEADER + body
    problems = check_source(source, {}, Stats(), known_bugs=())
    assert not problems, "\n".join(map(str, problems))
    facts = _facts(source)
    missing = [n for n in must_know if not (isinstance(facts.get(n), TensorValue) and facts[n].shape is not None)]
    assert not missing, f"not known: {missing}"


def _facts(source: str) -> dict:
    analysis = analyze(source, "case.py")
    return {n.id: analysis.facts.values.get(n) for n in ast.walk(analysis.source.tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def test_the_shapes_are_the_padded_ones():
    facts = _facts(HEADER + CASES["pad-sequence"][0])
    assert facts["time_first"].shape == (4, 2, 3) and facts["batch_first"].shape == (2, 4, 3)
    assert facts["ints"].shape == (3, 5) and facts["ints"].dtype is DType.int64
    assert facts["same"].shape == (2, 2, 3) and facts["grad"].requires_grad is True
    assert facts["alike"].shape == (4, 3, 2)


def test_a_device_property_reads_a_parameter_and_the_partial_keeps_its_keywords():
    facts = _facts(HEADER + CASES["navit-device-partials"][0])
    assert isinstance(facts["device"], DeviceValue)
    assert facts["ids"].shape == (5,) and facts["ids"].dtype is DType.int64
    assert facts["grid"].shape == (3, 2, 2) and facts["x"].shape == (2, 5, 6)


def test_near_misses_claim_nothing():
    facts = _facts(HEADER + CASES["near-misses"][0])
    for name in ("p", "filled", "q", "first", "s"):
        assert facts.get(name) is None, (name, facts.get(name))
    assert facts["r"] is None or facts["r"].shape is None or not isinstance(facts["r"].shape[1], int)
    grouped = _facts(HEADER + CASES["appended-per-group"][0])
    for name in ("patches", "padded"):
        assert grouped.get(name) is None, (name, grouped.get(name))
