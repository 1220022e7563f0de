"""``analysis.shapes`` checked against real PyTorch (CPU) on generated shapes and arguments.

Every op runs twice: with our shape function and with torch. Whenever ours gives a shape it must
be torch's; whenever ours raises ``ShapeError`` torch must raise; whenever torch raises ours must
raise too (all-``int`` inputs: ours never says "unknown", except where documented).

The same cases run a second time with some sizes replaced by symbols (``s3`` standing for 3,
``t3`` for another 3): then "unknown" is allowed, but what is said must hold for the values.

``reshape`` runs a third time ("nondeg" mode) with ``nondegenerate=True``: only sizes of at least
2 become symbols, so what is said must hold for them. And symbolic reshapes are checked against
torch for *every* value of their symbols in ``{2, 3, 5}`` (:func:`test_nondegenerate_reshape_holds_for_sizes_at_least_2`).
"""

from __future__ import annotations

import random
import warnings

import pytest

torch = pytest.importorskip("torch")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from torchwise.analysis import shapes as S  # noqa: E402
from torchwise.analysis.dims import Sym  # noqa: E402

EXAMPLES = 200  # per op and mode
TORCH_ERRORS = (RuntimeError, IndexError, ValueError)

SIZES = range(6)


def tensor(shape):
    return torch.zeros(shape)


# -- symbolic mode --------------------------------------------------------------------------
class Symbolizer:
    """Replaces sizes by symbols that stand for them (``s3``/``t3`` = 3): identity in int mode."""

    def __init__(self, seed: int | None, nondegenerate: bool = False):
        self.rng = random.Random(seed) if seed is not None else None
        self.env: dict[str, int] = {}
        self.nondegenerate = nondegenerate  # only sizes >= 2 become symbols; ops assume so
        self.mode = "int" if self.rng is None else "nondeg" if nondegenerate else "sym"

    def __call__(self, dims):
        if self.rng is None or dims is None:
            return dims
        return tuple(self.dim(d) for d in dims)

    def dim(self, d):
        if type(d) is not int or d < (2 if self.nondegenerate else 0) or self.rng.random() < 0.4:
            return d
        name = f"{self.rng.choice('st')}{d}"
        self.env[name] = d
        if d and d % 2 == 0 and (d >= 4 or not self.nondegenerate) and self.rng.random() < 0.2:
            # an expression: 2*s2 for 4
            self.env[f"s{d // 2}"] = d // 2
            return 2 * Sym.var(f"s{d // 2}")
        return Sym.var(name)


def concrete(shape, env):
    """Our shape with the symbols' values; fresh symbols (unknown sizes) stay as wildcards."""
    return tuple(d.subs(env) if isinstance(d, Sym) else d for d in shape)


def matches(ours, real, env) -> bool:
    ours = concrete(ours, env)
    return len(ours) == len(real) and all(
        (isinstance(o, Sym) and all("#" in n for n in o.symbols)) or o == r for o, r in zip(ours, real))


def no_symbols(result) -> bool:
    shapes = result if isinstance(result, list) else [result]
    return all(not isinstance(d, Sym) or d.is_fresh for s in shapes for d in s)


STATS = {"int": [0, 0, 0], "sym": [0, 0, 0], "nondeg": [0, 0, 0]}  # shapes, errors, unknowns


def describe(fn) -> str:
    """The values a generated case's lambda closes over (for failure messages)."""
    return repr({name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ())
                 if not callable(cell.cell_contents)})


def check(ours, theirs, sym: Symbolizer, unknown_ok: bool = False, wildcard_ok: bool = False):
    """``ours(sym)`` against ``theirs()``; each returns a shape or a list of shapes."""
    try:
        _check(ours, theirs, sym, unknown_ok, wildcard_ok)
    except AssertionError as err:
        raise AssertionError(f"{err}\ncase: {describe(theirs)} symbols: {sym.env}") from None


def _check(ours, theirs, sym, unknown_ok, wildcard_ok):
    try:
        mine, my_error = ours(sym), None
    except S.ShapeError as err:
        mine, my_error = None, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            real, real_error = theirs(), None
        except TORCH_ERRORS as err:
            real, real_error = None, err
    mode = sym.mode
    if my_error is not None:
        STATS[mode][1] += 1
        assert real_error is not None, f"we raised {my_error.message!r} but torch gives {real}"
        return
    if mine is None:
        STATS[mode][2] += 1
        assert mode != "int" or unknown_ok, f"unknown with int inputs; torch: {real or real_error}"
        return
    STATS[mode][0] += 1
    if mode != "int" and real_error is not None:
        return  # with symbols a shape means "this, when PyTorch does not raise"
    assert real_error is None, f"we say {mine} but torch raises {real_error}"
    if isinstance(real, (list, tuple)) and real and isinstance(real[0], torch.Tensor):
        real = [tuple(t.shape) for t in real]
        assert isinstance(mine, list) and len(mine) == len(real), (mine, real)
        pairs = list(zip(mine, real))
    else:
        pairs = [(mine, tuple(real))]
    for m, r in pairs:
        assert matches(m, r, sym.env), f"we say {m} (= {concrete(m, sym.env)}), torch says {r}"
    if mode == "int" and not wildcard_ok:
        assert no_symbols(mine), mine


# -- generators -----------------------------------------------------------------------------
class G:
    """Generation from a random that hypothesis seeds (``st.randoms()``): plain calls, so thousands
    of cases take seconds. A failure reports the whole case; hypothesis replays it."""

    def __init__(self, rng):
        self.rng = rng

    def int(self, lo, hi):
        return self.rng.randint(lo, hi)

    def pick(self, options):
        return self.rng.choice(list(options))

    def coin(self, p=0.5):
        return self.rng.random() < p

    def size(self):
        return self.pick(SIZES)

    def list(self, make, lo, hi):
        return [make() for _ in range(self.int(lo, hi))]

    def shape(self, lo=0, hi=4):
        return tuple(self.list(self.size, lo, hi))

    def perm(self, n):
        return self.rng.sample(range(n), n)

    def maybe(self, make, p=0.3):
        return None if self.coin(p) else make()

    def dims(self, lo=-5, hi=4):
        """A ``dim=`` argument: None, one dim, or a tuple of them."""
        kind = self.int(0, 2)
        return None if kind == 0 else self.int(lo, hi) if kind == 1 else \
            tuple(self.list(lambda: self.int(lo, hi), 0, 3))


def related(g, shape):
    """A shape like ``shape``: dims kept, set to 1 or redrawn; leading dims dropped or added."""
    out = [g.pick([d, d, 1, g.size()]) for d in shape]
    cut = g.int(0, len(out))
    out = out[cut:] if g.coin() else out
    extra = g.list(g.size, 0, max(4 - len(out), 0))
    return tuple(extra + out)


def dim_arg(g, rank, extra=1):
    bound = max(rank, 1) + extra
    return g.int(-bound, bound - 1 + (extra > 0))


OPS = {}


def op(fn):
    OPS[fn.__name__] = fn
    return fn


@op
def broadcast(g):
    base = g.shape()
    shapes = [base] + [related(g, base) for _ in range(g.int(1, 2))]
    return (lambda s: S.broadcast(*map(s, shapes))), (lambda: torch.broadcast_shapes(*shapes))


def product_shapes(g, ranks_a, ranks_b):
    a = g.list(g.size, *ranks_a)
    b = g.list(g.size, *ranks_b)
    if a and b and g.int(0, 3):  # mostly matching inner sizes
        b[-2 if len(b) > 1 else -1] = a[-1]
    if len(a) > 2 and len(b) > 2 and g.coin():
        b[:-2] = related(g, tuple(a[:-2]))
    return tuple(a), tuple(b)


@op
def matmul(g):
    a, b = product_shapes(g, (0, 4), (0, 4))
    return (lambda s: S.matmul(s(a), s(b))), (lambda: torch.matmul(tensor(a), tensor(b)).shape)


@op
def mm_bmm_dot_mv(g):
    kind = g.pick(["mm", "bmm", "dot", "mv"])
    ranks = {"mm": ((1, 3), (1, 3)), "bmm": ((2, 4), (2, 4)), "dot": ((0, 2), (0, 2)), "mv": ((1, 3), (0, 2))}
    a, b = product_shapes(g, *ranks[kind])
    if kind == "bmm" and len(a) == 3 and len(b) == 3 and g.coin():
        b = (a[0],) + b[1:]
    fn = getattr(torch, kind)
    return (lambda s: getattr(S, kind)(s(a), s(b))), (lambda: fn(tensor(a), tensor(b)).shape)


@op
def linear(g):
    x = g.shape(0, 3)
    w = g.shape(0, 3)
    if x and w and g.int(0, 3):
        w = w[:-1] + (x[-1],)
    out = w[0] if len(w) == 2 else 1
    bias = g.pick([None, (), (out,), (1,), (g.size(),), (g.size(), out)])
    has_bias = bias is not None
    unknown = has_bias and (len(w) == 1 and len(x) != 2 or len(bias) > 1 and len(x) != 2)

    def theirs():
        return torch.nn.functional.linear(tensor(x), tensor(w), tensor(bias) if has_bias else None).shape
    return (lambda s: S.linear(s(x), s(w), s(bias))), theirs, unknown


def factorization(g, n, rank):
    """``rank`` sizes whose product is ``n``."""
    if n == 0:
        dims = [g.size() for _ in range(rank)]
        if rank:
            dims[g.int(0, rank - 1)] = 0
        return dims
    dims = []
    for _ in range(rank - 1):
        divisors = [d for d in range(1, n + 1) if n % d == 0]
        d = g.pick(divisors)
        dims.append(d)
        n //= d
    return dims + [n] if rank else ([] if n == 1 else [n])


@op
def reshape(g):
    shape = g.shape()
    numel = 1
    for d in shape:
        numel *= d
    if g.int(0, 3):
        want = factorization(g, numel, g.int(0, 4))
        if want and g.coin():
            want[g.int(0, len(want) - 1)] = -1
    else:
        want = g.list(lambda: g.int(-2, 6), 0, 4)
    return (lambda s: S.reshape(s(shape), s(want), nondegenerate=s.nondegenerate)), \
        (lambda: tensor(shape).reshape(want).shape)


@op
def permute(g):
    shape = g.shape()
    rank = len(shape)
    if g.int(0, 3):
        dims = [d - rank * g.coin() for d in g.perm(rank)]
    else:
        dims = g.list(lambda: g.int(-rank - 1, rank), 0, 5)
    return (lambda s: S.permute(s(shape), dims)), (lambda: tensor(shape).permute(dims).shape)


@op
def transpose_t_mT(g):
    shape = g.shape()
    kind = g.pick(["transpose", "t", "mT"])
    if kind == "transpose":
        d0, d1 = dim_arg(g, len(shape)), dim_arg(g, len(shape))
        return (lambda s: S.transpose(s(shape), d0, d1)), (lambda: tensor(shape).transpose(d0, d1).shape)
    if kind == "t":
        return (lambda s: S.t(s(shape))), (lambda: tensor(shape).t().shape)
    return (lambda s: S.mT(s(shape))), (lambda: tensor(shape).mT.shape)


@op
def unsqueeze_squeeze(g):
    shape = g.shape()
    if g.coin():
        d = dim_arg(g, len(shape) + 1)
        return (lambda s: S.unsqueeze(s(shape), d)), (lambda: tensor(shape).unsqueeze(d).shape)
    dim = g.dims()

    def theirs():
        t = tensor(shape)
        return (t.squeeze() if dim is None else t.squeeze(dim)).shape
    return (lambda s: S.squeeze(s(shape), dim)), theirs


@op
def flatten(g):
    shape = g.shape()
    a, b = dim_arg(g, len(shape)), dim_arg(g, len(shape))
    return (lambda s: S.flatten(s(shape), a, b)), (lambda: tensor(shape).flatten(a, b).shape)


@op
def expand_repeat(g):
    shape = g.shape()
    lead = g.list(lambda: g.int(-1, 4), 0, 2)
    if g.coin():
        want = lead + [g.pick([-1, d, g.size()] if d != 1 else [-1, 1, g.size()])
                       for d in shape]
        if g.int(0, 5) == 0:
            want = want[1:]
        nonsense = not shape and any(d < 0 for d in want) and 0 in want  # torch makes size -1
        return (lambda s: S.expand(s(shape), s(want))), (lambda: tensor(shape).expand(want).shape), nonsense
    reps = g.list(lambda: g.int(-1, 3), max(len(shape) - 1, 0), len(shape) + 2)
    return (lambda s: S.repeat(s(shape), s(reps))), (lambda: tensor(shape).repeat(reps).shape)


@op
def cat_stack(g):
    base = g.shape()
    d = dim_arg(g, len(base) + 1)
    shapes = []
    for _ in range(g.int(0, 3)):
        roll = g.int(0, 5)
        if roll == 0:
            shapes.append((0,))  # the legacy empty tensor cat skips
        elif roll == 1:
            shapes.append(related(g, base))
        else:
            s2 = list(base)
            if base and -len(base) <= d < len(base):
                s2[d] = g.size()
            shapes.append(tuple(s2))
    if g.coin():
        return (lambda s: S.cat([s(x) for x in shapes], d)), \
            (lambda: torch.cat([tensor(x) for x in shapes], d).shape)
    shapes = [base if g.int(0, 3) else x for x in shapes]
    return (lambda s: S.stack([s(x) for x in shapes], d)), \
        (lambda: torch.stack([tensor(x) for x in shapes], d).shape)


@op
def split_chunk_unbind(g):
    shape = g.shape()
    d = dim_arg(g, len(shape))
    kind = g.pick(["split", "sections", "chunk", "unbind"])
    if kind == "split":
        n = g.int(-1, 4)
        return (lambda s: S.split(s(shape), n, d)), (lambda: list(torch.split(tensor(shape), n, d)))
    if kind == "sections":
        size = shape[d] if shape and -len(shape) <= d < len(shape) else 3
        parts = []
        left = size
        while left > 0 and len(parts) < 4:
            p = g.int(0, left)
            parts.append(p)
            left -= p
        if g.int(0, 3) == 0:
            parts.append(g.int(0, 2))
        elif left:
            parts.append(left)
        return (lambda s: S.split(s(shape), list(s(tuple(parts))), d)), \
            (lambda: list(torch.split(tensor(shape), parts, d)))
    if kind == "chunk":
        n = g.int(0, 4)
        return (lambda s: S.chunk(s(shape), n, d)), (lambda: list(torch.chunk(tensor(shape), n, d)))
    return (lambda s: S.unbind(s(shape), d)), (lambda: list(torch.unbind(tensor(shape), d)))


@op
def reduce(g):
    shape = g.shape()
    dim = g.dims()
    keepdim = g.coin()
    return (lambda s: S.reduce(s(shape), dim, keepdim)), \
        (lambda: torch.sum(tensor(shape), dim=dim, keepdim=keepdim).shape)


@op
def narrow_diagonal(g):
    shape = g.shape()
    if g.coin():
        d = dim_arg(g, len(shape))
        start, length = g.int(-6, 6), g.int(-1, 6)
        return (lambda s: S.narrow(s(shape), d, start, s((length,))[0])), \
            (lambda: tensor(shape).narrow(d, start, length).shape)
    off, d1, d2 = g.int(-5, 5), dim_arg(g, len(shape)), dim_arg(g, len(shape))
    return (lambda s: S.diagonal(s(shape), off, d1, d2)), \
        (lambda: tensor(shape).diagonal(off, d1, d2).shape)


@op
def index(g):
    shape = g.shape()
    items, real_items, pos = [], [], 0
    for _ in range(g.int(0, 5)):
        kind = g.pick(["int", "int", "slice", "slice", "none", "ellipsis", "mask", "gather", "gather", "take"])
        if kind == "int":
            i = g.int(-6, 5)
            items.append(i)
            real_items.append(i)
            pos += 1
        elif kind == "slice":
            bound = lambda: g.int(-7, 7)  # noqa: E731
            sl = slice(g.maybe(bound), g.maybe(bound), g.maybe(lambda: g.int(-1, 3)))
            items.append(sl)
            real_items.append(sl)
            pos += 1
        elif kind == "none":
            items.append(None)
            real_items.append(None)
        elif kind == "ellipsis":
            items.append(Ellipsis)
            real_items.append(Ellipsis)
        elif kind in ("gather", "take"):
            size = shape[pos] if pos < len(shape) else 1
            top = size if g.int(0, 9) else size + 2  # now and then out of bounds
            if kind == "take":
                positions = tuple(g.int(-top, max(top - 1, 0)) for _ in range(g.int(1, 3)))
                items.append(S.Take(positions))
                real_items.append(list(positions))
            else:
                # in bounds (an index tensor's values are data, which the shapes do not see), except on an
                # empty dim, where any index is out of bounds
                ishape = tuple(g.size() if g.int(0, 3) else 1 for _ in range(g.int(0, 2)))
                items.append(S.Gather(ishape))
                # in bounds of any non-empty dim: an earlier `...` moves which dim this one indexes
                low = min([d for d in shape if d > 0], default=1)
                real_items.append(torch.randint(0, low, ishape))
            pos += 1
        else:
            rank = g.int(1, 2)
            mshape = list(shape[pos:pos + rank]) + [g.size()] * max(0, rank - len(shape[pos:]))
            if g.int(0, 5) == 0:
                mshape[0] = g.size()
            items.append(S.Mask(tuple(mshape)))
            real_items.append(torch.rand(mshape) > 0.5)
            pos += rank

    def ours(s):
        return S.index(s(shape), [S.Mask(s(it.shape)) if isinstance(it, S.Mask) else
                                  S.Gather(s(it.shape)) if isinstance(it, S.Gather) and it.shape else
                                  Sym.fresh("i") if isinstance(it, S.Gather) else it for it in items])
    masks = sum(isinstance(it, S.Mask) for it in items)
    unknown = sum(it is Ellipsis for it in items) > 1 or masks > 1 or \
        (masks and any(isinstance(it, (S.Gather, S.Take)) for it in items))
    return ours, (lambda: tensor(shape)[tuple(real_items)].shape), unknown, True


@op
def einsum(g):
    letters = "abcdAB"
    sizes_of = {c: g.size() for c in letters}
    terms, shapes = [], []
    for _ in range(g.int(1, 3)):
        labels = g.list(lambda: g.pick(letters), 0, 3)
        shape = [sizes_of[c] if g.int(0, 4) else g.pick([1, g.size()])
                 for c in labels]
        term = "".join(labels)
        if g.int(0, 3) == 0:
            at = g.int(0, len(labels))
            ell = g.list(lambda: g.pick([1, 2, 3]), 0, 2)
            term = "".join(labels[:at]) + "..." + "".join(labels[at:])
            shape = shape[:at] + ell + shape[at:]
        if g.int(0, 9) == 0:
            shape = shape + [2]  # a rank mismatch
        terms.append(term)
        shapes.append(tuple(shape))
    eq = ",".join(terms)
    if g.coin():
        used = sorted(set("".join(terms).replace(".", "")))
        out = g.list(lambda: g.pick(used + ["z"]), 0, 3) \
            if g.int(0, 3) else []
        out = "".join(dict.fromkeys(out)) if g.int(0, 5) else "".join(out)
        if "..." in eq and g.coin():
            out = "..." + out
        eq += "->" + out
    return (lambda s: S.einsum(eq, [s(x) for x in shapes])), \
        (lambda: torch.einsum(eq, *[tensor(x) for x in shapes]).shape)


# -- the tests ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["int", "sym"])
@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(rng=st.randoms(use_true_random=True))
def test_op_agrees_with_torch(name, mode, rng):
    g = G(rng)
    case = OPS[name](g)
    ours, theirs = case[0], case[1]
    unknown_ok = len(case) > 2 and case[2]
    wildcard_ok = len(case) > 3 and case[3]
    check(ours, theirs, Symbolizer(g.int(0, 2**32) if mode == "sym" else None), unknown_ok, wildcard_ok)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(rng=st.randoms(use_true_random=True))
def test_reshape_nondegenerate_agrees_with_torch(rng):
    g = G(rng)
    ours, theirs = OPS["reshape"](g)
    check(ours, theirs, Symbolizer(g.int(0, 2**32), nondegenerate=True))


# -- nondegenerate reshapes, for every value of the symbols ----------------------------------------
NAMES = ("B", "T", "H")
VALUES = (1, 2, 3, 5)  # nondegenerate: every size >= 1 (a batch of one is real)


def atoms(dim):
    """A size as factors: ``12*B*T`` -> ``[12, B, T]``; an int as itself (1: nothing)."""
    if isinstance(dim, Sym):
        (mono, coeff), = dim.terms.items()
        return ([coeff] if coeff != 1 else []) + [Sym.var(n) for n in mono]
    return [] if dim == 1 else [dim]


def regroup(g, factors):
    """``factors`` (maybe two swapped) cut into consecutive groups, multiplied; 1s sprinkled."""
    factors = list(factors)
    if len(factors) > 1 and g.coin(0.3):
        i = g.int(0, len(factors) - 2)
        factors[i], factors[i + 1] = factors[i + 1], factors[i]
    groups, current = [], []
    for f in factors:
        current.append(f)
        if g.coin(0.5):
            groups.append(current)
            current = []
    if current or not groups:
        groups.append(current)
    out = []
    for group in groups:
        size = 1
        for f in group:
            size = size * f
        out.append(size)
        if g.coin(0.1):
            out.append(1)
    return out


def symbolic_shape(g):
    return tuple(Sym.var(g.pick(NAMES)) if g.coin(0.6) else g.pick((1, 2, 3, 4, 12))
                 for _ in range(g.int(1, 4)))


def instances(dims):
    """Every assignment of ``VALUES`` to the symbols of ``dims``."""
    from itertools import product as each
    names = sorted({n for d in dims if isinstance(d, Sym) for n in d.symbols})
    return [dict(zip(names, values)) for values in each(VALUES, repeat=len(names))]


NONDEG = {"raised": 0, "shapes": 0, "fresh": 0, "raised_by_assumption": 0}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(rng=st.randoms(use_true_random=True))
def test_nondegenerate_reshape_holds_for_sizes_at_least_1(rng):
    """With ``nondegenerate=True``, a ``ShapeError`` means torch raises for *every* value >= 1 of
    the symbols (here: each in {1, 2, 3, 5}), and a shape is torch's for every value where torch
    does not raise."""
    g = G(rng)
    shape = symbolic_shape(g)
    factors = [f for d in shape for f in atoms(d)]
    kind = g.int(0, 3)
    if kind == 0 and factors:      # one factor too few
        del factors[g.int(0, len(factors) - 1)]
    elif kind == 1:                # one factor too many
        factors.insert(g.int(0, len(factors)), g.pick((2, 3, Sym.var(g.pick(NAMES)))))
    want = regroup(g, factors)
    if g.coin(0.3):
        want[g.int(0, len(want) - 1)] = -1
    try:
        mine, my_error = S.reshape(shape, want, nondegenerate=True), None
    except S.ShapeError as err:
        mine, my_error = None, err
    NONDEG["raised" if my_error else "shapes"] += 1
    if my_error is not None:
        try:
            S.reshape(shape, want)
            NONDEG["raised_by_assumption"] += 1  # an error only thanks to the assumption
        except S.ShapeError:
            pass
    for env in instances(tuple(shape) + tuple(want)):
        size, requested = concrete(shape, env), concrete(want, env)
        try:
            real, real_error = tensor(size).reshape(requested).shape, None
        except TORCH_ERRORS as err:
            real, real_error = None, err
        where = f"reshape {shape} to {want} at {env}"
        if my_error is not None:
            assert real_error is not None, f"{where}: we raise {my_error}, torch gives {real}"
        elif real_error is None:
            NONDEG["fresh"] += any(isinstance(d, Sym) and d.is_fresh for d in mine)
            assert matches(mine, real, env), f"{where}: we say {mine}, torch {tuple(real)}"


def test_nondegenerate_reshape_count():
    if not NONDEG["shapes"]:
        pytest.skip("run with the whole module")
    print(f"\nnondegenerate reshapes: {NONDEG}")
    # A missing or extra symbol never raises (it may be 1): only a missing or extra constant factor does.
    assert NONDEG["raised"] >= EXAMPLES // 20 and NONDEG["shapes"] >= EXAMPLES // 5
    assert NONDEG["raised_by_assumption"] >= EXAMPLES // 40


def test_spec_messages():
    with pytest.raises(S.ShapeError) as err:
        S.broadcast((3, 4), (3,))
    assert err.value.message == "cannot broadcast (3, 4) with (3,): dim -1 is 4 vs 3"
    assert err.value.data["dim"] == -1 and err.value.data["sizes"] == (4, 3)
    assert err.value.data["rows"] == [(3, 4), (None, 3)]
    with pytest.raises(S.ShapeError, match=r"shape '\[5, 5\]' is invalid for input of size 12"):
        S.reshape((3, 4), (5, 5))
    with pytest.raises(S.ShapeError, match="index 5 is out of bounds for dimension 0 with size 5"):
        S.index((5,), [5])
    with pytest.raises(S.ShapeError, match=r"expected to be in range of \[-2, 1\], but got 2"):
        S.transpose((3, 4), 0, 2)
    assert S.index((5,), [slice(3, 100)]) == (2,)  # slices clamp, never raise


def test_generated_case_count():
    """Run last in this module: the generated cases really ran, in both modes."""
    ran = {mode: sum(counts) for mode, counts in STATS.items()}
    if ran["int"] == 0:
        pytest.skip("run with the whole module")
    print(f"\nshapes truth: {STATS}")
    assert ran["int"] >= len(OPS) * EXAMPLES // 2 and STATS["int"][2] < ran["int"] // 20
