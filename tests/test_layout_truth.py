"""``analysis.layout`` checked against real PyTorch (CPU): generated chains of view and copy ops.

After every step of a chain our layout must give torch's shape, ``stride()`` and
``is_contiguous()``; at the end, for generated target shapes with the same element count,
``can_view`` must say exactly whether ``tensor.view(target)`` works. All-``int`` shapes: zero
disagreements and no "unknown".

The same chains run with some sizes replaced by symbols (``s3`` standing for 3): answers may be
unknown, but every stated stride (of a dim whose size is not 1, in a non-empty tensor: the two
documented conventions) and every yes/no answer must be torch's.

A third mode ("nondeg") replaces only sizes of at least 2 by symbols and asks ``view``/``can_view``
with ``nondegenerate=True`` (every symbolic size assumed >= 2): what is decided must be torch's.
And :func:`test_nondegenerate_views_hold_for_sizes_at_least_2` builds chains on symbolic shapes
and checks every decided answer against torch for *every* value of the symbols in ``{2, 3, 5}``.
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
from torchwise.analysis.layout import Layout, can_view, is_contiguous, view_strides  # noqa: E402

EXAMPLES = 400  # chains per mode
SIZES = (0, 1, 2, 2, 3, 3, 4, 5)
TORCH_ERRORS = (RuntimeError, IndexError, ValueError)
STATS = {mode: {"steps": 0, "errors": 0, "views": 0, "view_fails": 0, "unknown": 0, "strides_checked": 0,
                "answers": 0, "view_answers": 0} for mode in ("int", "sym", "nondeg")}


class Symbolizer:
    """Sizes to symbols standing for them (``s3``/``t3`` = 3); identity in int mode."""

    def __init__(self, seed, nondegenerate=False):
        self.rng = random.Random(seed) if seed is not None else None
        self.env: dict[str, int] = {}
        self.nondegenerate = nondegenerate  # only sizes >= 2 become symbols; views assume so

    def __call__(self, dims):
        if self.rng is None:
            return tuple(dims)
        out = []
        for d in dims:
            if type(d) is int and d >= (2 if self.nondegenerate else 0) and self.rng.random() < 0.5:
                name = f"{self.rng.choice('st')}{d}"
                self.env[name] = d
                out.append(Sym.var(name))
            else:
                out.append(d)
        return tuple(out)

    def value(self, dim):
        return dim.subs(self.env) if isinstance(dim, Sym) else dim


def is_unknown(dim) -> bool:
    return isinstance(dim, Sym) and any("#" in n for n in dim.symbols)


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


def factorization(g, n, rank):
    if n == 0:
        dims = [g.size() for _ in range(rank)]
        if rank:
            dims[g.int(0, rank - 1)] = 0
        return dims
    dims = []
    for _ in range(max(rank - 1, 0)):
        d = g.pick([d for d in range(1, n + 1) if n % d == 0])
        dims.append(d)
        n //= d
    return dims + [n] if rank else ([] if n == 1 else [n])


# -- the steps: (ours(layout, sym), theirs(tensor)) drawn for the current tensor --------------
def dim_of(g, rank, extra=0):
    bound = max(rank, 1)
    return g.int(-bound - extra, bound - 1 + extra)


def step(g, t):
    rank = t.dim()
    kind = g.pick([  # the ones that make odd strides, twice
        "transpose", "permute", "t", "mT", "expand", "step_slice", "index", "unsqueeze", "squeeze",
        "int_index", "contiguous", "clone", "reshape", "view", "flatten", "narrow", "diagonal",
        "transpose", "permute", "expand", "step_slice", "narrow", "diagonal",
    ])
    if kind == "transpose":
        a, b = dim_of(g, rank), dim_of(g, rank)
        return kind, (lambda x, s: x.transpose(a, b)), (lambda x: x.transpose(a, b))
    if kind == "permute":
        perm = g.perm(rank)
        return kind, (lambda x, s: x.permute(perm)), (lambda x: x.permute(tuple(perm)))
    if kind == "t":
        return kind, (lambda x, s: x.t()), (lambda x: x.t())
    if kind == "mT":
        return kind, (lambda x, s: x.mT()), (lambda x: x.mT)
    if kind == "expand":
        lead = g.list(lambda: g.int(1, 3), 0, 1 if rank < 4 else 0)
        want = lead + [g.pick([-1, d] if d != 1 else [-1, 1, 0, 2, 3]) for d in t.shape]
        return kind, (lambda x, s: x.expand(s(want))), (lambda x: x.expand(tuple(want)))
    if kind in ("step_slice", "index"):
        items = []
        if kind == "step_slice" and rank:
            d = g.int(0, rank - 1)
            bound = lambda: g.int(-6, 6)  # noqa: E731
            items = [slice(None)] * d + [slice(g.maybe(bound), g.maybe(bound), g.int(1, 3))]
        else:
            for _ in range(g.int(0, 3)):
                kind = g.int(0, 3)
                bound = lambda: g.int(-4, 4)  # noqa: E731
                items.append(g.int(-3, 3) if kind == 0 else None if kind == 1 else Ellipsis if kind == 2 else
                             slice(g.maybe(bound), g.maybe(bound), g.maybe(lambda: g.int(1, 3))))
            if sum(it is Ellipsis for it in items) > 1:
                items = [it for it in items if it is not Ellipsis]
        return kind, (lambda x, s: x[tuple(items)]), (lambda x: x[tuple(items)])
    if kind == "unsqueeze":
        d = dim_of(g, rank + 1)
        return kind, (lambda x, s: x.unsqueeze(d)), (lambda x: x.unsqueeze(d))
    if kind == "squeeze":
        d = g.maybe(lambda: g.int(-rank - 1, rank))
        return kind, (lambda x, s: x.squeeze(d)), (lambda x: x.squeeze() if d is None else x.squeeze(d))
    if kind == "int_index":
        size = t.shape[0] if rank else 1
        i = g.int(-size, size - 1) if size and g.int(0, 3) else g.int(-3, 3)
        return kind, (lambda x, s: x[i]), (lambda x: x[i])
    if kind == "contiguous":
        return kind, (lambda x, s: x.to_contiguous()), (lambda x: x.contiguous())
    if kind == "clone":
        return kind, (lambda x, s: x.clone()), (lambda x: x.clone())
    if kind in ("reshape", "view"):
        want = factorization(g, t.numel(), g.int(0 if t.numel() else 1, 4))
        if want and g.coin():
            want[g.int(0, len(want) - 1)] = -1
        return kind, (lambda x, s: x.view(s(want), nondegenerate=s.nondegenerate) if kind == "view"
                      else x.reshape(s(want))), (lambda x: getattr(x, kind)(tuple(want)))
    if kind == "flatten":
        a, b = dim_of(g, rank), dim_of(g, rank)
        return kind, (lambda x, s: x.flatten(a, b)), (lambda x: x.flatten(a, b))
    if kind == "narrow":
        d = dim_of(g, rank)
        start, length = g.int(-3, 3), g.int(0, 3)
        return kind, (lambda x, s: x.narrow(d, start, length)), (lambda x: x.narrow(d, start, length))
    off, a, b = g.int(-2, 2), dim_of(g, rank), dim_of(g, rank)
    return kind, (lambda x, s: x.diagonal(off, a, b)), (lambda x: x.diagonal(off, a, b))


def agree(ours: Layout, real, sym: Symbolizer, mode: str, where: str):
    assert len(ours.shape) == real.dim(), where
    for o, r in zip(ours.shape, real.shape):
        assert is_unknown(o) or sym.value(o) == r, where
    contiguous = ours.is_contiguous()
    if mode == "int":
        assert ours.strides == real.stride(), where
        assert contiguous == real.is_contiguous(), where
        return
    if contiguous is not None:
        STATS[mode]["answers"] += 1
        assert contiguous == real.is_contiguous(), where
    if ours.strides is None:
        STATS[mode]["unknown"] += 1
        return
    if real.numel():
        for i, (o, r) in enumerate(zip(ours.strides, real.stride())):
            if real.shape[i] != 1 and not is_unknown(o):
                STATS[mode]["strides_checked"] += 1
                assert sym.value(o) == r, f"{where}: stride {i}"


def assumed(ours: Layout, real) -> bool:
    """Whether ``nondegenerate``'s assumption holds: unknown sizes (fresh symbols: a strided
    slice of a symbolic size) are assumed >= 2 too, and may not be. A fresh symbol enters a
    shape as a whole dim (later perhaps multiplied): checked then, the chain stops if it is < 2.
    Named symbols are >= 2 here."""
    return all(r >= 2 for o, r in zip(ours.shape, real.shape) if isinstance(o, Sym) and o.is_fresh)


def run_chain(g, mode):
    sym = Symbolizer(g.int(0, 2**32) if mode != "int" else None, nondegenerate=mode == "nondeg")
    shape = g.shape()
    real = torch.zeros(shape)
    ours = Layout.contiguous(sym(shape))
    history = [f"zeros{shape} as {ours.shape}"]
    agree(ours, real, sym, mode, " -> ".join(history))
    for _ in range(g.int(1, 6)):
        kind, mine, theirs = step(g, real)
        try:
            nxt, my_error = mine(ours, sym), None
        except S.ShapeError as err:
            nxt, my_error = None, err
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                real_next, real_error = theirs(real), None
            except TORCH_ERRORS as err:
                real_next, real_error = None, err
        history.append(f"{kind}{describe(mine)}")
        where = " -> ".join(history) + f" {sym.env}"
        if my_error is not None:
            assert real_error is not None, f"{where}: we raise {my_error}, torch does not"
            STATS[mode]["errors"] += 1
            return
        if nxt is None:  # rank unknown: only with symbols (squeeze of a maybe-1 size)
            assert mode != "int", where
            return
        if real_error is not None:
            assert mode != "int", f"{where}: torch raises {real_error}, we do not"
            return
        STATS[mode]["steps"] += 1
        ours, real = nxt, real_next
        agree(ours, real, sym, mode, where)
        if mode == "nondeg" and not assumed(ours, real):
            return
    for _ in range(3):
        target = factorization(g, real.numel(), g.int(0 if real.numel() else 1, 4))
        try:
            answer = can_view(ours.shape, ours.strides, sym(target), nondegenerate=sym.nondegenerate)
        except S.ShapeError:
            assert mode == "sym", target  # nondeg: the element counts are equal at values >= 2
            continue
        try:
            real.view(target)
            works = True
        except RuntimeError:
            works = False
        STATS[mode]["views"] += 1
        STATS[mode]["view_fails"] += not works
        STATS[mode]["view_answers"] += answer is not None
        if mode == "int":
            assert answer is works, f"{' -> '.join(history)}: view{tuple(target)}"
        elif answer is not None:
            assert answer is works, f"{' -> '.join(history)}: view{tuple(target)} {sym.env}"


def describe(fn) -> str:
    values = [cell.cell_contents for cell in fn.__closure__ or () if not callable(cell.cell_contents)]
    return repr(tuple(values))


@pytest.mark.parametrize("mode", ["int", "sym", "nondeg"])
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(rng=st.randoms(use_true_random=True))
def test_layout_chain_agrees_with_torch(mode, rng):
    run_chain(G(rng), mode)


# -- nondegenerate views, for every value of the symbols ------------------------------------------
NAMES = ("B", "T", "H")
VALUES = (2, 3, 5)
NONDEG = {"chains": 0, "views": 0, "yes": 0, "no": 0, "unknown": 0, "decided_by_assumption": 0,
          "strides_checked": 0}


def concrete(dims, env):
    return tuple(d.subs(env) if isinstance(d, Sym) else d for d in dims)


def atoms(dim):
    """A size as factors: ``12*B*T`` -> ``[12, B, T]``; an int as itself (1: nothing)."""
    if isinstance(dim, Sym):
        (mono, coeff), = dim.terms.items()
        return ([coeff] if coeff != 1 else []) + [Sym.var(n) for n in mono]
    return [] if dim == 1 else [dim]


def regroup(g, shape):
    """A target of the same element count: the factors of ``shape`` (two maybe swapped) cut into
    consecutive groups; 1s sprinkled; maybe one ``-1``."""
    factors = [f for d in shape for f in atoms(d)]
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
            out.insert(g.int(0, len(out)), 1)
    if g.coin(0.3):
        out[g.int(0, len(out) - 1)] = -1
    return tuple(out)


def nondeg_step(g, ours: Layout):
    """``(name, ours(layout), theirs(tensor, env))`` with valid arguments."""
    rank = len(ours.shape)
    kind = g.pick(["transpose", "transpose", "permute", "unsqueeze", "expand", "slice", "narrow",
                   "contiguous", "reshape", "view", "view"])
    ints = [d for d in range(rank) if type(ours.shape[d]) is int and ours.shape[d] >= 2]
    if kind == "transpose" and rank >= 2:
        a, b = g.int(0, rank - 1), g.int(0, rank - 1)
        return f"transpose{a, b}", (lambda x: x.transpose(a, b)), (lambda x, env: x.transpose(a, b))
    if kind == "permute" and rank >= 2:
        perm = tuple(g.perm(rank))
        return f"permute{perm}", (lambda x: x.permute(perm)), (lambda x, env: x.permute(perm))
    if kind == "expand" and 1 in ours.shape:
        want = tuple(g.pick([Sym.var(g.pick(NAMES)), 3]) if d == 1 and g.coin(0.7) else -1
                     for d in ours.shape)
        return f"expand{want}", (lambda x: x.expand(want)), (lambda x, env: x.expand(concrete(want, env)))
    if kind == "slice" and ints:
        d = g.pick(ints)
        items = (slice(None),) * d + (slice(None, None, 2),)
        return f"[{items}]", (lambda x: x[items]), (lambda x, env: x[items])
    if kind == "narrow" and ints:
        d = g.pick(ints)
        start = g.int(0, 1)
        length = g.int(1, ours.shape[d] - start)
        return f"narrow{d, start, length}", (lambda x: x.narrow(d, start, length)), \
            (lambda x, env: x.narrow(d, start, length))
    if kind == "contiguous":
        return "contiguous", (lambda x: x.to_contiguous()), (lambda x, env: x.contiguous())
    if kind in ("reshape", "view"):
        want = regroup(g, ours.shape)
        mine = (lambda x: x.reshape(want)) if kind == "reshape" else \
            (lambda x: x.view(want, nondegenerate=True))
        return f"{kind}{want}", mine, (lambda x, env: getattr(x, kind)(concrete(want, env)))
    d = g.int(0, rank)
    return f"unsqueeze({d})", (lambda x: x.unsqueeze(d)), (lambda x, env: x.unsqueeze(d))


def agree_everywhere(ours: Layout, reals, envs, where):
    for env, real in zip(envs, reals):
        assert concrete(ours.shape, env) == tuple(real.shape), f"{where} at {env}"
        contiguous = ours.is_contiguous()
        assert contiguous is None or contiguous == real.is_contiguous(), f"{where} at {env}"
        if ours.strides is not None and real.numel():
            for i, (o, r) in enumerate(zip(ours.strides, real.stride())):
                if real.shape[i] != 1 and not is_unknown(o):
                    assert concrete((o,), env)[0] == r, f"{where}: stride {i} at {env}"


@settings(max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(rng=st.randoms(use_true_random=True))
def test_nondegenerate_views_hold_for_sizes_at_least_2(rng):
    """Chains on symbolic shapes (``B``, ``T``, ``H`` and ints); every answer of ``view`` and
    ``can_view`` with ``nondegenerate=True`` must be torch's for every value of the symbols in
    {2, 3, 5}: a raised view fails for all of them, a stated stride is theirs, True/False holds."""
    from itertools import product as each

    g = G(rng)
    shape = tuple(Sym.var(g.pick(NAMES)) if g.coin(0.6) else g.pick((0, 1, 2, 3, 4, 12, 1, 2, 3, 4, 12))
                  for _ in range(g.int(1, 4)))
    envs = [dict(zip(NAMES, values)) for values in each(VALUES, repeat=len(NAMES))]
    ours = Layout.contiguous(shape)
    reals = [torch.zeros(concrete(shape, env)) for env in envs]
    history = [f"zeros{shape}"]
    NONDEG["chains"] += 1
    for _ in range(g.int(1, 5)):
        name, mine, theirs = nondeg_step(g, ours)
        history.append(name)
        where = " -> ".join(history)
        try:
            nxt, my_error = mine(ours), None
        except S.ShapeError as err:
            nxt, my_error = None, err
        outcomes = []
        for env, real in zip(envs, reals):
            try:
                outcomes.append(theirs(real, env))
            except RuntimeError as err:
                outcomes.append(err)
        failed = [isinstance(o, Exception) for o in outcomes]
        if my_error is not None:
            assert all(failed), f"{where}: we raise {my_error}, torch does not at " \
                                f"{[e for e, f in zip(envs, failed) if not f]}"
            return
        if any(failed):  # allowed only where undecided (a view, strides unknown)
            assert name.startswith("view") and nxt.strides is None, f"{where}: torch raises"
            return
        ours, reals = nxt, outcomes
        agree_everywhere(ours, reals, envs, where)
    where = " -> ".join(history)
    for _ in range(3):
        target = regroup(g, ours.shape)
        try:
            answer = can_view(ours.shape, ours.strides, target, nondegenerate=True)
        except S.ShapeError:  # a -1 with a 0 among the other sizes: torch raises too
            answer = False
        else:
            NONDEG["views"] += 1
            NONDEG[{True: "yes", False: "no", None: "unknown"}[answer]] += 1
            NONDEG["decided_by_assumption"] += answer is not None and \
                can_view(ours.shape, ours.strides, target) is None
        if answer is None:
            continue
        resolved = S.reshape(ours.shape, target) if answer is True else None
        strides = view_strides(ours.shape, ours.strides, resolved, nondegenerate=True) if resolved else None
        for env, real in zip(envs, reals):
            try:
                works, real_strides = True, real.view(concrete(target, env)).stride()
            except RuntimeError:
                works = False
            assert works is (answer is True), f"{where}: view{target} at {env}: we say {answer}"
            if works and real.numel():
                for i, o in enumerate(strides):
                    if concrete(resolved, env)[i] != 1 and not is_unknown(o):
                        NONDEG["strides_checked"] += 1
                        assert concrete((o,), env)[0] == real_strides[i], f"{where}: view{target} at {env}"


def test_nondegenerate_count():
    if not NONDEG["chains"]:
        pytest.skip("run with the whole module")
    print(f"\nnondegenerate views: {NONDEG}")
    assert NONDEG["no"] >= 10 and NONDEG["yes"] >= 100 and NONDEG["decided_by_assumption"] >= 20


# -- the spec's cases ---------------------------------------------------------------------------
def test_spec_views():
    x = Layout.contiguous((3, 4))
    assert x.t().can_view(4, 3) is True
    assert x.transpose(0, 1).can_view(2, 2, 3) is True
    assert x.transpose(0, 1).can_view(12) is False
    with pytest.raises(S.ShapeError, match="view size is not compatible"):
        x.transpose(0, 1).view(12)
    assert x.transpose(0, 1).view(2, 2, 3).strides == torch.zeros(3, 4).transpose(0, 1).view(2, 2, 3).stride()
    assert x.t().reshape(12).strides == (1,)  # a copy


def test_size_one_and_empty_strides_are_exact():
    y = torch.zeros(1, 3).t()  # size-1 dims keep odd strides
    ours = Layout.contiguous((1, 3)).t()
    assert ours.strides == y.stride() and ours.to_contiguous().strides == y.contiguous().stride()
    assert Layout.contiguous((2, 0, 3)).strides == torch.zeros(2, 0, 3).stride() == (3, 3, 1)
    assert is_contiguous((2, 0, 3), (7, 1, 5)) is True  # empty: contiguous whatever the strides
    real, ours = torch.zeros(3, 0).t(), Layout.contiguous((3, 0)).t()
    assert ours.view(3, 0).strides == real.view(3, 0).stride()  # an empty view: row-major
    assert ours.view(0, 3).strides == real.view(0, 3).stride()  # the same shape: strides kept
    assert view_strides((0, 3), real.stride(), (0, 3)) == real.stride()


def test_transposed_clone_stays_transposed():
    real = torch.zeros(3, 4).t().clone()
    ours = Layout.contiguous((3, 4)).t().clone()
    assert ours.strides == real.stride() == (1, 4) and ours.is_contiguous() is False


def test_generated_case_count():
    if STATS["int"]["steps"] == 0:
        pytest.skip("run with the whole module")
    print(f"\nlayout truth: {STATS}")
    assert STATS["int"]["views"] >= EXAMPLES and STATS["int"]["steps"] >= EXAMPLES


def ordered_factorizations(n, rank):
    if rank == 0:
        return [()] if n == 1 else []
    if n == 0:
        return [t for t in _all_shapes(rank) if 0 in t]
    return [(d,) + rest for d in range(1, n + 1) if n % d == 0 for rest in ordered_factorizations(n // d, rank - 1)]


def _all_shapes(rank):
    if rank == 0:
        return [()]
    return [(d,) + rest for d in (0, 1, 2) for rest in _all_shapes(rank - 1)]


def test_every_permutation_view_of_small_shapes():
    """Exhaustive: permuted / sliced / expanded small tensors against every target of up to 4 dims."""
    from itertools import permutations

    checked = failed = 0
    for shape in [(2, 3, 4), (1, 3, 4), (2, 1, 2, 3), (4, 6), (2, 0, 3)]:
        for perm in permutations(range(len(shape))):
            for variant in ("plain", "sliced", "expanded"):
                real, ours = torch.zeros(shape).permute(perm), Layout.contiguous(shape).permute(perm)
                if variant == "sliced":
                    real, ours = real[..., ::2], ours[..., ::2]
                elif variant == "expanded":
                    real, ours = real.unsqueeze(1).expand(-1, 2, *([-1] * (real.dim() - 1))), \
                        ours.unsqueeze(1).expand(-1, 2, *([-1] * (ours.shape.__len__() - 1)))
                assert ours.strides == real.stride() and ours.is_contiguous() == real.is_contiguous()
                for rank in range(0, 5):
                    for target in ordered_factorizations(real.numel(), rank):
                        try:
                            works, strides = True, real.view(target).stride()
                        except RuntimeError:
                            works, strides = False, None
                        assert can_view(ours.shape, ours.strides, target) is works, (shape, perm, variant, target)
                        if works:
                            assert ours.view(target).strides == strides, (shape, perm, variant, target)
                        checked += 1
                        failed += not works
    print(f"\nexhaustive views: {checked} checked, {failed} impossible")
    assert checked > 5000 and failed > 1000
