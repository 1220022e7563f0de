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

from torchwise.analysis.values import EitherValue, ScalarValue, TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402
from torchwise.explain import Explainer  # noqa: E402

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
    # jumbo_vit's loop: `enumerate(self.layers, start = 1)` (and `zip(..., strict=True)`) gives each block too.
    "blocks-enumerated-from-one": ("""
class Blocks(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList([])
        self.scales = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([nn.Linear(dim, dim), nn.GELU()]))
            self.scales.append(nn.LayerNorm(dim))

    def forward(self, x):
        for layer, (attn, ff) in enumerate(self.layers, start = 1):
            is_last = layer == len(self.layers)
            x = attn(x) + x
            x = ff(x) + x
        for i, (norm, (lin, act)) in enumerate(zip(self.scales, self.layers, strict = True), 1):
            x = norm(x)
            x = lin(x)
        return x

y = Blocks(16, 2)(torch.randn(3, 7, 16))
""", ("y", "x")),
    # A starred target takes what the others leave (`*_, h, w, dtype = *img.shape, img.dtype`, simple_vit_3d).
    "starred-unpacking": ("""
img = torch.randn(2, 3, 4, 5)
*_, h, w, dtype = *img.shape, img.dtype
b, *rest, last = img.shape
first, *others = (img, img[0], img[0, 0])
head, *none_left = [img]
pe = torch.zeros(h, w, last, dtype = dtype)
mid = torch.ones(*rest)
row = others[-1]
""", ("pe", "mid", "first", "row")),
    # A tensor attribute some instances lack (`nn.Parameter(...) if learned else None`), read under a guard.
    "tensor-or-none-attribute": ("""
from einops import rearrange

def exists(val):
    return val is not None

class Embed(nn.Module):
    def __init__(self, dim, learned, n = 7):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(n, dim)) if learned else None
        self.bias = None if not learned else torch.zeros(dim)
        self.lin = nn.Linear(dim, dim)
        self.learned = learned

    def forward(self, x):
        if self.learned:
            spread = rearrange(self.pos, 'n d -> n 1 d')
        if exists(self.pos):
            x = x + self.pos
        if self.bias is not None:
            x = x + self.bias
        if self.pos is None:
            return self.lin(x)
        pos = self.pos
        return self.lin(x) + pos.sum()

y = Embed(8, True)(torch.randn(2, 7, 8))
z = Embed(8, False)(torch.randn(3, 5, 8))
""", ("y", "x", "pos", "spread")),  # (z: the code after the decided `return` still adds its return, None.sum(): unknown)
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
    # `default(context, x)` where the facts know context is None: the helper's test is decided.
    "default-helper": ("""
def exists(val):
    return val is not None

def default(val, d):
    return val if exists(val) else d

x = torch.randn(2, 3)
a = default(None, x)
b = default(x, None)
""", ("a", "b")),
    # A module also built inside a wrapper is called where the analysis cannot see (`self.fn(x, context=c)`):
    # the direct call's `context=None` must not become what `context` is inside (cross_vit's Attention).
    "escaped-module-keeps-its-parameters-unknown": ("""
def default(val, d):
    return val if val is not None else d

class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.to_kv = nn.Linear(dim, dim)

    def forward(self, x, context = None):
        context = default(context, x)
        kv = self.to_kv(context)
        return kv

class Wrap(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, context):
        return self.fn(x, context = context)

class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn = Attention(dim)
        self.cross = Wrap(Attention(dim))

    def forward(self, x, other):
        y = self.attn(x)
        z = self.cross(x, other)
        return y, z

y, z = Net(8)(torch.randn(2, 1, 8), torch.randn(2, 5, 8))
""", ("y", "z")),
    # The builtin `sum` of a list of tensors: 0 + t1 + t2, broadcast, and a bool sum is int64.
    "builtin-sum-of-tensors": ("""
a, b = torch.randn(2, 3), torch.randn(3)
s = sum([a, b])
t = sum([torch.ones(2, dtype=torch.bool), torch.ones(2, dtype=torch.bool)])
""", ("s", "t")),
    # vit-pytorch's PatchDropout: topk of a size known only at run time, its `.indices`, two index tensors that
    # broadcast, and a forward whose two returns differ in one size (the rank stays).
    "patch-dropout": ("""
class PatchDropout(nn.Module):
    def __init__(self, prob):
        super().__init__()
        self.prob = prob

    def forward(self, x):
        if not self.training or self.prob == 0.:
            return x
        b, n, _, device = *x.shape, x.device
        batch_indices = torch.arange(b, device=device)[:, None]
        num_patches_keep = max(1, int(n * (1 - self.prob)))
        patch_indices_keep = torch.randn(b, n, device=device).topk(num_patches_keep, dim=-1).indices
        return x[batch_indices, patch_indices_keep]

y = PatchDropout(0.5)(torch.randn(2, 10, 8))
top = torch.randn(4, 6).topk(3)
values, indices = top.values, top[1]
picked = torch.randn(4, 5, 6)[[0, 2], :, torch.tensor([1, 3])]
""", ("y", "values", "indices", "picked")),
    # A pitfall of vit-pytorch's PiT: the depthwise conv of a module built with `kernel_size=3` (an int or a tuple
    # to the class itself, so no weights there): the instance's own arguments build it again.
    "layers-built-with-the-instance-settings": ("""
class DepthWiseConv2d(nn.Module):
    def __init__(self, dim_in, dim_out, kernel_size, padding, stride, bias=True):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(dim_in, dim_out, kernel_size=kernel_size, padding=padding, groups=dim_in, stride=stride,
                      bias=bias),
            nn.Conv2d(dim_out, dim_out, kernel_size=1, bias=bias))

    def forward(self, x):
        return self.net(x)

y = DepthWiseConv2d(8, 16, kernel_size=3, stride=2, padding=1)(torch.randn(2, 8, 5, 5))
""", ("y",)),
    # `x += self.pos_embedding[:, :(n + 1)]` whose operand is partly known: in place, x keeps its facts; a factory
    # with a size not known keeps its rank.
    "in-place-add-of-a-partly-known-operand": ("""
def run(x, count):
    pos = torch.randn(1, count + 1, 8)
    x += pos[:, :3]
    return x

y = run(torch.randn(2, 3, 8), 5)
z = torch.zeros(2, int(torch.randint(1, 4, ()).item()), 4)
""", ("y", "z")),
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


def test_an_escaped_module_claims_nothing_from_its_visible_calls():
    """Inside ``Attention.forward`` above, ``kv`` is ``(2, 1, 8)`` for the direct call and ``(2, 5, 8)`` for the
    wrapped one (run it: both happen). Taking the direct call as the only one would claim ``(2, 1, 8)``."""
    body, _ = CASES["escaped-module-keeps-its-parameters-unknown"]
    source = HEADER + body
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)  # the program runs: both calls are legal
    analysis = analyze(source, "case.py")
    claims = [analysis.facts.values.get(node) for node in ast.walk(analysis.source.tree)
              if isinstance(node, ast.Name) and node.id == "kv" and isinstance(node.ctx, ast.Store)]
    for claim in claims:
        shape = getattr(claim, "shape", None)
        assert shape is None or not isinstance(shape[1], int), f"kv claimed {shape}, but it is also (2, 5, 8)"


# -- `self` in a module's own methods, from the constructions the file shows ---------------------------------------
SELF_CASES = {
    # Built once, with concrete sizes: inside forward every size is concrete (and a misfit is an error).
    "built-once": ("""
class Attn(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.pos = nn.Parameter(torch.zeros(1, 5, n_embd))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x + self.pos).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = q @ k.transpose(-2, -1)
        return att

out = Attn(64, 4)(torch.randn(2, 5, 64))
""", {"q": (2, 4, 5, 16), "att": (2, 4, 5, 5)}),
    # Two constructions that differ: `self` is the class's own (sizes by name), never one instance's numbers.
    "built-twice-differently": ("""
class Proj(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 2 * d)

    def forward(self, x):
        y = self.fc(x)
        return y

a = Proj(4)(torch.randn(3, 4))
b = Proj(6)(torch.randn(3, 6))
""", {}),
    # Built inside a function: not followed, so nothing about the instance is assumed.
    "built-in-a-function": ("""
class Proj(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 2 * d)

    def forward(self, x):
        y = self.fc(x)
        return y

def make(d):
    return Proj(d)

a = make(4)(torch.randn(3, 4))
b = Proj(4)(torch.randn(3, 4))
""", {}),
}


def _forward_locals(source: str) -> dict:
    """Every shape each name of a ``forward`` takes at runtime: {name: {shapes}}."""
    import torch
    seen: dict = {}

    def tracer(frame, event, arg):
        if frame.f_code.co_name != "forward":
            return None

        def lines(frame, event, arg):
            for name, value in frame.f_locals.items():
                if isinstance(value, torch.Tensor):
                    seen.setdefault(name, set()).add(tuple(value.shape))
            return lines
        return lines
    sys.settrace(tracer)
    try:
        exec(compile(source, "case.py", "exec"), {})
    finally:
        sys.settrace(None)
    return seen


@pytest.mark.parametrize("name", sorted(SELF_CASES))
def test_self_from_constructions_is_true(name):
    body, expected = SELF_CASES[name]
    source = HEADER + body
    runtime = _forward_locals(source)
    analysis = analyze(source, "case.py")
    claims: dict = {}
    for node in ast.walk(analysis.source.tree):
        if isinstance(node, ast.FunctionDef) and node.name == "forward":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    value = analysis.facts.values.get(sub)
                    shape = getattr(value, "shape", None)
                    if shape is not None and all(isinstance(d, int) for d in shape):
                        claims.setdefault(sub.id, set()).add(tuple(shape))
    for variable, shapes in claims.items():  # a concrete claim holds for every runtime value of the name
        assert runtime.get(variable, set()) <= shapes, f"{variable}: engine {shapes}, runtime {runtime.get(variable)}"
    for variable, shape in expected.items():
        assert shape in claims.get(variable, set()), f"{variable}: expected {shape}, engine {claims.get(variable)}"
    if not expected:
        assert not claims.get("y"), f"one instance's sizes claimed for all: {claims.get('y')}"


def _facts_of(source: str) -> dict:
    analysis = analyze(HEADER + source, "case.py")
    return {node.id: analysis.facts.values.get(node) for node in ast.walk(analysis.source.tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def test_a_move_to_a_device_not_known_claims_no_device():
    """``x.to(device)`` of a parameter may move x anywhere (or cast it): no device, no dtype claimed; the shape
    stays. (A CPU run cannot show the difference, so it is checked here.)"""
    facts = _facts_of("def f(x, device, other):\n    a = torch.randn(2, 3).to(device)\n"
                      "    b = torch.randn(2, 3).to(other.device, dtype=torch.float16)\n"
                      "    c = torch.randn(2, 3).to(device=device)\n    return a\n")
    assert (facts["a"].shape, facts["a"].device, facts["a"].dtype) == ((2, 3), None, None)
    assert (facts["b"].device, facts["b"].dtype.short) == (None, "float16")  # dtype= given: that one
    assert (facts["c"].device, facts["c"].dtype.short) == (None, "float32")


def test_a_demo_call_gives_ranks_only():
    """Under ``if __name__ == "__main__":`` a model's call is a demo: importers pass other sizes, dtypes and
    devices, so the forward learns the rank of its input and nothing else."""
    facts = _facts_of("""
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = self.fc(x)
        return y

if __name__ == "__main__":
    out = Net()(torch.randn(2, 5, 8))
""")
    y = facts["y"]
    assert isinstance(y, TensorValue) and len(y.shape) == 3 and y.shape[-1] == 4
    assert all(not isinstance(d, int) for d in y.shape[:2])  # the demo's 2 and 5 are not every call's
    assert y.dtype.short == "float32"  # from the layer's weights: an input of another dtype raises


def test_a_layer_converted_in_place_through_self_has_its_new_dtype():
    """``self.fc.double()`` in ``__init__`` converts the layer in place: ``forward`` sees float64 weights (it saw
    the float32 ones). A layer reached deeper (``self.seq[0].double()``) changes what holds it: forgotten."""
    analysis = analyze(HEADER + "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                       "        self.fc = nn.Linear(8, 2)\n        self.fc.double()\n"
                       "        self.seq = nn.Sequential(nn.Linear(8, 2))\n        self.seq[0].double()\n\n"
                       "    def forward(self, x):\n        a = self.fc\n        b = self.seq\n        return a(x)\n",
                       "case.py")
    facts = {node.id: analysis.facts.values.get(node) for node in ast.walk(analysis.source.tree)
             if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    assert facts["a"].param("weight").dtype.short == "float64"
    seq = facts.get("b")
    assert seq is None or seq.children is None or seq.children[0].param("weight").dtype.short != "float32"


def test_a_modules_own_tensors_have_no_device_in_its_methods():
    """``m.cuda()`` / ``model.to(device)`` (here or by an importer) moves a module's parameters and buffers after
    ``__init__``: in ``forward`` their device is not known, and ``x * self.scale`` with ``x`` on CUDA is no device
    clash (TW204 said "cuda and cpu")."""
    source = ("class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.scale = nn.Parameter(torch.ones(8))\n        self.fc = nn.Linear(8, 8)\n"
              "        here = self.scale\n\n"
              "    def forward(self, x):\n        y = x * self.scale\n        w = self.fc.weight\n        return y\n\n\n"
              "m = M()\nm.cuda()\nout = m(torch.randn(4, 8, device='cuda'))\n")
    analysis = analyze(HEADER + source, "case.py")
    assert "TW204" not in [f.code for f in analysis.findings]
    facts = {node.id: analysis.facts.values.get(node) for node in ast.walk(analysis.source.tree)
             if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    assert facts["here"].device == "cpu"  # in __init__, where it was made
    assert facts["w"].device is None and facts["w"].shape == (8, 8)


def test_a_tensor_or_none_attribute_is_a_tensor_only_where_a_guard_says():
    """``self.pos`` is ``Tensor or None``: hover says so; under ``if exists(self.pos)`` (or after ``if self.pos is
    None: return``) it is the tensor; unguarded, or where the guard says None, no op gets a tensor from it."""
    body, _ = CASES["tensor-or-none-attribute"]
    source = HEADER + body
    analysis = analyze(source, "case.py")
    reads = sorted((n for n in ast.walk(analysis.source.tree)
                    if isinstance(n, ast.Attribute) and n.attr == "pos" and isinstance(n.ctx, ast.Load)),
                   key=lambda n: (n.lineno, n.col_offset))
    facts = [analysis.facts.values.get(n) for n in reads]
    # rearrange(self.pos, ...) | exists(self.pos) | x + self.pos | self.pos is None | pos = self.pos
    assert isinstance(facts[0], EitherValue) and not isinstance(facts[1], TensorValue)
    assert isinstance(facts[2], TensorValue) and not isinstance(facts[3], TensorValue)
    assert isinstance(facts[4], TensorValue)
    # einops raises on None: a rearrange of the attribute that returns had the tensor, guard or not
    einops_call = next(n for n in ast.walk(analysis.source.tree) if isinstance(n, ast.Call)
                       and getattr(n.func, "id", None) == "rearrange")
    assert analysis.facts.values.get(einops_call).shape[1] == 1
    explainer = Explainer(analysis.source, analysis.facts)
    start = analysis.source.span(reads[1]).start
    hover = explainer.hover(start)
    assert hover is not None and hover[0].endswith("or `None`"), hover


def test_a_layer_some_blocks_lack_claims_no_device():
    """``nn.Linear(...) if latter_half else None`` in a ModuleList (simple_uvit): like every layer of a module, it
    may have been moved (``model.to("cuda")``) since ``__init__``, so its output's device is not known; before, the
    None option hid its weights from that rule and the output was claimed on the cpu."""
    source = HEADER + """
class Blocks(nn.Module):
    def __init__(self, dim, skip):
        super().__init__()
        self.layers = nn.ModuleList([nn.ModuleList([nn.Linear(dim, dim) if skip else None, nn.Linear(dim, dim)])])

    def forward(self, x):
        b, d = x.shape  # (a tensor of rank 2, on a device nothing tells)
        for maybe, lin in self.layers:
            if maybe is not None:
                x = maybe(x)
            x = lin(x)
        return x
"""
    analysis = analyze(source, "case.py")
    calls = {ast.unparse(n): analysis.facts.values.get(n) for n in ast.walk(analysis.source.tree)
             if isinstance(n, ast.Call) and ast.unparse(n) in ("maybe(x)", "lin(x)")}
    assert isinstance(calls["maybe(x)"], TensorValue) and calls["maybe(x)"].shape is not None
    assert calls["maybe(x)"].device is None and calls["lin(x)"].device is None
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)  # moved, as an importer may: the output is not on the cpu
    moved = namespace["Blocks"](8, True).to("meta")
    assert moved(namespace["torch"].randn(2, 8, device="meta")).device.type == "meta"
