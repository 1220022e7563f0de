"""``analysis.einops_shapes`` and ``ops_einops`` checked against real einops on torch tensors (CPU).

Generated patterns (valid ones, and ones mutated into invalid), input shapes and axis sizes run through
our functions and through einops. Whenever ours gives a shape it must be einops'; whenever ours raises
einops must raise; with every size an int (and every given axis size >= 1) ours must also raise
whenever einops raises, and never say "unknown". The same cases run again with sizes replaced by
symbols (``s3`` standing for 3): then "unknown" is allowed, and what is said must hold for the values
(fresh symbols are wildcards). A third mode hides the input's shape entirely.

Strides are compared too (ours: through ``layout``, following einops' torch calls; when we claim them
they must be the result's ``stride()``), and so are the dtypes of reductions.

``STATS`` counts cases by outcome; ``test_report`` prints them (``pytest -s``).
"""

from __future__ import annotations

import ast
import os
import random
import warnings
from collections import Counter

import pytest

torch = pytest.importorskip("torch")
einops = pytest.importorskip("einops")
from einops.layers.torch import Rearrange, Reduce  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from torchwise.analysis import einops_shapes as E  # noqa: E402
from torchwise.analysis import layout  # noqa: E402
from torchwise.analysis import ops_einops  # noqa: E402  (registers einops.* with the engine)
from torchwise.analysis.dims import Sym  # noqa: E402
from torchwise.analysis.dtypes import DType  # noqa: E402
from torchwise.analysis.shapes import ShapeError  # noqa: E402
from torchwise.analysis.tensors import TORCH_FUNCTIONS, Call, constant  # noqa: E402
from torchwise.analysis.values import ModuleValue, SeqValue, TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

EXAMPLES = int(os.environ.get("TORCHWISE_EINOPS_EXAMPLES", "300"))  # a soak: set it higher
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
NAMES = ["a", "b", "c", "d", "h", "w", "x2", "seq_len"]
NEW_NAMES = ["r", "k", "t9"]
STATS: Counter = Counter()


# -- generation from a random that hypothesis seeds ---------------------------------------------------------
class G:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def int(self, lo, hi):
        return self.rng.randint(lo, hi)

    def pick(self, options):
        return self.rng.choice(list(options))

    def coin(self, p=0.5):
        return self.rng.random() < p

    def size(self):
        return self.pick([1, 2, 2, 3, 3, 4, 0]) if self.coin(0.1) else self.pick([1, 2, 3, 4])

    def shuffled(self, items):
        items = list(items)
        self.rng.shuffle(items)
        return items


def group_text(group) -> str:
    tokens, bracketed = group
    inner = " ".join(str(t) for t in tokens)
    return f"({inner})" if bracketed else inner


def side_text(groups) -> str:
    return " ".join(group_text(g) for g in groups)


def grouped(g: G, tokens, join=0.3, left=False):
    """Tokens split into groups, some composed (``(h d)``); on the left ``...`` is rarely put in one
    (einops refuses it there)."""
    groups = []
    for token in tokens:
        if token == "..." and left and not g.coin(0.05):
            groups.append(([token], False))
        elif groups and groups[-1][1] and g.coin(join):
            groups[-1][0].append(token)
        else:
            groups.append(([token], g.coin(join)))
    return groups


def with_units(g: G, groups, p=0.2):
    """Insert lone ``1`` and ``()`` groups."""
    out = list(groups)
    while g.coin(p):
        out.insert(g.int(0, len(out)), ([1], False) if g.coin() else ([], True))
    return out


class Case:
    """One call of rearrange / repeat / reduce: what is passed, and which sizes are ints."""

    def __init__(self, operation, pattern, shape, axes):
        self.operation, self.pattern, self.shape, self.axes = operation, pattern, tuple(shape), dict(axes)

    def __repr__(self):
        return f"einops.reduce(zeros{self.shape}, {self.pattern!r}, {self.operation!r}, **{self.axes})"

    @property
    def fully_known(self) -> bool:
        return all(type(v) is int and v >= 1 for v in self.axes.values())


def transform_case(g: G, operation=None) -> Case:
    operation = operation or g.pick(["rearrange", "repeat", "reduce", "reduce"])
    if operation == "reduce":
        operation = g.pick(E.REDUCTIONS)
    names = g.shuffled(NAMES)[:g.int(0, 4)]
    sizes = {n: g.size() for n in names}
    left_tokens = list(names)
    if operation not in ("rearrange", "repeat") and g.coin(0.3):
        left_tokens.insert(g.int(0, len(left_tokens)), g.pick([2, 3]))  # anonymous axes are reduced
    elif g.coin(0.05):
        left_tokens.append(2)  # an error in rearrange / repeat
    ellipsis_dims = [g.size() for _ in range(g.int(0, 2))] if g.coin(0.35) else None
    if ellipsis_dims is not None:
        left_tokens.insert(g.int(0, len(left_tokens)), "...")
    left = with_units(g, grouped(g, left_tokens, left=True))
    shape = []
    for tokens, _ in left:
        if tokens == ["..."]:
            shape.extend(ellipsis_dims)
            continue
        dim = 1
        for t in tokens:
            dim *= 1 if t == "..." else (t if isinstance(t, int) else sizes[t])
        shape.append(dim)
    right_tokens = right_names(g, operation, names, ellipsis_dims is not None)
    new_names = [t for t in right_tokens if isinstance(t, str) and t not in names and t != "..."]
    right = with_units(g, grouped(g, g.shuffled(right_tokens)))
    axes = {}
    for tokens, _ in left:
        named = [t for t in tokens if isinstance(t, str) and t != "..."]
        free = g.pick(named) if named else None
        for t in named:
            if t != free and (len(named) > 1 or g.coin(0.2)):
                axes[t] = sizes[t]
    for t in new_names:
        if g.coin(0.95):
            axes[t] = g.pick([1, 2, 3])
    pattern = f"{side_text(left)} -> {side_text(right)}"
    case = Case(operation, pattern, shape, axes)
    if g.coin(0.35):
        mutate(g, case, names)
    return case


def right_names(g: G, operation, names, has_ellipsis):
    if operation == "rearrange":
        tokens = list(names)
    elif operation == "repeat":
        tokens = list(names) + [g.pick(NEW_NAMES + [2, 3]) for _ in range(g.int(0, 2))]
        tokens = list(dict.fromkeys(tokens))  # a new name once
    else:
        tokens = [n for n in names if g.coin(0.6)]
    if has_ellipsis and (operation in ("rearrange", "repeat") or g.coin(0.6)):
        tokens.insert(g.int(0, len(tokens)), "...")
    return tokens


def mutate(g: G, case: Case, names):
    kind = g.int(0, 8)
    shape = list(case.shape)
    if kind == 0 and shape:
        i = g.int(0, len(shape) - 1)
        shape[i] = max(shape[i] + g.pick([-1, 1, 2]), 0)
    elif kind == 1:
        if shape and g.coin():
            shape.pop()
        else:
            shape.append(g.pick([1, 2]))
    elif kind == 2 and case.axes:
        name = g.pick(case.axes)
        case.axes[name] = case.axes[name] + g.pick([1, 2])
    elif kind == 3:
        case.axes["zz"] = 2
    elif kind == 4 and case.axes:
        del case.axes[g.pick(case.axes)]
    elif kind == 5:
        left, right = case.pattern.split("->")
        case.pattern = f"{left}-> {right} {g.pick(names + NEW_NAMES) if names else 'q'}"
    elif kind == 6:
        i = g.int(0, len(case.pattern))
        case.pattern = case.pattern[:i] + g.pick(" ()._-,>1aA") + case.pattern[i:]
    elif kind == 7 and case.axes:
        case.axes[g.pick(case.axes)] = g.pick([0, -1])
    elif kind == 8 and names:
        left, right = case.pattern.split("->")
        case.pattern = f"{left} {g.pick(names)} ->{right}"
    case.shape = tuple(shape)


# -- symbols ---------------------------------------------------------------------------------------------
class Symbols:
    """Sizes replaced by symbols that stand for them (``s3`` = 3); ``env`` holds their values."""

    def __init__(self, g: G):
        self.g = g
        self.env = {}
        self.count = 0

    def dim(self, d):
        if type(d) is not int or d < 0 or self.g.coin(0.4):
            return d
        self.count += 1
        if d and d % 2 == 0 and self.g.coin(0.25):
            name = f"t{self.count}"
            self.env[name] = d // 2
            return 2 * Sym.var(name)
        name = f"s{self.count}"
        self.env[name] = d
        return Sym.var(name)

    def shape(self, shape):
        return tuple(self.dim(d) for d in shape)

    def axes(self, axes):
        return {k: (self.dim(v) if type(v) is int and v >= 1 else v) for k, v in axes.items()}


def concrete(dim, env):
    return dim.subs(env) if isinstance(dim, Sym) else dim


def is_wildcard(dim) -> bool:
    return isinstance(dim, Sym) and any("#" in name for name in dim.symbols)


def matches(ours, real, env) -> bool:
    ours = [concrete(d, env) for d in ours]
    return len(ours) == len(real) and all(is_wildcard(o) or o == r for o, r in zip(ours, real))


# -- the differential check ------------------------------------------------------------------------------
def run_real(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(), None
        except Exception as err:  # einops raises EinopsError, ValueError, ZeroDivisionError, torch errors...
            return None, err


def run_ours(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(), None
        except ShapeError as err:
            return None, err


def compare(label, ours_fn, real_fn, *, env=None, full=False, to_shapes=lambda r: [tuple(r.shape)],
            ours_shapes=lambda o: [o]):
    """``ours_fn()`` against ``real_fn()``. ``full``: every size is an int, so ours must know."""
    env = env or {}
    mine, my_error = run_ours(ours_fn)
    real, real_error = run_real(real_fn)
    mode = "int" if full else "sym" if env else "partial"  # partial: a size unknown, or one einops misreads (<1)
    if my_error is not None:
        STATS[f"{label} {mode} error"] += 1
        assert real_error is not None, f"we raise {my_error.message!r}, the library gives {to_shapes(real)}"
        return mine, real
    if mine is None:
        STATS[f"{label} {mode} unknown"] += 1
        assert not full, f"unknown with every size known; the library: {real_error or to_shapes(real)}"
        return mine, real
    STATS[f"{label} {mode} shape"] += 1
    if real_error is not None:
        assert not full, f"we say {mine}, the library raises {type(real_error).__name__}: {real_error}"
        return mine, real
    claimed, actual = ours_shapes(mine), to_shapes(real)
    assert len(claimed) == len(actual), (claimed, actual)
    for m, r in zip(claimed, actual):
        assert m is not None or not full, (mine, to_shapes(real))
        if m is not None:
            assert matches(m, r, env), f"we say {m} (= {[concrete(d, env) for d in m]}), the library {r}"
    return mine, real


def real_transform(case: Case, tensor):
    axes = dict(case.axes)
    if case.operation == "rearrange":
        return lambda: einops.rearrange(tensor, case.pattern, **axes)
    if case.operation == "repeat":
        return lambda: einops.repeat(tensor, case.pattern, **axes)
    return lambda: einops.reduce(tensor, case.pattern, case.operation, **axes)


def input_tensor(g: G, shape):
    """A tensor of ``shape``: row-major, or a permuted view (other strides)."""
    if len(shape) >= 2 and g.coin(0.3):
        perm = g.shuffled(range(len(shape)))
        base = torch.zeros([shape[p] for p in perm])
        inverse = [perm.index(i) for i in range(len(shape))]
        return base.permute(inverse)
    return torch.zeros(shape)


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_transform_matches_einops(rng):
    g = G(rng)
    case = transform_case(g)
    tensor = input_tensor(g, case.shape)
    real_fn = real_transform(case, tensor)
    mine, real = compare("transform", lambda: E.plan(case.shape, case.pattern, case.operation, case.axes), real_fn,
                         full=case.fully_known, ours_shapes=lambda p: [p.shape])
    if mine is not None and real is not None:
        check_strides(mine, tensor, real)
        if case.fully_known:
            assert all(not isinstance(d, Sym) for d in mine.shape), mine.shape
    check_transfer(case, tensor, real)


class FakeInference:
    """What transfer functions read of the inference: grad mode."""

    grad_enabled = True


def facts_call(args, kwargs=None):
    return Call(ast.Call(func=ast.Name("f"), args=[], keywords=[]), list(args), dict(kwargs or {}), False, None)


def tensor_value(tensor):
    dtype = next(d for d, t in DTYPES.items() if t == tensor.dtype)
    return TensorValue(dtype, tuple(tensor.shape), "cpu", tuple(tensor.stride()), False, True)


def check_transfer(case: Case, tensor, real):
    """The engine's transfer function (``einops.rearrange`` ...): shape, dtype, device and strides."""
    name = case.operation if case.operation in ("rearrange", "repeat") else "reduce"
    args = [tensor_value(tensor), constant(case.pattern)] + ([constant(case.operation)] if name == "reduce" else [])
    value = TORCH_FUNCTIONS[f"einops.{name}"](FakeInference(), facts_call(args, {
        k: constant(v) for k, v in case.axes.items()}))
    STATS[f"transfer {'known' if value is not None else 'unknown'}"] += 1
    if value is None:
        return
    if not isinstance(real, torch.Tensor):  # a shape holds whenever einops does not raise
        assert not case.fully_known, f"{case}: we say {value}, einops raises"
        return
    assert matches(value.shape, tuple(real.shape), {}) and value.device == "cpu", (case, value.shape, real.shape)
    assert not case.fully_known or value.shape == tuple(real.shape), (case, value.shape)
    assert value.dtype is not None and DTYPES[value.dtype] == real.dtype
    if value.strides is not None and real.numel():
        assert all(s == r or n == 1 or is_wildcard(s) for s, r, n in zip(value.strides, real.stride(), real.shape)), \
            (value.strides, real.stride())


def check_strides(plan, tensor, real):
    x = TensorValue(DType.float32, tuple(tensor.shape), "cpu", tuple(tensor.stride()))
    strides = ops_einops.plan_strides(x, plan)
    if strides is None:
        STATS["strides unknown"] += 1
        return
    STATS["strides known"] += 1
    if real.numel() == 0:
        return  # empty tensors' strides are PyTorch's business, never read
    assert all(s == r or n == 1 or is_wildcard(s) for s, r, n in zip(strides, real.stride(), real.shape)), \
        f"strides: we say {strides}, torch {real.stride()} (shape {tuple(real.shape)})"


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_symbolic_transform_holds_for_the_values(rng):
    g = G(rng)
    case = transform_case(g)
    symbols = Symbols(g)
    shape, axes = symbols.shape(case.shape), symbols.axes(case.axes)
    tensor = torch.zeros(case.shape)
    mine, real = compare("transform", lambda: E.plan(shape, case.pattern, case.operation, axes),
                         real_transform(case, tensor), env=symbols.env, ours_shapes=lambda p: [p.shape],
                         full=case.fully_known and not symbols.env)
    if mine is not None and isinstance(real, torch.Tensor):
        x = TensorValue(DType.float32, shape, "cpu", layout.contiguous_strides(shape))
        strides = ops_einops.plan_strides(x, mine)
        STATS[f"symbolic strides {'known' if strides is not None else 'unknown'}"] += 1
        if strides is not None and real.numel():
            got = [concrete(d, symbols.env) for d in strides]
            assert all(is_wildcard(o) or o == r or n == 1 for o, r, n in zip(got, real.stride(), real.shape)), \
                f"strides: we say {strides} (= {got}), torch {real.stride()}"


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_unknown_input_shape(rng):
    g = G(rng)
    case = transform_case(g)
    tensor = torch.zeros(case.shape)
    compare("unknown-input", lambda: E.plan(None, case.pattern, case.operation, case.axes),
            real_transform(case, tensor), ours_shapes=lambda p: [p.shape])


def random_text(g: G, alphabet="abc d()12._", size=8) -> str:
    return "".join(g.pick(alphabet) for _ in range(g.int(0, size)))


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_arbitrary_pattern_text(rng):
    """Parsing: random text fails exactly where einops fails (and gives its shape where it does not)."""
    g = G(rng)
    text = random_text(g) + g.pick([" -> ", "->", " -> ", " -> ", "-", ">", " -> -> "]) + random_text(g)
    if g.coin(0.2):
        text = text.replace(".", "...", 1)
    operation = g.pick(["rearrange", "repeat", "sum", "max"])
    shape = tuple(g.pick([1, 2]) for _ in range(g.int(0, 4)))
    case = Case(operation, text, shape, {})
    compare("text", lambda: E.plan(shape, text, operation, {}), real_transform(case, torch.zeros(shape)), full=True,
            ours_shapes=lambda p: [p.shape])


# -- reductions' dtypes -----------------------------------------------------------------------------------
DTYPES = {DType.float32: torch.float32, DType.float64: torch.float64, DType.float16: torch.float16,
          DType.bfloat16: torch.bfloat16, DType.int64: torch.int64, DType.int32: torch.int32,
          DType.uint8: torch.uint8, DType.bool: torch.bool, DType.complex64: torch.complex64}


@pytest.mark.parametrize("operation", E.REDUCTIONS)
@pytest.mark.parametrize("ours_dtype", list(DTYPES))
@pytest.mark.parametrize("layer", [False, True])
def test_reduction_dtype(operation, ours_dtype, layer):
    x = torch.zeros(2, 3, dtype=DTYPES[ours_dtype])
    make = (lambda: Reduce("a b -> a", operation)(x)) if layer else (lambda: einops.reduce(x, "a b -> a", operation))
    real, real_error = run_real(make)
    mine = ops_einops.reduced_dtype(operation, ours_dtype, layer=layer)
    STATS["dtype"] += 1
    if mine is None:
        assert real_error is not None, f"unknown dtype, einops gives {real.dtype}"
    else:
        assert real_error is None and DTYPES[mine] == real.dtype, (mine, real_error or real.dtype)


# -- layers ----------------------------------------------------------------------------------------------
@SETTINGS
@given(st.randoms(use_true_random=False))
def test_layers_match_einops(rng):
    g = G(rng)
    case = transform_case(g, operation=g.pick(["rearrange", "sum", "mean", "max", "any"]))
    shape = list(case.shape)
    if "..." in case.pattern and g.coin(0.3):
        shape = [1] * g.int(6, 9) + shape  # past the 7 dims einops' layers cook recipes for
    elif g.coin(0.15):
        shape = shape + [2]  # another rank: the layer has no recipe for it
    tensor = torch.zeros(shape)

    def real():
        layer = Rearrange(case.pattern, **case.axes) if case.operation == "rearrange" else \
            Reduce(case.pattern, case.operation, **case.axes)
        return layer(tensor)

    compare("layer", lambda: E.layer_plan(tuple(shape), case.pattern, case.operation, case.axes), real,
            full=case.fully_known, ours_shapes=lambda p: [p.shape])


# -- einops.einsum ---------------------------------------------------------------------------------------
def einsum_case(g: G):
    names = g.shuffled(NAMES + ["_"])[:g.int(1, 5)]
    sizes = {n: g.size() for n in names}
    operands, shapes_ = [], []
    ellipsis = [g.size() for _ in range(g.int(0, 2))]
    for _ in range(g.int(1, 3)):
        labels = [g.pick(names) for _ in range(g.int(0, 3))]
        shape = [sizes[n] if g.coin(0.85) else g.pick([1, 1, 2, 3]) for n in labels]
        if g.coin(0.3):
            at = g.int(0, len(labels))
            labels.insert(at, "...")
            cut = g.int(0, len(ellipsis))
            shape[at:at] = ellipsis[cut:]
        operands.append(labels)
        shapes_.append(tuple(shape))
    seen = list(dict.fromkeys(n for labels in operands for n in labels if n != "..."))
    out = [n for n in seen if g.coin(0.5)]
    if any("..." in labels for labels in operands) and g.coin(0.7):
        out.insert(g.int(0, len(out)), "...")
    pattern = ", ".join(" ".join(labels) for labels in operands) + " -> " + " ".join(out)
    kind = g.int(0, 12)
    if kind == 0:
        pattern = pattern.replace("->", ",")
    elif kind == 1:
        pattern = pattern + " " + g.pick(["zz", "()", "(a b)", "2", seen[0] if seen else "q"])
    elif kind == 2:
        pattern = pattern.replace(" -> ", g.pick([", (a b) -> ", " () -> ", " 2 -> ", " -> -> "]), 1)
    elif kind == 3 and shapes_[0]:
        shapes_[0] = shapes_[0][:-1]
    return pattern, shapes_


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_einops_einsum_matches(rng):
    g = G(rng)
    pattern, shapes_ = einsum_case(g)
    tensors = [torch.zeros(s) for s in shapes_]
    compare("einsum", lambda: E.einsum(shapes_, pattern), lambda: einops.einsum(*tensors, pattern), full=True)
    symbols = Symbols(g)
    symbolic = [symbols.shape(s) for s in shapes_]
    compare("einsum", lambda: E.einsum(symbolic, pattern), lambda: einops.einsum(*tensors, pattern), env=symbols.env,
            full=not symbols.env)


# -- pack / unpack ---------------------------------------------------------------------------------------
def pack_case(g: G):
    before = [g.size() for _ in range(g.int(0, 2))]
    after = [g.size() for _ in range(g.int(0, 2))]
    shapes_ = []
    for _ in range(g.int(1, 3)):
        middle = [g.size() for _ in range(g.int(0, 2))]
        b = [d if g.coin(0.95) else g.size() for d in before]
        a = [d if g.coin(0.95) else g.size() for d in after]
        shape = b + middle + a
        if g.coin(0.05) and shape:
            shape.pop()
        shapes_.append(tuple(shape))
    axes = [f"x{i}" for i in range(len(before))] + ["*"] + [f"y{i}" for i in range(len(after))]
    pattern = " ".join(axes)
    kind = g.int(0, 15)
    if kind == 0:
        pattern = pattern.replace("*", "z")
    elif kind == 1:
        pattern = pattern + " " + g.pick(["*", "_a", "2", "x0"])
    return pattern, shapes_


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_pack_and_unpack_match(rng):
    g = G(rng)
    pattern, shapes_ = pack_case(g)
    tensors = [torch.zeros(s) for s in shapes_]
    packed, _ = compare("pack", lambda: E.pack(shapes_, pattern), lambda: einops.pack(tensors, pattern), full=True,
                        to_shapes=lambda r: [tuple(r[0].shape)] + [tuple(p) for p in r[1]],
                        ours_shapes=lambda o: [o[0], *o[1]])
    symbols = Symbols(g)
    symbolic = [symbols.shape(s) for s in shapes_]
    compare("pack", lambda: E.pack(symbolic, pattern), lambda: einops.pack(tensors, pattern), env=symbols.env,
            full=not symbols.env,
            to_shapes=lambda r: [tuple(r[0].shape)] + [tuple(p) for p in r[1]], ours_shapes=lambda o: [o[0], *o[1]])
    real, error = run_real(lambda: einops.pack(tensors, pattern))
    value = TORCH_FUNCTIONS["einops.pack"](FakeInference(), facts_call(
        [SeqValue("list", tuple(tensor_value(t) for t in tensors)), constant(pattern)]))
    if value is not None:
        STATS["pack transfer known"] += 1
        assert error is None, f"we say {value}, einops raises {error}"
        packed_value, ps_value = value.items
        assert packed_value.shape == tuple(real[0].shape) and packed_value.dtype == DType.float32
        assert [tuple(d.value for d in p.items) for p in ps_value.items] == [tuple(p) for p in real[1]]
        if packed_value.strides is not None and real[0].numel():
            assert all(s == r or n == 1 for s, r, n in zip(packed_value.strides, real[0].stride(), real[0].shape))
    check_pack_with_unknown_items(g, pattern, tensors, real, error)
    if error is not None:
        return
    whole, ps = real[0], [tuple(p) for p in real[1]]
    kind = g.int(0, 5)
    if kind == 0 and ps:
        i = g.int(0, len(ps) - 1)
        ps[i] = tuple(-1 if g.coin(0.7) and k == 0 else d for k, d in enumerate(ps[i])) if ps[i] else (-1,)
    elif kind == 1 and ps:
        ps[g.int(0, len(ps) - 1)] = tuple(g.size() for _ in range(g.int(0, 2)))
    elif kind == 2 and len(ps) >= 2:
        ps[0], ps[1] = (-1,) + ps[0], (-1,) + ps[1]
    elif kind == 3:
        ps.append((g.size(),))
    shape = tuple(whole.shape)
    compare("unpack", lambda: E.unpack(shape, ps, pattern), lambda: einops.unpack(whole, ps, pattern), full=True,
            to_shapes=lambda r: [tuple(t.shape) for t in r], ours_shapes=lambda o: o)
    # Some packed shapes unknown: the pieces whose packed shape is known still are.
    hidden = [None if g.coin(0.4) else p for p in ps]
    compare("unpack", lambda: E.unpack(shape, hidden, pattern), lambda: einops.unpack(whole, ps, pattern),
            to_shapes=lambda r: [tuple(t.shape) for t in r], ours_shapes=lambda o: o)
    sym_shape = symbols.shape(shape)
    sym_ps = [symbols.shape(p) for p in ps]
    compare("unpack", lambda: E.unpack(sym_shape, sym_ps, pattern), lambda: einops.unpack(whole, ps, pattern),
            env=symbols.env, full=not symbols.env, to_shapes=lambda r: [tuple(t.shape) for t in r],
            ours_shapes=lambda o: o)


def check_pack_with_unknown_items(g: G, pattern, tensors, real, error):
    """Some tensors' shapes unknown (not the first's): the packed axis is unknown, the others hold, and each
    known tensor's packed shape too; the transfer claims no dtype, grad or layout the unknown ones decide."""
    if len(tensors) < 2:
        return
    hidden = [0] + [i for i in range(1, len(tensors)) if g.coin(0.5)]
    hidden = [i for i in range(1, len(tensors)) if i in hidden] or [len(tensors) - 1]
    shapes_ = [None if i in hidden else tuple(t.shape) for i, t in enumerate(tensors)]
    compare("pack", lambda: E.pack(shapes_, pattern), lambda: einops.pack(tensors, pattern),
            to_shapes=lambda r: [tuple(r[0].shape)] + [tuple(p) for p in r[1]], ours_shapes=lambda o: [o[0], *o[1]])
    items = tuple(None if i in hidden else tensor_value(t) for i, t in enumerate(tensors))
    value = TORCH_FUNCTIONS["einops.pack"](FakeInference(), facts_call([SeqValue("list", items), constant(pattern)]))
    if value is None or error is not None:
        return  # (an unknown item may be what raises: a fact holds where the call returns)
    STATS["pack transfer, items unknown, known"] += 1
    packed_value, ps_value = value.items
    assert matches(packed_value.shape, tuple(real[0].shape), {})
    assert packed_value.dtype is None and packed_value.strides is None and packed_value.requires_grad is None
    for i, (p, r) in enumerate(zip(ps_value.items, real[1])):
        assert (p.items is None) == (i in hidden)
        assert p.items is None or tuple(d.value for d in p.items) == tuple(r)


def test_pack_with_an_unknown_item_in_a_module():
    """``pack((a, m, c), 'b * d')`` with ``m`` unknown (set on one path from an unknown input): the packed
    tensor is (b, ?, d), and unpacking it gives back the known pieces."""
    source = (
        "import torch\nfrom einops import pack, unpack\n"
        "def f(a, c, adv):\n"
        "    m = a[:, 0:0]\n"
        "    if adv is not None:\n"
        "        m = adv.float()\n"
        "    tokens, ps = pack((a, m, c), 'b * d')\n"
        "    x, y, z = unpack(tokens, ps, 'b * d')\n"
        "    return tokens\n"
        "f(torch.randn(2, 3, 8), torch.randn(2, 5, 8), None)\n"
        "f(torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.zeros(2, 7, 4, 8))\n")
    analysis = analyze(source, "/tmp/pack_unknown.py")
    facts = {(n.lineno, n.id): analysis.facts.values.get(n) for n in ast.walk(analysis.source.tree)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assert facts[(6, "m")] is None or facts[(6, "m")].shape is None  # the parameter: two ranks passed in
    tokens = facts[(7, "tokens")]
    assert tokens.shape[0] == 2 and tokens.shape[2] == 8 and tokens.shape[1].is_fresh and tokens.dtype is None
    assert facts[(8, "x")].shape == (2, 3, 8) and facts[(8, "z")].shape == (2, 5, 8)
    assert facts[(8, "y")] is None or facts[(8, "y")].shape is None
    namespace: dict = {}
    exec(compile(source, "pack_unknown", "exec"), namespace)  # the program runs as written
    real = namespace["f"](torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.zeros(2, 7, 4, 8))
    assert tuple(real.shape) == (2, 3 + 28 + 5, 8)


# -- hand-picked facts -----------------------------------------------------------------------------------
B, T, C = Sym.var("B"), Sym.var("T"), Sym.var("C")


def test_symbolic_split_divides_as_polynomials():
    assert E.rearrange((B, T, 4 * C), "b t (h d) -> b h t d", {"h": 4}) == (B, 4, T, C)
    assert E.rearrange((B, T, C * 8), "b t (h d) -> b h t d", {"h": 8}) == (B, 8, T, C)
    assert E.rearrange((B, T, C), "b t (h d) -> b t h d", {"d": C}) == (B, T, 1, C)


def test_symbolic_split_that_does_not_divide_is_a_fresh_size_and_recombines():
    shape = E.rearrange((B, T, C), "b t (h d) -> b h t d", {"h": 3})
    assert shape[:3] == (B, 3, T) and shape[3].is_fresh
    assert E.rearrange((B, T, C), "b t (h d) -> b t (d h)", {"h": 3}) == (B, T, C)
    assert E.rearrange((B, T, C), "b t (h d) -> (b t) (h d)", {"h": 3}) == (B * T, C)


def test_errors_only_when_certain():
    with pytest.raises(ShapeError, match="can't divide axis of length 3 in chunks of 2"):
        E.rearrange((B, 3), "b (h d) -> b h d", {"h": 2})
    assert E.rearrange((B, C), "b (h d) -> b h d", {"h": 2})[1] == 2  # C may be even: no error
    with pytest.raises(ShapeError, match="Shape mismatch, 2 != 1"):
        E.rearrange((B, 2), "b 1 -> b")
    assert E.rearrange((B, T), "b 1 -> b") == (B,)  # T may be 1


def test_the_vit_patterns():
    assert E.rearrange((8, 3, 224, 224), "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", {"p1": 16, "p2": 16}) \
        == (8, 196, 768)
    assert E.repeat((1, 1, 768), "1 1 d -> b 1 d", {"b": B}) == (B, 1, 768)
    assert E.reduce((B, 197, 768), "b n d -> b d", "mean") == (B, 768)
    assert E.einsum([(B, 12, T, 64), (B, 12, T, 64)], "b h i d, b h j d -> b h i j") == (B, 12, T, T)
    packed, ps = E.pack([(B, 1, C), (B, T, C)], "b * d")
    assert packed == (B, T + 1, C) and ps == [(1,), (T,)]
    assert E.unpack(packed, ps, "b * d") == [(B, 1, C), (B, T, C)]
    assert E.unpack(packed, [(1,), (-1,)], "b * d") == [(B, 1, C), (B, T, C)]


def test_sublist_equation():
    assert E.sublist_equation([[0, 1], [1, 2]], [0, 2]) == "AB,BC->AC"
    assert E.sublist_equation([[Ellipsis, 27]]) == "...b"
    with pytest.raises(ShapeError, match="valid range"):
        E.sublist_equation([[52]])


# -- through the engine (importing ops_einops registers the einops names) --------------------------------
def assigned(text: str) -> dict:
    analysis = analyze(text)
    return {node.id: analysis.facts.values.get(node) for node in ast.walk(analysis.source.tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


HEADER = "import torch\nimport einops\nfrom einops import rearrange, repeat, reduce, pack, unpack\n"


def test_engine_rearrange_repeat_reduce():
    facts = assigned(HEADER + "x = torch.randn(2, 3, 8)\ny = rearrange(x, 'b n (h d) -> b h n d', h=2)\n"
                              "z = repeat(torch.randn(1, 1, 8), '1 1 d -> b 1 d', b=5)\n"
                              "m = reduce(x, 'b n d -> b d', 'mean')\n"
                              "i = reduce(torch.zeros(2, 3, dtype=torch.int32), 'a b -> a', 'sum')\n")
    assert facts["y"].shape == (2, 2, 3, 4) and facts["y"].strides == (24, 4, 8, 1)
    assert facts["y"].dtype == DType.float32 and facts["y"].device == "cpu"
    assert facts["z"].shape == (5, 1, 8) and facts["z"].strides == (0, 8, 1)
    assert facts["m"].shape == (2, 8) and facts["m"].strides is None
    assert facts["i"].dtype == DType.int64


def test_engine_einsum_pack_unpack():
    facts = assigned(HEADER + "q = torch.randn(2, 4, 5, 8)\nk = torch.randn(2, 4, 7, 8)\n"
                              "s = einops.einsum(q, k, 'b h i d, b h j d -> b h i j')\n"
                              "cls = torch.randn(2, 1, 8)\nx = torch.randn(2, 6, 8)\n"
                              "p, ps = pack([cls, x], 'b * d')\nc, rest = unpack(p, ps, 'b * d')\n")
    assert facts["s"].shape == (2, 4, 5, 7)
    assert facts["p"].shape == (2, 7, 8)
    assert facts["c"].shape == (2, 1, 8) and facts["rest"].shape == (2, 6, 8)


def test_engine_symbolic_sizes_from_parameters():
    facts = assigned(HEADER + "def attend(B: int, N: int, heads: int, dim_head: int):\n"
                              "    qkv = torch.randn(B, N, heads * dim_head)\n"
                              "    q = rearrange(qkv, 'b n (h d) -> b h n d', h=heads)\n"
                              "    return q\n")
    q = facts["q"]
    assert [str(d) for d in q.shape] == ["B", "heads", "N", "dim_head"]


def test_engine_layer_construction():
    facts = assigned("import torch\nfrom einops.layers.torch import Rearrange, Reduce\n"
                     "layer = Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)\n"
                     "pool = Reduce('b c h w -> b c', 'mean')\nbad = Rearrange('b c -> b')\n")
    assert isinstance(facts["layer"], ModuleValue) and facts["layer"].kind == "einops.Rearrange"
    assert facts["layer"].setting("axes") == (("p1", 4), ("p2", 4))
    assert facts["pool"].setting("reduction") == "mean"
    assert facts["bad"] is None


def test_call_einops_layer_directly():
    layer = ModuleValue("einops.Rearrange", (), (("pattern", "b c (h p1) (w p2) -> b (h w) (p1 p2 c)"),
                                                 ("reduction", "rearrange"), ("axes", (("p1", 4), ("p2", 4)))))
    x = TensorValue(DType.float32, (2, 3, 16, 16), "cpu", (768, 256, 16, 1), False, True)

    class Inf:
        grad_enabled = True

    out = ops_einops.call_einops_layer(Inf(), layer, x)
    assert out.shape == (2, 16, 48) and out.dtype == DType.float32


def _layer_hook_installed() -> bool:
    facts = assigned("import torch\nfrom einops.layers.torch import Rearrange\n"
                     "y = Rearrange('a b -> b a')(torch.randn(2, 3))\n")
    return isinstance(facts.get("y"), TensorValue)


needs_layer_hook = pytest.mark.skipif(not _layer_hook_installed(),
                                      reason="needs the einops hook in ops_nn.call_module (see ops_einops)")


@needs_layer_hook
def test_engine_layers_in_sequential():
    facts = assigned("import torch\nimport torch.nn as nn\nfrom einops.layers.torch import Rearrange, Reduce\n"
                     "embed = nn.Sequential(Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4),\n"
                     "                      nn.Linear(48, 32))\n"
                     "tokens = embed(torch.randn(2, 3, 16, 16))\n"
                     "pooled = Reduce('b n d -> b d', 'mean')(tokens)\n")
    assert facts["tokens"].shape == (2, 16, 32)
    assert facts["pooled"].shape == (2, 32)


def test_engine_unknown_operands_get_the_patterns_shape():
    # Nothing is known of x: the pattern gives it rank 3, (b, n, 8*d), by use; y follows, in the pattern's names.
    facts = assigned(HEADER + "def f(x):\n    y = rearrange(x, 'b n (h d) -> b h n d', h=8)\n    return y\n")
    assert str(facts["y"].shape) == "(Sym('b'), 8, Sym('n'), Sym('d'))" and facts["y"].dtype is None
    bad = assigned(HEADER + "x = torch.randn(2, 3, 8)\ny = rearrange(x, 'b n (h d) -> b h n d', h=3)\n")
    assert bad["y"] is None  # einops raises: nothing downstream is claimed


def test_report():
    print("\neinops differential cases:", dict(sorted(STATS.items())))
