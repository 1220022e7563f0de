"""``@property`` getters of this file's classes, ``nn.ParameterList``, ``functools.partial`` layers and
``ModuleList.insert`` (vit-pytorch's normalized_vit, wwt, max_vit_with_registers): each program is run with real
torch and every name the engine claims is compared (``check_source`` of the facts truth suite, locals of methods
too); the names listed must be *known*. Near misses (a setter of the same name, a Parameter that does not
require grad, an integer tensor, an insert index not known) must claim nothing untrue."""

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

_NORM_LINEAR = """
class NormLinear(nn.Module):
    def __init__(self, dim, dim_out):
        super().__init__()
        self.linear = nn.Linear(dim, dim_out, bias = False)

    @property
    def weight(self):
        return self.linear.weight

    def forward(self, x):
        return self.linear(x)
"""

CASES = {
    # normalized_vit's absolute positions: an embedding table read through a property of a wrapper.
    "property-weight": (_NORM_LINEAR + """
class M(nn.Module):
    def __init__(self, dim, n):
        super().__init__()
        self.abs_pos_emb = NormLinear(dim, n)

    def forward(self, x):
        seq_len = x.shape[-2]
        pos_emb = self.abs_pos_emb.weight[torch.arange(seq_len)]
        y = x + pos_emb
        return y

out = M(8, 5)(torch.randn(2, 5, 8))
out2 = M(6, 7)(torch.randn(3, 7, 6))
w = M(8, 5).abs_pos_emb.weight
""", ("pos_emb", "y", "out", "out2", "w")),
    # A property read in the class's own method, the getter computing from an argument's size.
    "property-on-self": ("""
class Scaled(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.g = nn.Parameter(torch.ones(1, dim))

    @property
    def gain(self):
        return self.g * 2

    def forward(self, x):
        h = x * self.gain
        return h

a = Scaled(4)(torch.randn(3, 4))
b = Scaled(4).gain
""", ("h", "a", "b")),
    # Near miss: a setter of the same name is the def the class keeps; what it stores differs from the getter's.
    "property-with-setter": ("""
class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self._w = torch.zeros(2, 3)

    @property
    def w(self):
        return self._w.t()

    @w.setter
    def w(self, value):
        self._w = value.double()

    def forward(self, x):
        before = self.w
        self.w = x
        after = self.w
        return before, after

before, after = Holder()(torch.randn(4, 5))
""", ()),
    # wwt's slots: a ParameterList from a comprehension, iterated (all alike) and indexed.
    "parameter-list-comprehension": ("""
class Slots(nn.Module):
    def __init__(self, n, dim, k):
        super().__init__()
        self.slots = nn.ParameterList([nn.Parameter(torch.randn(n, dim)) for _ in range(k)])

    def forward(self, x):
        outs = []
        for p in self.slots:
            s = x @ p.t()
            outs.append(s)
        first = self.slots[0]
        return torch.stack(outs)

y = Slots(4, 8, 3)(torch.randn(2, 8))
p0 = Slots(4, 8, 3).slots[1]
""", ("s", "first", "y", "p0")),
    # Items of different shapes, one by one; plain tensors are made Parameters (they then require grad).
    "parameter-list-items": ("""
class Mixed(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ps = nn.ParameterList([torch.randn(3, dim), nn.Parameter(torch.ones(dim, 2)),
                                    nn.Parameter(torch.zeros(5), requires_grad = False)])

    def forward(self, x):
        a, b, c = self.ps
        u = x @ a.t()
        v = x @ b
        return u, v, c

u, v, c = Mixed(4)(torch.randn(2, 4))
first = Mixed(6).ps[0]
last = Mixed(6).ps[-1]
n = len(Mixed(6).ps)
""", ("u", "v", "first", "last")),
    # normalized_vit's residual scales: a ParameterList of ParameterLists appended in a loop, zipped with
    # the layers and unpacked.
    "parameter-list-nested-appended": ("""
class Net(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList([])
        self.scales = nn.ParameterList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([nn.Linear(dim, dim), nn.Linear(dim, dim)]))
            self.scales.append(nn.ParameterList([nn.Parameter(torch.ones(dim) * 0.5),
                                                 nn.Parameter(torch.ones(dim) * 0.25)]))

    def forward(self, x):
        for (f, g), (alpha, beta) in zip(self.layers, self.scales):
            x = x.lerp(f(x), alpha)
            z = g(x) * beta
            x = x + z
        return x

out = Net(8, 2)(torch.randn(3, 8))
""", ("alpha", "beta", "z", "out")),
    # Near miss: an integer tensor cannot be made a Parameter (torch raises): nothing is claimed of it.
    "parameter-list-integer-raises": ("""
ok = nn.ParameterList([nn.Parameter(torch.randn(2))])
item = ok[0]
bad = nn.ParameterList([torch.arange(3)])
after = bad[0]
""", ("item",)),
    # wwt's layers: `partial(nn.LayerNorm, bias = False)` at module level, called in a Sequential and alone; a
    # keyword of the call wins over the partial's.
    "partial-layers": ("""
from functools import partial
LayerNormNoBias = partial(nn.LayerNorm, bias = False)
LinearNoBias = partial(nn.Linear, bias = False)

class Head(nn.Module):
    def __init__(self, dim, n):
        super().__init__()
        self.net = nn.Sequential(LayerNormNoBias(dim), LinearNoBias(dim, n))
        self.proj = LinearNoBias(n, 2, bias = True)

    def forward(self, x):
        y = self.net(x)
        z = self.proj(y)
        return z

w = LinearNoBias(3, 4).weight
bias = LinearNoBias(3, 4, bias = True).bias
out = Head(8, 5)(torch.randn(2, 8))
""", ("y", "z", "w", "bias")),
    # Near misses: a positional argument in the partial (not followed), a keyword the call gives again (the
    # call's wins), a partial of something that is not a layer, a keyword whose value is unknown.
    "partial-near-misses": ("""
from functools import partial
Three = partial(nn.Linear, 3)
a = Three(4)(torch.randn(2, 3))
Ln = partial(nn.LayerNorm, eps = 1e-3)
b = Ln(6, eps = 1e-2)(torch.randn(2, 6))
Sum = partial(torch.sum, dim = 0)
c = Sum(torch.randn(4, 5))
flag = torch.randn(1).item() > 0
Maybe = partial(nn.Linear, bias = flag)
d = Maybe(3, 2).bias
""", ()),
    # `ModuleList.insert(i, m)` puts m at i (it was put last: `layers[0]` had the wrong weight); an index past the
    # end puts it last, as torch does here.
    "module-list-insert": ("""
layers = nn.ModuleList([nn.Linear(4, 8), nn.Linear(8, 2)])
layers.insert(0, nn.Linear(3, 4))
first = layers[0].weight
second = layers[1].weight
last = layers[-1].weight
more = nn.ModuleList([nn.Linear(4, 8)])
more.insert(1, nn.Linear(8, 5))
end = more[1].weight
y = layers[2](layers[1](layers[0](torch.randn(2, 3))))
""", ("first", "second", "last", "end", "y")),
    # Near misses: an index not known, a negative one (torch raises KeyError).
    "module-list-insert-near-misses": ("""
k = int(torch.randint(0, 2, ()).item())
some = nn.ModuleList([nn.Linear(4, 8), nn.Linear(8, 2)])
some.insert(k, nn.Linear(3, 4))
w0 = some[0].weight
neg = nn.ModuleList([nn.Linear(4, 8), nn.Linear(8, 2)])
neg.insert(-1, nn.Linear(3, 4))
w1 = neg[0].weight
""", ()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_property_and_parameter_list_facts_are_known_and_true(name):
    body, must_know = CASES[name]
    source = HEADER + body
    problems = check_source(source, {}, Stats(), known_bugs=())
    assert not problems, "\n".join(map(str, problems))
    analysis = analyze(source, "case.py")
    known = {}
    for node in ast.walk(analysis.source.tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in must_know:
            value = analysis.facts.values.get(node)
            if isinstance(value, TensorValue) and value.shape is not None and value.dtype is not None:
                known[node.id] = value
    missing = [n for n in must_know if n not in known]
    assert not missing, f"not known: {missing}"


def test_a_parameter_list_item_that_may_not_require_grad_claims_no_grad():
    """``nn.Parameter(t, requires_grad=False)`` in the list keeps its flag, a plain tensor becomes a Parameter
    that requires grad: an item not known to require grad is claimed neither way."""
    analysis = analyze(HEADER + "ps = nn.ParameterList([torch.randn(3), nn.Parameter(torch.randn(2), False)])\n"
                                "a = ps[0]\nb = ps[1]\nc = nn.ParameterList([nn.Parameter(torch.randn(2))])[0]\n",
                       "case.py")
    facts = {n.id: analysis.facts.values.get(n) for n in ast.walk(analysis.source.tree)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assert facts["a"].requires_grad is None and facts["b"].requires_grad is None
    assert facts["c"].requires_grad is True and facts["c"].shape == (2,)
