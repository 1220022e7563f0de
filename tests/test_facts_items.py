"""Facts inside ``forward`` that real attention and conv blocks need, checked against the modules run for real.

Shapes from vit-pytorch (XCiT's and CrossViT's cross attention, LeViT's strided query conv, ViTDetPool's
generator unpacking):

- ``q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=h), qkv)`` where ``qkv`` is
  ``(self.to_q(x), *self.to_kv(context).chunk(2, dim=-1))`` and ``context`` is not known: the unpacking runs
  the lambda on exactly 3 items, each a tensor of the pattern's output rank, each with sizes of its own (the
  keys of a cross attention are not as long as the queries);
- the same with a generator, ``(rearrange(t, ...) for t in qkv)``;
- ``nn.Conv2d(..., stride=(2 if downsample else 1))``: an int known only to be one still gives the output its
  rank and channels, with window counts of their own.

Each module runs under ``realmodels.recorder`` on several inputs (cross and self attention, both strides);
``realmodels.checking`` compares every fact the engine states at every name that ran (ranks, sizes, symbols
standing for one value per call, dtypes, devices). None may be wrong, and the names listed must be known as
tensors of the given rank.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("einops")

sys.path.insert(0, str(Path(__file__).parent))
from realmodels.checked import WRAPPER, checked, first_fact, stores  # noqa: E402

from torchwise.analysis.values import TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

HEADER = """\
import torch
import torch.nn as nn
from einops import rearrange


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d

"""

CROSS_ATTENTION = HEADER + """\
class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=4):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_kv = nn.Linear(dim, inner * 2, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x, context=None):
        h = self.heads
        x = self.norm(x)
        context = x if not exists(context) else torch.cat((x, context), dim=1)
        qkv = (self.to_q(x), *self.to_kv(context).chunk(2, dim=-1))
        q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=h), qkv)
        sim = torch.einsum('b h i d, b h j d -> b h i j', q, k)
        attn = sim.softmax(dim=-1)
        out = torch.einsum('b h i j, b h j d -> b h i d', attn, v)
        out = rearrange(out, 'b h n d -> b n (h d)')
        return self.to_out(out)


class Wrapper(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(x, **kwargs)


def run():
    block = Wrapper(Attention(8))
    block(torch.randn(2, 5, 8))
    block(torch.randn(3, 4, 8), context=torch.randn(3, 7, 8))
    block(torch.randn(1, 1, 8), context=torch.randn(1, 2, 8))
"""

GENERATOR_ATTENTION = HEADER + """\
class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=4):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, heads * dim_head * 3, bias=False)

    def forward(self, x):
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (rearrange(t, 'b n (h d) -> b h n d', h=self.heads) for t in qkv)
        dots = torch.matmul(q, k.transpose(-1, -2))
        out = torch.matmul(dots.softmax(dim=-1), v)
        return out


""" + WRAPPER + """

def run():
    block = Wrapper(Attention(8))
    block(torch.randn(2, 5, 8))
    block(torch.randn(1, 3, 8))
"""

STRIDED_CONV = HEADER + """\
class Attention(nn.Module):
    def __init__(self, dim, inner=6, downsample=False):
        super().__init__()
        self.to_q = nn.Sequential(nn.Conv2d(dim, inner, 1, stride=(2 if downsample else 1), bias=False),
                                  nn.BatchNorm2d(inner))
        self.pool = nn.MaxPool2d(2, stride=(2 if downsample else 1))

    def forward(self, x):
        q = self.to_q(x)
        y = q.shape[2]
        p = self.pool(x)
        return q.flatten(2), y, p


""" + WRAPPER + """

def run():
    Wrapper(Attention(3))(torch.randn(2, 3, 8, 8))
    Wrapper(Attention(3, downsample=True))(torch.randn(1, 3, 7, 9))
"""

# ParallelViT's branches, summed with the builtin `sum`.
PARALLEL = """\
class Parallel(nn.Module):
    def __init__(self, *fns):
        super().__init__()
        self.fns = nn.ModuleList(fns)

    def forward(self, x):
        return sum([fn(x) for fn in self.fns])
"""

# Forms of vit-pytorch's ParallelViT, NesT, ViT-for-small-datasets and MaxViT: branches given as `*fns`
# (`Parallel(*[block() for _ in range(n)])`) summed with the builtin `sum`, a layer's output named by the
# unpacking right below it, `-torch.finfo(dots.dtype).max` as a fill value, `torch.tensor([2 * w - 1, 1])` of a size.
CORPUS_FORMS = HEADER + PARALLEL + """\


class Attention(nn.Module):
    def __init__(self, embed, window=3):
        super().__init__()
        self.embed = embed
        self.branches = Parallel(nn.Linear(8, 8), nn.Linear(8, 8))
        self.spread = Parallel(*[nn.Linear(8, 6), nn.Linear(8, 6)])
        self.register_buffer("scale", torch.tensor([2 * window - 1, 1]))

    def forward(self, x):
        h = self.embed(x)
        b, n, c = h.shape
        h = h * 2
        y = self.branches(h)
        z = self.spread(y)
        fill = -torch.finfo(z.dtype).max
        masked = z.masked_fill(z > 0, fill)
        s = self.scale * 2
        return masked, s


def run():
    Attention(nn.Linear(4, 8))(torch.randn(2, 3, 4))
    Attention(nn.Linear(5, 8), window=4)(torch.randn(1, 7, 5))
"""

# Forms of vit-pytorch's ParallelViT with a branch count known only by name (`Parallel(*[block() for _ in
# range(n)])`, n may be 0: `sum` then gives the int 0), NesT's hierarchy (`ModuleList([Transformer(d),
# Aggregate(d) if not last else nn.Identity()])` appended per level, unpacked in a loop), CvT's depthwise conv
# (kernel, padding and stride known only by name), CCT's encoder layer (the input's rank fixed inside the
# attention it calls: `B, N, C = x.shape`) and its DropPath (`shape = (batch, *((1,) * (x.ndim - 1)))`).
BRANCHES = HEADER + PARALLEL + """\


class Attention(nn.Module):
    def __init__(self, dim, branches):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.par = Parallel(*[nn.Linear(dim, dim) for _ in range(branches)])
        self.wide = Parallel(*[nn.Linear(dim, 2 * dim) for _ in range(branches)])

    def forward(self, x):
        h = self.proj(x)
        y = self.par(h) + h
        z = h * 2
        z += self.par(h)
        m = sum([f(h) > 0 for f in self.par.fns]) + (h > 0)
        w = self.wide(h) + h[..., :1]
        return y, z, m, w


def run():
    Attention(4, 0)(torch.randn(2, 3, 4))
    Attention(4, 2)(torch.randn(2, 5, 4))
    Attention(4, 1)(torch.randn(1, 6, 4))
"""

HIERARCHY = HEADER + """\
def aggregate(dim, dim_out):
    return nn.Sequential(nn.Conv2d(dim, dim_out, 3, padding=1), nn.MaxPool2d(3, stride=2, padding=1))


class DepthWise(nn.Module):
    def __init__(self, dim_in, dim_out, kernel_size, padding, stride):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(dim_in, dim_in, kernel_size=kernel_size, padding=padding, groups=dim_in, stride=stride),
            nn.Conv2d(dim_in, dim_out, kernel_size=1))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    def __init__(self, dim, level):
        super().__init__()
        self.level = level
        self.conv = nn.Conv2d(dim, dim, 1)

    def forward(self, x):
        return self.conv(x)


class Attention(nn.Module):
    def __init__(self, dim, depth, kernel=3, padding=1, stride=2, bn=True):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 1), nn.BatchNorm2d(dim) if bn else nn.Identity())
        self.layers = nn.ModuleList([])
        for i in range(depth):
            last = i == depth - 1
            self.layers.append(nn.ModuleList([Block(dim, i), aggregate(dim, dim) if not last else nn.Identity()]))
        self.down = DepthWise(dim, dim, kernel, padding=padding, stride=stride)

    def forward(self, x):
        s = self.stem(x)
        for block, agg in self.layers:
            y = block(s)
            s = agg(y)
        d = self.down(s)
        return d


def run():
    Attention(4, 3)(torch.randn(2, 3, 8, 8))
    Attention(5, 1, kernel=1, padding=0, stride=1, bn=False)(torch.randn(1, 3, 9, 7))
    Attention(4, 2, kernel=(3, 5), padding=(1, 2), stride=(1, 2))(torch.randn(3, 3, 6, 6))
"""

ENCODER_LAYER = HEADER + """\
class Inner(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj(attn @ v)


class DropPath(nn.Module):
    def __init__(self, drop_prob=None):
        super().__init__()
        self.drop_prob = float(drop_prob)

    def forward(self, x):
        batch, drop_prob, device = x.shape[0], self.drop_prob, x.device
        if drop_prob <= 0. or not self.training:
            return x
        keep_prob = 1 - self.drop_prob
        shape = (batch, *((1,) * (x.ndim - 1)))
        keep_mask = torch.zeros(shape, device=device).float().uniform_(0, 1) < keep_prob
        return x.div(keep_prob) * keep_mask.float()


class Attention(nn.Module):
    def __init__(self, d_model, drop_path_rate=0.1):
        super().__init__()
        self.pre_norm = nn.LayerNorm(d_model)
        self.self_attn = Inner(d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.drop_path = DropPath(drop_path_rate)

    def forward(self, src):
        src = src + self.drop_path(self.self_attn(self.pre_norm(src)))
        out = self.norm1(src)
        return out


""" + WRAPPER + """

def run():
    Wrapper(Attention(8))(torch.randn(2, 5, 8))
    block = Wrapper(Attention(6, drop_path_rate=0.0))
    block(torch.randn(1, 3, 6))
    block.eval()
    block(torch.randn(3, 2, 6))
"""

# CCT's tokenizer and PiT's layers: `nn.Sequential(*[block() for _ in range(n)])` of a count not known (0 gives the
# input back): one block keeps the rank, so do two, so does any count.
ALIKE_BLOCKS = HEADER + """\
class Attention(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.blocks = nn.Sequential(*[nn.Sequential(nn.Conv2d(dim, dim, 3, padding=1), nn.BatchNorm2d(dim),
                                                    nn.MaxPool2d(2)) for _ in range(depth)])
        self.lin = nn.Sequential(*[nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        y = self.blocks(x)
        z = self.lin(y.flatten(2).transpose(1, 2))
        return y, z


def run():
    Attention(4, 0)(torch.randn(2, 4, 8, 8))
    Attention(4, 2)(torch.randn(1, 4, 8, 8))
    Attention(3, 1)(torch.randn(3, 3, 6, 4))
"""

# name -> (source, {name assigned in Attention.forward: its rank})
CASES = {
    "corpus-forms": (CORPUS_FORMS, {"h": 3, "y": 3, "z": 3, "masked": 3, "s": 1}),
    "cross-attention-map-of-unknown-items": (CROSS_ATTENTION, {"q": 4, "k": 4, "v": 4, "sim": 4, "attn": 4,
                                                               "out": 4}),
    "generator-of-unknown-items": (GENERATOR_ATTENTION, {"q": 4, "k": 4, "v": 4, "dots": 4, "out": 4}),
    "conv-stride-known-only-as-an-int": (STRIDED_CONV, {"q": 4, "p": 4}),
    "sum-of-a-branch-count-known-by-name": (BRANCHES, {"h": 3, "y": 3, "z": 3, "m": 3, "w": 3}),
    "hierarchy-of-one-of-a-few-modules": (HIERARCHY, {"s": 4, "y": 4, "d": 4}),
    "rank-fixed-in-a-module-called": (ENCODER_LAYER, {"src": 3, "out": 3}),
    "sequential-of-a-count-not-known": (ALIKE_BLOCKS, {"y": 4, "z": 3}),
}


def _attention_forward(tree: ast.Module) -> ast.FunctionDef:
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Attention")
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward")


@pytest.mark.parametrize("name", sorted(CASES))
def test_facts_in_forward_are_known_and_true(name, tmp_path):
    source, expected = CASES[name]
    analysis, checker = checked(source, tmp_path, name.replace('-', '_'))
    facts = analysis.facts.values
    forward = _attention_forward(analysis.source.tree)
    ranks = {}  # (each name's first assignment)
    for node in sorted(ast.walk(forward), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in expected:
            fact = facts.get(node)
            ranks.setdefault(node.id, len(fact.shape) if isinstance(fact, TensorValue) and fact.shape is not None
                             else None)
    assert ranks == expected, f"{name}: the engine's ranks {ranks}"
    assert checker.counts["observations"] > 20 and checker.counts["symbolic dims"] > 10


def test_keys_of_a_cross_attention_have_sizes_of_their_own():
    """The three items of a map over items not known are three tensors: q's length is not k's."""
    analysis = analyze(CROSS_ATTENTION, "cross.py")
    forward = _attention_forward(analysis.source.tree)
    q, k = (next(n for n in ast.walk(forward) if isinstance(n, ast.Name) and n.id == name
                 and isinstance(n.ctx, ast.Store)) for name in ("q", "k"))
    q_fact, k_fact = analysis.facts.values[q], analysis.facts.values[k]
    assert q_fact.shape[1] == k_fact.shape[1]  # h: the pattern's keyword, one value for both
    assert q_fact.shape[2] != k_fact.shape[2] and q_fact.shape[0] != k_fact.shape[0]


def test_a_starred_target_runs_no_item_not_known():
    """``q, *rest = map(...)`` does not say how many items there are: nothing is made up."""
    source = CROSS_ATTENTION.replace("q, k, v = map(", "q, *kv = map(").replace(
        "q, k)", "q, q)").replace("attn, v)", "attn, q)")
    analysis = analyze(source, "starred.py")
    forward = _attention_forward(analysis.source.tree)
    q = next(n for n in ast.walk(forward) if isinstance(n, ast.Name) and n.id == "q" and isinstance(n.ctx, ast.Store))
    assert analysis.facts.values.get(q) is None or analysis.facts.values[q].shape is None


def test_star_args_after_other_arguments_say_what_every_item_is():
    """``Parallel(nn.Linear(4, 2), *[nn.Linear(4, 8) for _ in range(3)])``: the items are not all the comprehension's
    element, so an item's output is not claimed to be ``(2, 8)`` (it is ``(2, 2)`` for the first)."""
    source = HEADER + """\
class Parallel(nn.Module):
    def __init__(self, *fns):
        super().__init__()
        self.fns = nn.ModuleList(fns)

    def forward(self, x):
        return [fn(x) for fn in self.fns]


p = Parallel(nn.Linear(4, 2), *[nn.Linear(4, 8) for _ in range(3)])
first = p(torch.randn(2, 4))[0]
"""
    scope: dict = {}
    exec(compile(source, "<star-args>", "exec"), scope)
    analysis = analyze(source, "star_args.py")
    target = next(n for n in ast.walk(analysis.source.tree) if isinstance(n, ast.Name) and n.id == "first")
    fact = analysis.facts.values.get(target)
    if isinstance(fact, TensorValue) and fact.shape is not None:
        assert fact.shape == tuple(scope["first"].shape)


ONE_OF_A_FEW = """\
import torch
import torch.nn as nn


class A(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        B, N, C = x.shape
        return self.lin(x)


class M(nn.Module):
    def __init__(self, d, flag):
        super().__init__()
        self.mix = A(d) if flag else nn.Linear(d, d)
        self.norm = nn.BatchNorm2d(3) if flag else nn.Identity()

    def forward(self, x):
        b, *_ = x.shape
        y = self.mix(x)
        return y


class N(nn.Module):
    def __init__(self, d, flag):
        super().__init__()
        self.norm = nn.BatchNorm2d(3) if flag else nn.Identity()

    def forward(self, x):
        b, *_ = x.shape
        y = self.norm(x)
        return y


""" + WRAPPER + """

def run():
    Wrapper(M(3, False))(torch.randn(2, 3))
    Wrapper(M(3, True))(torch.randn(2, 4, 3))
    Wrapper(N(3, False))(torch.randn(2, 3))
    Wrapper(N(3, True))(torch.randn(2, 3, 4, 4))
"""


def test_one_of_a_few_modules_rules_a_rank_out_only_where_every_option_raises(tmp_path):
    """``self.norm = nn.BatchNorm2d(3) if flag else nn.Identity()``: a rank trial of ``x`` must not drop rank 2
    because the BatchNorm2d option raises on it (the Identity does not); the same with a module of the file that
    unpacks ``B, N, C = x.shape`` against an ``nn.Linear``. Run for real, no fact is wrong."""
    _, checker = checked(ONE_OF_A_FEW, tmp_path, "one_of_a_few")
    assert checker.counts["observations"] > 20


BRANCH_IN_A_LOOP = """\
import torch


def shrink(x, flags):
    outs = []
    for c in flags:
        x = x[:, :-1] if c else x
        if c:
            x = x[:, :-1]
        outs.append(x)
    y = torch.cat(outs, dim=1)
    return x, y


def run():
    shrink(torch.randn(2, 10), [True, False, True])
    shrink(torch.randn(3, 7), [False, True])
"""


def test_a_branch_in_a_loop_gives_one_size_per_pass(tmp_path):
    """``x = x[:, :-1] if c else x`` (or an ``if``) in a loop: x keeps its rank, its size a symbol of that pass;
    the list it is appended to must not claim one size for all its items (``cat`` was ``3*n``, wrongly)."""
    analysis, _ = checked(BRANCH_IN_A_LOOP, tmp_path, "branch_in_a_loop")
    y = first_fact(analysis, "y")
    assert not (isinstance(y, TensorValue) and y.shape is not None)
    xs = [analysis.facts.values.get(n) for n in stores(analysis.source.tree, "x")]
    assert all(isinstance(x, TensorValue) and x.shape is not None and len(x.shape) == 2 for x in xs[:2])


CALLED_BRANCH_IN_A_LOOP = """\
import torch
import torch.nn as nn


def pick(x, c):
    if c:
        return x[:, :-1]
    return x


def pick2(x, c):
    return x[:, :-1] if c else x


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(10, 10)

    def forward(self, x, c):
        x = self.lin(x)
        if c:
            return x[:, :-1]
        return x


def shrink(x, flags):
    outs = []
    for c in flags:
        x = pick(x, c)
        outs.append(x)
    a = torch.cat(outs, dim=1)
    return x, a


def run():
    x = torch.randn(2, 10)
    m = M()
    outs, outs2, outs3 = [], [], []
    for c in [True, False, True]:
        outs.append(pick(x, c))
        outs2.append(pick2(x, c))
        outs3.append(m(x, c))
    y = torch.cat(outs, dim=1)
    z = torch.cat(outs2, dim=1)
    w = torch.cat(outs3, dim=1)
    v = torch.cat([m(x, c) for c in [True, False]], dim=1)
    shrink(torch.randn(2, 10), [True, False, True])
"""


def test_a_call_in_a_loop_that_returns_a_branch_gives_one_size_per_pass(tmp_path):
    """A function (or a module's forward) whose two returns differ in size, called in a loop: the returns' symbol
    is the size of whichever ran in that call, so a list of the results must not claim one size for all items
    (``torch.cat(outs, 1)`` was ``(2, 3*n)``, wrongly, for the items 9, 10, 9; a list comprehension's was
    ``(2, 2*n)`` for 9, 10)."""
    analysis, _ = checked(CALLED_BRANCH_IN_A_LOOP, tmp_path, "called_branch_in_a_loop")
    for name in ("y", "z", "w", "v", "a"):
        value = first_fact(analysis, name)
        assert not (isinstance(value, TensorValue) and value.shape is not None and not
                    all(isinstance(d, int) for d in value.shape)), (name, value)
