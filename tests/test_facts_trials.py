"""A parameter nothing tells about (no caller in the file, no annotation) gets a rank when its body fixes it: the
body is tried with each rank, and only one lets every path through (``Inference._ranks_by_trial``). These are the
shapes of real modules (vit-pytorch's attention blocks, conv stems, conditional tokens). Each claim is checked
with real torch: the module runs with an input of the claimed rank and raises with every other rank. The
near-misses (a pin on some paths only, a pattern with an ellipsis) must claim no rank."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from realmodels.checked import stores  # noqa: E402

from torchwise.analysis.values import TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

HEADER = "import torch\nimport torch.nn as nn\nfrom einops import rearrange\nfrom einops.layers.torch import Rearrange\n"

# name -> (source, class, the name inside forward returned at the end, its rank, an input, the class's arguments)
PINNED = {
    # vit-pytorch's Attention: norm, a projection, chunk, then a pattern in a lambda that the unpacking runs.
    "attention-pattern-in-map": ("""
class Attention(nn.Module):
    def __init__(self, dim, heads=4, dim_head=8):
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(dim)
        self.to_qkv = nn.Linear(dim, heads * dim_head * 3, bias=False)
        self.to_out = nn.Linear(heads * dim_head, dim)

    def forward(self, x):
        x = self.norm(x)
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), qkv)
        attn = (q @ k.transpose(-1, -2)).softmax(dim=-1)
        out = rearrange(attn @ v, 'b h n d -> b n (h d)')
        return self.to_out(out)
""", "Attention", "out", 3, lambda: (torch.randn(2, 5, 16),), (16,)),
    # A conv stem whose output is flattened by a pattern: the input is batched.
    "conv-stem-then-pattern": ("""
class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, img):
        x = self.conv(img)
        x = rearrange(x, 'b c h w -> b (h w) c')
        return x
""", "Stem", "x", 3, lambda: (torch.randn(2, 3, 4, 4),), ()),
    # Unpacking the shape pins it too, after other uses.
    "shape-unpacked-later": ("""
class Pool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.proj(x)
        b, n, d = y.shape
        return y
""", "Pool", "y", 3, lambda: (torch.randn(2, 5, 6),), (6,)),
    # PiT's Pool: `x[:, :1]` of a 1-d x has more indices than dims (IndexError whatever the sizes), and the
    # pattern takes rank 3 only.
    "index-then-pattern": ("""
class Split(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.cls_ff = nn.Linear(dim, dim * 2)

    def forward(self, x):
        cls_token, tokens = x[:, :1], x[:, 1:]
        cls_token = self.cls_ff(cls_token)
        tokens = rearrange(tokens, 'b (h w) c -> b c h w', h=2)
        return cls_token
""", "Split", "cls_token", 3, lambda: (torch.randn(2, 5, 6),), (6,)),
    # CCT's tokenizer: convs of a count not known (none, one or more keep the rank), then a pattern.
    "alike-convs-then-pattern": ("""
class Tokenizer(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.convs = nn.Sequential(*[nn.Conv2d(c, c, 3, padding=1) for _ in range(n)])

    def forward(self, x):
        t = rearrange(self.convs(x), 'b c h w -> b (h w) c')
        return t
""", "Tokenizer", "t", 3, lambda: (torch.randn(2, 3, 4, 4),), (3, 2)),
    # CCT's encoder layer: the rank is fixed inside the module it calls (`B, N, C = x.shape` there).
    "rank-fixed-in-a-called-module": ("""
class Inner(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        return self.proj(x)


class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = Inner(dim)

    def forward(self, src):
        src = src + self.attn(self.norm(src))
        return src
""", "Layer", "src", 3, lambda: (torch.randn(2, 5, 6),), (6,)),
}


def _forward_facts(source: str, name: str) -> list:
    analysis = analyze(HEADER + source, "case.py")
    return [analysis.facts.values.get(node) for node in stores(analysis.source.tree, name)]


def _build(source: str, cls: str, args: tuple):
    namespace: dict = {}
    exec(compile(HEADER + source, "case.py", "exec"), namespace)
    return namespace[cls](*args)


@pytest.mark.parametrize("case", sorted(PINNED))
def test_a_rank_fixed_by_the_body_is_claimed_and_true(case):
    source, cls, name, rank, inputs, args = PINNED[case]
    claims = _forward_facts(source, name)
    assert claims and all(isinstance(c, TensorValue) and c.shape is not None for c in claims), claims
    assert len(claims[-1].shape) == rank  # the last one: what forward returns
    module = _build(source, cls, args)
    (x,) = inputs()
    assert module(x).dim() == rank  # the claimed input rank runs...
    for other in range(1, 7):
        if other != x.dim():  # ...and every other input rank raises
            shape = (*x.shape, *(2,) * max(0, other - x.dim()))[-other:] if other > x.dim() else x.shape[-other:]
            with pytest.raises(Exception):
                module(torch.randn(*shape))


NOT_PINNED = {
    # The module called pins the rank on some of its paths only; and a module that is one of two (a Linear
    # takes any rank) pins nothing.
    "pin-in-a-called-module-after-an-early-return": """
class Inner(nn.Module):
    def __init__(self, flat):
        super().__init__()
        self.flat = flat

    def forward(self, x):
        if self.flat:
            return x
        B, N, C = x.shape
        return x


class Inner3(nn.Module):
    def forward(self, x):
        B, N, C = x.shape
        return x


class Outer(nn.Module):
    def __init__(self, flat, dim):
        super().__init__()
        self.inner = Inner(flat)
        self.either = Inner3() if flat else nn.Linear(dim, dim)

    def forward(self, x):
        y = x * 2
        y = self.inner(y) + self.either(y)
        return y
""",
    # The pattern runs only when `flag` is false: with `flag`, any rank returns.
    "pin-after-an-early-return": """
class Maybe(nn.Module):
    def forward(self, x, flag):
        y = x * 2
        if flag:
            return y
        z = rearrange(y, 'b n d -> b d n')
        return z
""",
    # An ellipsis takes any rank from 2 up.
    "pattern-with-an-ellipsis": """
class Any(nn.Module):
    def forward(self, x):
        y = x + 1
        return rearrange(y, 'b ... d -> b d ...')
""",
    # `x.shape[-2]` and `x.size(2)` rule out ranks below 3 only: every rank from 3 up runs.
    "a-size-index-is-a-lower-bound": """
class Sizes(nn.Module):
    def forward(self, x):
        y = x * 2
        n, m = y.shape[-2], y.size(2)
        return y
""",
    # Inside a loop that may run zero times.
    "pin-in-a-loop": """
class Blocks(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        y = x * 2
        for _ in range(self.n):
            y = rearrange(y, 'b n d -> b d n')
        return y
""",
    # Inside try: the error is caught.
    "pin-in-a-try": """
class Careful(nn.Module):
    def forward(self, x):
        y = x * 2
        try:
            y = rearrange(y, 'b n d -> b d n')
        except Exception:
            pass
        return y
""",
}


@pytest.mark.parametrize("case", sorted(NOT_PINNED))
def test_a_rank_fixed_on_some_paths_only_is_not_claimed(case):
    first = _forward_facts(NOT_PINNED[case], "y")[0]  # (what the pattern returns is known from it)
    assert not isinstance(first, TensorValue) or first.shape is None, first


def test_an_attribute_set_on_one_path_is_what_a_read_sees():
    """``if use_cls: self.cls_token = nn.Parameter(...)``: a later read can only succeed where it was set."""
    source = """
class Net(nn.Module):
    def __init__(self, dim, use_cls=True):
        super().__init__()
        if use_cls:
            self.cls_token = nn.Parameter(torch.randn(1, dim))

    def forward(self, x):
        c = self.cls_token * 2
        return c + x
"""
    (c,) = _forward_facts(source, "c")
    assert isinstance(c, TensorValue) and c.shape is not None and len(c.shape) == 2
    assert _build(source, "Net", (4,))(torch.tensor(2.0)).shape == (1, 4)
    with pytest.raises(AttributeError):
        _build(source, "Net", (4, False))(torch.tensor(2.0))


def test_an_attribute_the_class_also_defines_is_not_taken_from_one_path():
    source = """
class Net(nn.Module):
    cls_token = None

    def __init__(self, dim, use_cls=True):
        super().__init__()
        if use_cls:
            self.cls_token = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        c = self.cls_token
        return c
"""
    (c,) = _forward_facts(source, "c")
    assert not isinstance(c, TensorValue)


# -- a later use decides between the ranks a first layer leaves (issue 11: forwards of classes never built) --------
# MaxViT's shape: a conv stem whose channels come through a helper (its settings not known), blocks in a loop whose
# BatchNorm2d has a size not known, then a `Reduce('b d h w -> b d')` head. Rank 3 (unbatched) passes the convs but
# certainly raises later: in the first pass of the loop, or, with no pass, in the head.
_LATER = """
from einops.layers.torch import Reduce


def exists(v):
    return v is not None


def default(v, d):
    return v if exists(v) else d


class Stem(nn.Module):
    def __init__(self, dim, depth, dim_stem=None, expansion=2, pool=True, flat=False, stop=False):
        super().__init__()
        stem = default(dim_stem, dim)
        hidden = int(expansion * dim)
        self.pool, self.flat, self.stop = pool, flat, stop
        self.conv_stem = nn.Sequential(nn.Conv2d(3, stem, 3, stride=2, padding=1), nn.Conv2d(stem, dim, 3, padding=1))
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.Sequential(nn.Conv2d(dim, hidden, 1), nn.BatchNorm2d(hidden), nn.GELU(),
                                             nn.Conv2d(hidden, dim, 1)))
        self.bn3 = nn.BatchNorm3d(int(expansion * dim))
        self.head = nn.Sequential(Reduce('b d h w -> b d', 'mean'), nn.LayerNorm(dim), nn.Linear(dim, 4))
        self.any_head = nn.Sequential(Reduce('b d ... -> b d', 'mean'), nn.LayerNorm(dim), nn.Linear(dim, 4))
"""
LATER_PINNED = {
    "head-after-a-loop": """
    def forward(self, x):
        s = self.conv_stem(x)
        y = s
        for stage in self.layers:
            y = stage(y)
        return self.head(y)
""",
    "head-on-the-stem": """
    def forward(self, x):
        s = self.conv_stem(x)
        return self.head(s)
""",
}
# Near-misses: rank 3 runs on some path (the arguments in the comment), so no rank may be claimed.
LATER_NOT_PINNED = {
    "head-under-an-if": ("""
    def forward(self, x):
        s = self.conv_stem(x)
        if self.pool:
            s = self.head(s)
        return s
""", dict(pool=False)),
    "head-in-a-try": ("""
    def forward(self, x):
        s = self.conv_stem(x)
        try:
            s = self.head(s)
        except Exception:  # (einops raises its own error)
            pass
        return s
""", {}),
    "head-after-an-early-return": ("""
    def forward(self, x):
        s = self.conv_stem(x)
        if self.flat:
            return s
        return self.head(s)
""", dict(flat=True)),
    "a-rank-generic-head": ("""
    def forward(self, x):
        s = self.conv_stem(x)
        return self.any_head(s)
""", {}),
    # The first pass raises for rank 3 only after a `break` it may take: the loop may end with y changed.
    "a-loop-that-may-break-first": ("""
    def forward(self, x):
        s = self.conv_stem(x)
        y = s
        for stage in self.layers:
            y = y.unsqueeze(0)
            if self.stop:
                break
            y = self.bn3(y)
        return self.head(y)
""", dict(stop=True, expansion=1)),
}


def _later_claims(body: str) -> list:
    return _forward_facts(_LATER + body, "s")


def _later_runs(body: str, rank: int, depth: int, **config) -> bool:
    """Whether the module, built with ``config``, runs on an input of ``rank`` (3: unbatched, 4: batched)."""
    namespace: dict = {}
    exec(compile(HEADER + _LATER + body, "case.py", "exec"), namespace)
    module = namespace["Stem"](4, depth, **config).eval()
    try:
        module(torch.randn(*(3, 8, 8) if rank == 3 else (2, 3, 8, 8)))
        return True
    except Exception:
        return False


@pytest.mark.parametrize("case", sorted(LATER_PINNED))
def test_a_later_use_decides_the_rank_a_conv_leaves_open(case):
    body = LATER_PINNED[case]
    claims = _later_claims(body)
    assert claims and all(isinstance(c, TensorValue) and c.shape is not None and len(c.shape) == 4
                          for c in claims), claims
    for depth in (0, 1, 2):  # (a loop of no pass, one, two)
        assert _later_runs(body, 4, depth) and not _later_runs(body, 3, depth)


@pytest.mark.parametrize("case", sorted(LATER_NOT_PINNED))
def test_a_later_use_on_some_paths_only_decides_nothing(case):
    body, config = LATER_NOT_PINNED[case]
    assert _later_runs(body, 3, 1, **config) and _later_runs(body, 4, 0)  # (both ranks really run)
    claims = _later_claims(body)
    assert all(not isinstance(c, TensorValue) or c.shape is None for c in claims[:1]), claims


# A conv or a rank-checked norm whose settings are not all known (``int(k * 2)`` channels): the engine still claims
# its input-rank check (an error) and, where it runs, the result's rank, batch size and dtype. Every kind, every
# input rank 1-6, two dtypes, against real torch. (A float64 input on float32 weights raises in torch; the claim
# there is of a line that never completes.)
_UNKNOWN_KINDS = [f"Conv{t}{n}d" for n in (1, 2, 3) for t in ("", "Transpose")] + \
    [f"{k}{n}d" for n in (1, 2, 3) for k in ("BatchNorm", "InstanceNorm")]


@pytest.mark.parametrize("kind", _UNKNOWN_KINDS)
def test_a_layer_of_unknown_settings_checks_its_input_rank(kind):
    layer = f"nn.{kind}(4, int(k * 2), 3, padding=1)" if kind.startswith("Conv") else f"nn.{kind}(int(k * 2))"
    for rank in range(1, 7):
        for dtype in ("float32", "float64"):
            shape = (2, 4, 5, 5, 5, 5)[:rank] if rank > 1 else (4,)
            if kind.startswith("Conv") and rank == int(kind[-2]) + 1:
                shape = (4, 5, 5, 5)[:rank]  # (unbatched: channels first)
            source = f"""
def f(k):
    layer = {layer}
    x = torch.randn{shape}.to(torch.{dtype})
    y = layer(x)
    return y
"""
            (claim,) = _forward_facts(source, "y")
            namespace: dict = {}
            exec(compile(HEADER + source, "case.py", "exec"), namespace)
            try:
                real = namespace["f"](2)
            except Exception:
                real = None
            if claim is None or not isinstance(claim, TensorValue) or claim.shape is None:
                continue
            if real is None:  # (a float64 input on float32 weights: raises, whatever the claim; a rank never)
                assert dtype == "float64", (kind, shape, dtype, claim)
                continue
            assert len(claim.shape) == real.dim() and (claim.dtype is None or repr(claim.dtype) == repr(real.dtype))
            for mine, theirs in zip(claim.shape, real.shape):
                assert not isinstance(mine, int) or mine == theirs, (kind, shape, claim, real.shape)
