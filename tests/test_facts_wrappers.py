"""Wrapper modules (issue 11, vit-pytorch style): ``PreNorm(dim, Attention(...))``, ``Residual(FeedForward(...))``.

A class that stores an ``__init__`` argument in one attribute and only calls it (``self.fn(x, **kwargs)``) gives
the wrapped module its calls as call sites; one that does anything else with it (keeps it in a list, stores it
twice, hands ``self`` out, calls it in ``__init__``, is subclassed) leaves the wrapped module's parameters unknown.
A wrapped instance also called directly gets both calls (merged: different ranks, nothing claimed). Every program
runs with real torch under a tracer; every rank and concrete size the engine claims for a name inside a ``forward``
must be what it is at runtime, each time the line runs (``check_source`` of the facts truth suite besides).
"""

from __future__ import annotations

import ast
import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from program_gen import HEADER  # noqa: E402
from test_incremental_analysis import observed  # noqa: E402

from torchwise.analysis.values import TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

MODULES = """
class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        y = self.net(x)
        return y

class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim = -1)
        att = q @ k.transpose(-1, -2)
        out = att.softmax(dim = -1) @ v
        return out
"""

# How the wrapper keeps and calls its module: the clean form first, then near misses that must claim nothing
# from the wrapper's calls (each escapes what the analysis follows).
WRAPPERS = {
    "clean": """
class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(self.norm(x), **kwargs)
""",
    "annotated": """
class PreNorm(nn.Module):
    def __init__(self, dim, fn: nn.Module = None):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.norm(x))
""",
    "in-a-list": """
class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fns = nn.ModuleList([fn])

    def forward(self, x):
        return self.fns[0](self.norm(x))
""",
    "self-handed-out": """
def apply_fn(m, x):
    return m.fn(x.flatten(0, 1))

class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.norm(x)) + apply_fn(self, x).sum()
""",
    "stored-twice": """
class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn
        self.other = fn

    def forward(self, x):
        return self.fn(self.norm(x)) + self.other(x.flatten(0, 1)).sum()
""",
    "attribute-read": """
class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x):
        f = self.fn
        return self.fn(self.norm(x)) + f(x.flatten(0, 1)).sum()
""",
    "children-walked": """
class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x):
        out = self.fn(self.norm(x))
        for child in self.children():
            if not isinstance(child, nn.LayerNorm):
                out = out + child(x.flatten(0, 1)).sum()
        return out
""",
    "subclassed": """
class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.norm(x))

class Twice(PreNorm):
    def forward(self, x):
        return self.fn(self.norm(x)) + self.fn(x.flatten(0, 1)).sum()
""",
}

# How the blocks are built and called: the wrapped instance inline, or by a name that is also called directly
# (with a 2-d input, where the wrapper passes 3-d ones).
USES = {
    "inline": """
class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, hidden):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            attn, ff = {wrap}(dim, Attention(dim, heads)), {wrap}(dim, FeedForward(dim, hidden))
            self.layers.append(nn.ModuleList([attn, ff]))

    def forward(self, x):
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return x

model = Transformer(16, 2, 4, 32)
result = model(torch.randn(2, 5, 16))
""",
    "named-and-called-directly": """
attn = Attention(16, 4)
ff = FeedForward(16, 32)
first, second = {wrap}(16, attn), {wrap}(16, ff)
direct = attn(torch.randn(3, 16)) + ff(torch.randn(3, 16))
x = torch.randn(2, 5, 16)
x = first(x) + x
x = second(x) + x
""",
    "named-wrapped-only": """
class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        attn = Attention(dim, 4)
        self.block = {wrap}(dim, attn)

    def forward(self, x):
        h = self.block(x)
        return h + x

result = Net(16)(torch.randn(2, 5, 16))
""",
}

INNER = ("q", "k", "v", "att", "out", "y")  # the wrapped modules' own names


def _program(wrapper: str, use: str) -> str:
    wrap = "Twice" if wrapper == "subclassed" else "PreNorm"
    return HEADER + MODULES + WRAPPERS[wrapper] + USES[use].replace("{wrap}", wrap)


def _runtime_shapes(source: str) -> dict:
    """{(line, name): {shape}}: every tensor each name of a ``forward`` holds after each line of it ran."""
    import torch
    seen: dict = {}

    def tracer(frame, event, arg):
        if frame.f_code.co_name != "forward" or frame.f_code.co_filename != "case.py":
            return None
        previous = [frame.f_lineno]

        def lines(frame, event, arg):
            for name, value in frame.f_locals.items():
                if isinstance(value, torch.Tensor):
                    seen.setdefault((previous[0], name), set()).add(tuple(value.shape))
            previous[0] = frame.f_lineno
            return lines
        return lines
    sys.settrace(tracer)
    try:
        exec(compile(source, "case.py", "exec"), {})
    finally:
        sys.settrace(None)
    return seen


def _claims(analysis) -> dict:
    """{(line, name): engine fact} for the names assigned in ``forward`` methods."""
    found = {}
    for node in ast.walk(analysis.source.tree):
        if isinstance(node, ast.FunctionDef) and node.name == "forward":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    found[(sub.lineno, sub.id)] = analysis.facts.values.get(sub)
    return found


def _wrong_claims(source: str) -> list:
    runtime = _runtime_shapes(source)
    wrong = []
    for (line, name), fact in _claims(analyze(source, "case.py")).items():
        if not isinstance(fact, TensorValue) or fact.shape is None:
            continue
        for shape in runtime.get((line, name), ()):  # (the tracer sees a line's names once the next line runs)
            if len(shape) != len(fact.shape) or any(isinstance(d, int) and d != s for d, s in zip(fact.shape, shape)):
                wrong.append(f"line {line} {name}: engine {fact.shape}, runtime {shape}")
    return wrong


def _known_inner(source: str) -> set:
    return {name for (_, name), fact in _claims(analyze(source, "case.py")).items()
            if name in INNER and isinstance(fact, TensorValue) and fact.shape is not None}


@pytest.mark.parametrize("wrapper,use", list(itertools.product(sorted(WRAPPERS), sorted(USES))))
def test_every_claim_inside_wrapped_modules_is_true(wrapper, use):
    source = _program(wrapper, use)
    wrong = _wrong_claims(source)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("use", ["inline", "named-wrapped-only"])
def test_a_clean_wrapper_gives_the_wrapped_module_its_calls(use):
    known = _known_inner(_program("clean", use))
    expected = set(INNER) if use == "inline" else {"q", "k", "v", "att", "out"}
    assert known == expected, f"known: {sorted(known)}"


@pytest.mark.parametrize("wrapper", sorted(set(WRAPPERS) - {"clean", "annotated"}))
def test_a_near_miss_wrapper_claims_nothing_inside_the_module(wrapper):
    """Each of these wrappers also calls its module with a 2-d input (or may: the code it is handed to)."""
    assert not _known_inner(_program(wrapper, "inline")), wrapper


def test_a_wrapped_instance_called_directly_too_gets_both_calls():
    """``attn`` gets (3, 16) directly and (2, 5, 16) through the wrapper: no rank holds for both."""
    source = _program("clean", "named-and-called-directly")
    assert not _known_inner(source)
    # ...and with the direct calls gone, the wrapper's calls are all its calls (one: module code that chains
    # calls of this file's modules passes on nothing known before their attributes are, so not `second(x)`).
    # The wrapper's method stands for every instance: each module its constructions passed gets its calls.
    only = source.replace("direct = attn(torch.randn(3, 16)) + ff(torch.randn(3, 16))\n", "").replace(
        "x = second(x) + x\n", "")
    assert _known_inner(only) == set(INNER)
    assert not _wrong_claims(only)


def test_the_shapes_through_a_wrapper_are_the_calls_shapes():
    facts = _claims(analyze(_program("clean", "inline"), "case.py"))
    att = next(f for (_, name), f in facts.items() if name == "att")
    assert att.shape == (2, 5, 5)


def test_empty_kwargs_from_several_call_sites_pass_on_whole():
    """``def forward(self, x, **kwargs)`` called from two sites with no extra keyword: ``self.fn(x, **kwargs)``
    is a plain call (before, an unknown ``**kwargs`` made the wrapped module's parameters unknowable)."""
    source = HEADER + MODULES + WRAPPERS["clean"] + """
class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.a = PreNorm(dim, FeedForward(dim, 2 * dim))
        self.b = PreNorm(dim, FeedForward(dim, 3 * dim))

    def forward(self, x, z):
        return self.a(x) + self.b(z)

result = Net(8)(torch.randn(2, 3, 8), torch.randn(2, 3, 8))
"""
    assert _known_inner(source) == {"y"}
    assert not _wrong_claims(source)


EDITS = [
    ("direct = attn(torch.randn(3, 16)) + ff(torch.randn(3, 16))\n", ""),
    ("x = torch.randn(2, 5, 16)\n", "x = torch.randn(5, 16)\n"),
    ("        self.fn = fn\n", "        self.fn = fn\n        self.other = fn\n"),
    ("first, second = PreNorm(16, attn), PreNorm(16, ff)\n", "first, second = PreNorm(16, attn), PreNorm(16, attn)\n"),
]


@pytest.mark.parametrize("edit", range(len(EDITS)))
def test_an_edit_gives_what_a_fresh_analysis_gives(edit):
    """The wrapped module's call sites depend on the wrapper's code and constructions: an edit of either analyses
    it again (the incremental analysis equals a fresh one, both ways)."""
    before = _program("clean", "named-and-called-directly")
    old, new = EDITS[edit]
    assert old in before
    after = before.replace(old, new)
    for first, second in ((before, after), (after, before)):
        previous = analyze(first, "case.py")
        assert observed(analyze(second, "case.py", previous=previous)) == observed(analyze(second, "case.py"))


def test_keywords_differing_per_call_site_go_to_each_call():
    """CaiT's ``attn(x, context = context)`` and ``ff(x)`` through one ``LayerScale``: ``**kwargs`` is one mapping
    per call site, and ``self.fn(x, **kwargs)`` is a call with each (before, unknown keywords made both wrapped
    modules' parameters unknowable). The context's rank reaches the attention; each claim is checked at runtime."""
    source = HEADER + """
class CrossAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.to_q = nn.Linear(dim, dim)
        self.to_kv = nn.Linear(dim, 2 * dim)

    def forward(self, x, context = None):
        context = x if context is None else torch.cat((x, context), dim = 1)
        q = self.to_q(x)
        k, v = self.to_kv(context).chunk(2, dim = -1)
        att = q @ k.transpose(-1, -2)
        out = att.softmax(dim = -1) @ v
        return out

class FeedForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.net(x)
        return y

class LayerScale(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.scale = nn.Parameter(torch.full((1, 1, dim), 0.1))
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(x, **kwargs) * self.scale

class Transformer(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([LayerScale(dim, CrossAttention(dim)), LayerScale(dim, FeedForward(dim))]))

    def forward(self, x, context):
        for attn, ff in self.layers:
            x = attn(x, context = context) + x
            x = ff(x) + x
        return x

result = Transformer(8, 2)(torch.randn(2, 5, 8), torch.randn(2, 3, 8))
"""
    assert not _wrong_claims(source)
    known = {name for (_, name), fact in _claims(analyze(source, "case.py")).items()
             if isinstance(fact, TensorValue) and fact.shape is not None}
    assert {"context", "q", "k", "v", "att", "out", "y"} <= known, sorted(known)
    att = next(f for (_, name), f in _claims(analyze(source, "case.py")).items() if name == "att")
    assert att.shape[0] == 2 and att.shape[1] == 5  # (the context's length is the joined one's: 5 or 8)


# Keywords through a wrapper, several ways: the sites' keywords differ, overlap a keyword the wrapper passes itself
# (the spread is then unknown: a keyword twice raises), or the wrapper reads them too. Each runs under the tracer.
KEYWORD_CALLS = {
    "one-site-passes-context": ("", "x = blk(x, context = c) + x\n        x = blk2(x) + x"),
    "two-keys": ("", "x = blk(x, context = c, scale = 2.0) + x\n        x = blk2(x, scale = 0.5) + x"),
    "explicit-keyword-too": ("scale = 1.0, ", "x = blk(x, context = c) + x\n        x = blk2(x) + x"),
    "kwargs-read": ("", "x = blk(x, context = c) + x\n        x = blk2(x, context = None) + x"),
}


@pytest.mark.parametrize("name", sorted(KEYWORD_CALLS))
def test_keywords_through_a_wrapper_claim_only_what_holds(name):
    extra, calls = KEYWORD_CALLS[name]
    reads = "        if kwargs.get('context') is not None:\n            x = x * 1.0\n" if name == "kwargs-read" else ""
    passes = "scale = scale, " if extra else ""
    source = HEADER + f"""
class Cross(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.to_kv = nn.Linear(dim, 2 * dim)

    def forward(self, x, context = None, scale = 1.0):
        context = x if context is None else torch.cat((x, context), dim = 1)
        k, v = self.to_kv(context).chunk(2, dim = -1)
        att = (x @ k.transpose(-1, -2)) * scale
        out = att.softmax(dim = -1) @ v
        return out

class Wrap(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, {extra}**kwargs):
{reads}        return self.fn(x, {passes}**kwargs)

class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.blk, self.blk2 = Wrap(Cross(dim)), Wrap(Cross(dim))

    def forward(self, x, c):
        blk, blk2 = self.blk, self.blk2
        {calls}
        return x

result = Net(8)(torch.randn(2, 5, 8), torch.randn(2, 3, 8))
"""
    assert not _wrong_claims(source)
