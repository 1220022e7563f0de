"""The loop vectorizer checked against real PyTorch (CPU): every rewrite it offers computes the same thing.

Generated loops for every pattern (maps into a preallocated output, nested 2-d maps, append +
``torch.stack``, ``if``/``else`` maps, filters, sums, dot products, counts, running max / min, any /
all flags, ``zip`` / ``enumerate`` forms, ``torch.cat`` accumulation, comprehensions, per-item loops
over a list of images, builtins over tensors) with random shapes (including empty ones), dtypes,
operators, constants, index forms and starting values; the newer generators also seed each program's
data differently (ties, NaN positions).
For each: run the original and, when a fix is offered, the rewrite, on the same seeded inputs;
every variable both define must agree (``torch.testing.assert_close``, same dtype, same shape,
same Python type, and for tensors the same contiguity: a rewrite that takes a transposed input's
layout breaks a later ``out.view(-1)``). If the original raises, the rewrite must raise too. Inputs are
sometimes laid out otherwise (transposed, step-sliced, expanded, permuted).

Near-misses (a carried dependence, a partial range, a side effect, the loop variable read
afterwards, the output read or aliased, a mismatched length, a ``zip`` of lengths that may differ,
float running max with a Python comparison, ties kept last) must get no fix at all.

Generation runs from a random that hypothesis seeds, so thousands of programs run in seconds;
a failure prints the program.
"""

from __future__ import annotations

import math
import os
import random
import warnings

import pytest

torch = pytest.importorskip("torch")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from torchwise.engine import analyze  # noqa: E402
from torchwise.fixing import apply_edits  # noqa: E402
from torchwise.rules import loops  # noqa: E402

RULES = [cls() for cls in loops.RULES]
CODES = {rule.code for rule in RULES}
STATS: dict = {}  # pattern -> [programs, fixed]

FLOATS = ["torch.float32", "torch.float64"]
INTS = ["torch.int64", "torch.int32"]
PROGRAMS_PER_PATTERN = int(os.environ.get("TORCHWISE_VECTORIZE_EXAMPLES", "300"))  # more for a long soak
MANY = settings(max_examples=PROGRAMS_PER_PATTERN, deadline=None, suppress_health_check=list(HealthCheck),
                derandomize=False)


# -- running --------------------------------------------------------------------------------------
def run(code: str):
    namespace: dict = {}
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(code, "<loop>", "exec"), namespace)
        except Exception as err:  # noqa: BLE001 - the original may legitimately raise
            return err
    return namespace


def loop_findings(code: str):
    return [f for f in analyze(code, rules=RULES).findings if f.code in CODES]


def compare(original: dict, rewritten: dict, code: str, fixed: str, tolerance: float) -> None:
    shared = [k for k in original if k in rewritten and not k.startswith("__") and k != "torch"]
    for name in shared:
        a, b = original[name], rewritten[name]
        context = f"`{name}` differs\n--- original ---\n{code}--- rewrite ---\n{fixed}"
        assert type(a) is type(b), f"{context}\n{type(a)} vs {type(b)}"
        if isinstance(a, torch.Tensor):
            assert a.dtype == b.dtype, f"{context}\n{a.dtype} vs {b.dtype}"
            assert a.shape == b.shape, f"{context}\n{a.shape} vs {b.shape}"
            assert a.device == b.device
            assert a.requires_grad == b.requires_grad, context
            assert a.is_contiguous() == b.is_contiguous(), f"{context}\nstrides {a.stride()} vs {b.stride()}"
            if a.is_floating_point():
                scale = float(a.abs().nan_to_num(0, 0, 0).max()) if a.numel() else 0.0
                torch.testing.assert_close(a, b, rtol=tolerance, atol=tolerance * max(1.0, scale), equal_nan=True,
                                           msg=context)
            else:
                assert torch.equal(a, b), context
        elif isinstance(a, list):
            assert len(a) == len(b), context
            assert all(type(p) is type(q) and (p == q or isinstance(p, float) and math.isclose(p, q, rel_tol=tolerance)
                                               or p != p and q != q)
                       for p, q in zip(a, b) if isinstance(p, (int, float, bool))), context
        elif isinstance(a, float):
            # a Python float summed in another order (pairwise, not one at a time): assert_close's sense of equal
            assert math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance) or (a != a and b != b), context
        elif isinstance(a, (int, bool)):
            assert a == b, context


def check(pattern: str, code: str, tolerance: float = 1e-4, must_fix: bool = False,
          empty_selection: bool = False) -> None:
    """Differential check of one generated loop; fails loudly.

    ``empty_selection``: a filter's documented difference: where nothing passes the test the loop's
    ``torch.stack([])`` raises, and the mask gives an empty tensor instead.
    """
    findings = [f for f in loop_findings(code) if f.fixes]
    stats = STATS.setdefault(pattern, [0, 0])
    stats[0] += 1
    if must_fix:
        assert findings, f"expected a fix for\n{code}\n{[f.message for f in loop_findings(code)]}"
    if not findings:
        return
    stats[1] += 1
    fixed = apply_edits(code, [e for f in findings for e in f.fixes[0].edits])
    compile(fixed, "<rewrite>", "exec")
    original, rewritten = run(code), run(fixed)
    if isinstance(original, Exception) and empty_selection and "non-empty TensorList" in str(original):
        assert not isinstance(rewritten, Exception) and rewritten["out"].shape[0] == 0, fixed
        return
    if isinstance(original, Exception):
        assert isinstance(rewritten, Exception), f"the original raises {original!r}, the rewrite does not\n" \
                                                 f"{code}--- rewrite ---\n{fixed}"
        return
    assert not isinstance(rewritten, Exception), f"the rewrite raises {rewritten!r}\n{code}--- rewrite ---\n{fixed}"
    compare(original, rewritten, code, fixed, tolerance)


def check_refused(pattern: str, code: str) -> None:
    STATS.setdefault(pattern, [0, 0])[0] += 1
    fixed = [f for f in loop_findings(code) if f.fixes]
    assert not fixed, f"a rewrite was offered for a near-miss:\n{code}\n{[f.message for f in fixed]}"


# -- generating ---------------------------------------------------------------------------------------
def tensor(r: random.Random, shape: tuple, dtype: str) -> str:
    dims = ", ".join(map(str, shape))
    if dtype in INTS:
        return f"torch.randint(-4, 5, ({dims}{',' if len(shape) == 1 else ''}), dtype={dtype})"
    return f"torch.randn({dims or '()'}, dtype={dtype})" if shape else f"torch.randn((), dtype={dtype})"


def laid_out(r: random.Random, shape: tuple, dtype: str) -> str:
    """A tensor of ``shape``, half the time not row-major: transposed, step-sliced, expanded."""
    if r.random() < 0.5 or len(shape) not in (1, 2):
        return tensor(r, shape, dtype)
    if len(shape) == 1:
        (n,) = shape
        return r.choice([f"{tensor(r, (2 * n,), dtype)}[::2]", f"{tensor(r, (), dtype)}.expand({n})",
                         f"{tensor(r, (n, 2), dtype)}[:, 1]"])
    n, d = shape
    return r.choice([f"{tensor(r, (d, n), dtype)}.t()", f"{tensor(r, (d, n), dtype)}.t()",
                     f"{tensor(r, (n, 2 * d), dtype)}[:, ::2]", f"{tensor(r, (2 * n, d), dtype)}[::2]",
                     f"{tensor(r, (d, 2 * n), dtype)}.t()[::2]", f"{tensor(r, (d,), dtype)}.expand({n}, {d})",
                     f"{tensor(r, (n, 1), dtype)}.expand({n}, {d})", f"{tensor(r, (1, n, d), dtype)}[0]"])


class Expr:
    """A random per-element expression over batched slices (`x[i]`/`v`) and invariants."""

    def __init__(self, r: random.Random, leaves: list, invariants: list, rank: int, floats_only: bool = False):
        self.r, self.leaves, self.invariants, self.rank, self.floats_only = r, leaves, invariants, rank, floats_only

    def gen(self, depth: int = 0, rank: int | None = None) -> tuple[str, int]:
        """(text, per-element rank)."""
        r = self.r
        rank = self.rank if rank is None else rank
        if depth >= 3 or r.random() < 0.3:
            return r.choice(self.leaves), self.rank
        choice = r.randrange(8)
        if choice <= 2:
            a, ra = self.gen(depth + 1)
            b = self.operand(depth)
            op = r.choice(["+", "-", "*", "/"])
            return (f"({a} {op} {b})" if r.random() < 0.5 else f"({b} {op} {a})"), ra
        if choice == 3:
            a, ra = self.gen(depth + 1)
            fn = r.choice(["torch.exp({})", "{}.abs()", "-{}", "torch.sigmoid({})", "{}.float()", "torch.tanh({})"])
            return fn.format(a if fn.startswith("-") is False else f"({a})"), ra
        if choice == 4 and self.rank == 1:
            a, _ = self.gen(depth + 1)
            fn = r.choice(["{}.sum()", "{}.mean()", "{}.norm()", "torch.dot({}, w)", "{}.amax()", "{} @ w",
                           "{}.sum(dim=0)", "torch.sum({})", "{}.max()"])
            return fn.format(a), 0
        if choice == 5:
            a, ra = self.gen(depth + 1)
            b, _ = self.gen(depth + 1)
            return f"torch.where({a} > 0, {a}, {b})", ra
        if choice == 6:
            a, ra = self.gen(depth + 1)
            return f"torch.maximum({a}, {self.r.choice(self.leaves)})", ra
        a, ra = self.gen(depth + 1)
        return f"({a} ** 2)", ra

    def operand(self, depth: int) -> str:
        if self.r.random() < 0.5:
            return self.gen(depth + 1)[0]
        return self.r.choice(self.invariants)


def inputs(r: random.Random, n: int, rank: int, dtypes: list) -> tuple[list, str]:
    d = r.choice([1, 3])
    shape = (n,) if rank == 0 else (n, d)
    lines = [
        f"x = {laid_out(r, shape, r.choice(dtypes))}",
        f"y = {laid_out(r, shape, r.choice(dtypes))}",
        f"w = {tensor(r, (d,), r.choice(FLOATS))}",
        f"c = {tensor(r, (), r.choice(dtypes))}",
        f"b = {r.choice(['0.5', '2', '-1.5', '3'])}",
    ]
    return lines, shape


def invariants(r: random.Random, rank: int) -> list:
    found = ["2", "0.5", "b", "c", "-3", "1e-3"]
    if rank == 1:
        found += ["w", "w.norm()"]
    return found


def count_form(r: random.Random, n: int) -> str:
    return r.choice([str(n), "len(x)", "x.shape[0]", "x.size(0)", "N"])


def program(lines: list) -> str:
    return "import torch\n" + "\n".join(lines) + "\n"


def seed(r: random.Random) -> str:
    """Varied data (ties, signs, NaN positions) from one program to the next; the same for both runs."""
    return f"torch.manual_seed({r.randrange(10_000)})"


# -- TW401: out[i] = f(x[i]) -------------------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_preallocated_map(r):
    rank = r.choice([0, 0, 1])
    n = r.choice([0, 1, 4, 6])
    dtypes = r.choice([FLOATS, FLOATS + INTS, ["torch.float32"]])
    lines, shape = inputs(r, n, rank, dtypes)
    expr = Expr(r, ["x[i]", "y[i]"], invariants(r, rank), rank)
    text, out_rank = expr.gen()
    if r.random() < 0.3:
        cond, _ = Expr(r, ["x[i]", "y[i]"], ["0", "b"], rank).gen(2)
        other, _ = expr.gen(1)
        body = [f"    if ({cond}).sum() > 0:" if rank == 1 else f"    if {cond} > 0:",
                f"        out[i] = {text}", "    else:", f"        out[i] = {other}"]
        if rank == 1:
            body = [f"    out[i] = {text}"]
    else:
        body = [f"    out[i] = {text}"]
    out_shape = (n,) if out_rank == 0 else (n, shape[1])
    factory = r.choice(["torch.empty", "torch.zeros"])
    dtype = r.choice(["", ", dtype=torch.float64", ", dtype=torch.float32", ", dtype=torch.int64"])
    alloc = f"{factory}({', '.join(map(str, out_shape))}{dtype})"
    if out_rank == rank and r.random() < 0.2:
        alloc = f"{factory}_like(x{dtype})"  # keeps x's layout
    lines += [f"N = {n}", f"out = {alloc}", f"for i in range({count_form(r, n)}):", *body]
    if r.random() < 0.2:
        lines.append("flat = out.view(-1)")  # works on the row-major output the loop fills
    check("map into a preallocated output", program(lines))


# -- TW401/TW404: append + stack, comprehensions --------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_appended_map_and_comprehension(r):
    rank = r.choice([0, 1])
    n = r.choice([0, 1, 5])
    lines, shape = inputs(r, n, rank, r.choice([FLOATS, FLOATS + INTS]))
    element = r.random() < 0.5
    leaves = ["v", "v"] if element else ["x[i]", "y[i]"]
    header = "for v in x:" if element else f"for i in range({count_form(r, n)}):"
    text, _ = Expr(r, leaves, invariants(r, rank), rank).gen()
    lines.append(f"N = {n}")
    form = r.randrange(3)
    if form == 0:
        lines += ["res = []", header, f"    res.append({text})", "out = torch.stack(res)"]
        if r.random() < 0.2:
            lines.append("flat = out.view(-1)")
    elif form == 1:
        generator = "for v in x" if element else f"for i in range({count_form(r, n)})"
        lines.append(f"out = torch.stack([{text} {generator}])")
    else:
        generator = "for v in x" if element else f"for i in range({count_form(r, n)})"
        lines.append(f"out = torch.tensor([{text} {generator}])")
    check("append + stack / comprehension map", program(lines))


# -- TW403: filters -------------------------------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_filter(r):
    rank = r.choice([0, 1])
    n = r.choice([0, 3, 8])
    lines, shape = inputs(r, n, rank, r.choice([FLOATS, FLOATS + INTS]))
    element = r.random() < 0.5
    leaves = ["v"] if element else ["x[i]", "y[i]"]
    cond_leaf = r.choice(leaves)
    cond = r.choice([f"{cond_leaf} > 0", f"{cond_leaf} <= b", f"({cond_leaf} > 0) and ({cond_leaf} < 2)"])
    if rank == 1:
        cond = r.choice([f"{cond_leaf}.sum() > 0", f"{cond_leaf}.amax() < 1"])
    value = r.choice(leaves + [Expr(r, leaves, invariants(r, rank), rank).gen(1)[0]])
    if r.random() < 0.7:
        header = "for v in x:" if element else f"for i in range({count_form(r, n)}):"
        lines += [f"N = {n}", "kept = []", header, f"    if {cond}:", f"        kept.append({value})",
                  "out = torch.stack(kept)"]
    else:
        generator = "for v in x" if element else f"for i in range({count_form(r, n)})"
        lines += [f"N = {n}", f"out = torch.stack([{value} {generator} if {cond}])"]
    check("filter", program(lines), empty_selection=True)


# -- TW405: sums, dot products, counts --------------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_reduction(r):
    rank = r.choice([0, 0, 1])
    n = r.choice([0, 1, 7, 50])
    lines, shape = inputs(r, n, rank, r.choice([FLOATS, FLOATS + INTS, ["torch.float64"]]))
    element = r.random() < 0.4
    leaves = ["v"] if element else ["x[i]", "y[i]"]
    header = "for v in x:" if element else f"for i in range({count_form(r, n)}):"
    init = r.choice(["0", "0.0", "10", "-2.5", "torch.zeros(" + ("" if rank == 0 else str(shape[1])) + ")"])
    form = r.randrange(4)
    if form == 0:
        text = r.choice(leaves) if r.random() < 0.4 else Expr(r, leaves, invariants(r, rank), rank).gen(1)[0]
        step = r.choice([f"    s += {text}", f"    s += {text}", f"    s = s + {text}", f"    s -= {text}",
                         f"    s = s - {text}"])
        lines += [f"N = {n}", f"s = {init}", header, step]
    elif form == 1 and not element:
        lines += [f"N = {n}", f"s = {init}", header, "    s += x[i] * y[i]"]
    else:
        leaf = r.choice(leaves)
        cond = f"{leaf} > 0" if rank == 0 else f"{leaf}.sum() > 0"
        lines += [f"N = {n}", f"s = {r.choice(['0', '5', '0.0'])}", header, f"    if {cond}:",
                  f"        s += {r.choice(['1', '2'])}"]
    check("reduction", program(lines), tolerance=1e-4 * max(1, n))


# -- TW402: torch.cat accumulation ----------------------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_cat_accumulation(r):
    k = r.choice([0, 1, 4])
    d = r.choice([1, 3])
    dtype = r.choice(FLOATS + INTS)
    lines = [f"chunks = [{tensor(r, (r.choice([1, 2]), d), dtype)} for _ in range({k})]",
             f"acc = torch.{r.choice(['empty', 'zeros'])}(0, {d}, dtype={r.choice(FLOATS + INTS)})"]
    form = r.randrange(5)
    if form == 4:
        # a 1-d empty start in a loop with a body: left out, the pieces cast to the promoted dtype where it differs
        lines = [f"chunks = [{tensor(r, (r.choice([1, 2]), d), dtype)} for _ in range({k})]",
                 r.choice(["acc = torch.tensor([])", f"acc = torch.empty(0, dtype={r.choice(FLOATS + INTS)})",
                           "acc = torch.zeros(0, dtype=torch.bool)", f"acc = torch.ones(0, dtype={dtype})"]),
                 r.choice(["for c in chunks:", f"for j in range({k}):\n    c = chunks[j]"]),
                 "    piece = " + r.choice(["c.argmax(dim=1)", "c * 2", "c.long()", "(c > 0)", "c.double().sum(dim=1)"]),
                 "    acc = torch.cat([acc, piece])"]
    elif form == 3:
        # a 1-d empty start, which `torch.cat` skips (only its dtype joins the promotion): left out when moot
        lines = [f"chunks = [{tensor(r, (r.choice([1, 2]),) * r.choice([1, 1, 2]), dtype)} for _ in range({k})]",
                 r.choice(["acc = torch.tensor([])", f"acc = torch.empty(0, dtype={r.choice(FLOATS + INTS)})",
                           f"acc = torch.zeros(0, dtype={dtype})", f"acc = torch.empty(0, dtype={dtype})"]),
                 "for chunk in chunks:", "    acc = torch.cat([acc, chunk])"]
    elif form == 0:
        lines += ["for chunk in chunks:", "    acc = torch.cat([acc, chunk])"]
    elif form == 1:
        lines += [f"for j in range({k}):", "    piece = chunks[j] * 2", "    if j % 2 == 0:",
                  "        piece = piece + 1", "    acc = torch.cat((acc, piece, chunks[j]), dim=0)"]
    else:
        lines += ["for chunk in chunks:", "    acc = torch.cat([acc, chunk.abs()], 0)", "last = chunk" if k else ""]
    check("torch.cat accumulation", program(lines))


# -- TW406: per-item loops over a list of tensors -----------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_per_item_batch(r):
    count = r.choice([0, 1, 4])
    c = r.choice([1, 3])
    dtype = r.choice(FLOATS)
    item = r.choice([tensor(r, (c, 2, 2), dtype)] * 3 + [f"{tensor(r, (2, 2, c), dtype)}.permute(2, 0, 1)",
                                                         f"{tensor(r, (c, 2, 2), dtype)}.transpose(1, 2)",
                                                         f"{tensor(r, (c, 2, 4), dtype)}[:, :, ::2]"])
    lines = [f"images = [{item} for _ in range({count})]",
             f"mean = {tensor(r, (c,), r.choice(FLOATS))}.reshape({c}, 1, 1)",
             f"std = ({tensor(r, (c,), r.choice(FLOATS))}.abs() + 0.5).reshape({c}, 1, 1)",
             f"tint = {r.choice([tensor(r, (c, 2, 2), dtype), f'{tensor(r, (2, 2, c), dtype)}.permute(2, 0, 1)'])}"]
    body = r.choice(["(img - mean) / std", "img * 2 + mean", "torch.sigmoid(img) - std", "(img - mean).abs()",
                     "img.float() * 0.5", "img", "tint * img", "img - tint"])
    lines += ["normalized = []", "for img in images:", f"    normalized.append({body})",
              "batch = torch.stack(normalized)"]
    check("per-item loop over a list", program(lines))


# -- TW407: builtins over tensors ----------------------------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_builtins(r):
    n = r.choice([0, 1, 6])
    rank = r.choice([1, 1, 2, 3])
    dtype = r.choice(FLOATS + INTS + ["torch.bool", "torch.int16", "torch.uint8"])
    shape = {1: (n,), 2: (n, 2), 3: (n, 2, 3)}[rank]
    if rank == 3 and dtype in FLOATS + INTS:
        # Python's `0 + t[0] + ...` keeps the slices' layout
        make = r.choice([tensor(r, shape, dtype), f"{tensor(r, (n, 3, 2), dtype)}.transpose(1, 2)",
                         f"{tensor(r, (3, n, 2), dtype)}.permute(1, 2, 0)",
                         f"{tensor(r, (2, 3, n), dtype)}.permute(2, 0, 1)"])
    elif dtype == "torch.bool":
        make = f"torch.randn({', '.join(map(str, shape))}) > 0"
    elif dtype == "torch.uint8":
        make = f"torch.randint(0, 5, ({', '.join(map(str, shape))},), dtype={dtype})"
    else:
        make = tensor(r, shape, dtype)
    builtin = r.choice(["sum", "max", "min", "any", "all"])
    use = r.choice([f"res = {builtin}(t)", f"if {builtin}(t):\n    hit = 1\nelse:\n    hit = 0"])
    check("builtins", program([f"t = {make}", use]), tolerance=1e-4 * max(1, n))


# -- TW401: nested loops, out[i, j] = f(a[i], b[j], mat[i, j]) --------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_grid_map(r):
    n, m = r.choice([0, 1, 3]), r.choice([0, 1, 4])
    dtypes = r.choice([FLOATS, FLOATS + INTS, ["torch.float32"], INTS])
    swapped = r.random() < 0.2  # written at out[j, i]: a[i] runs along the columns, mat is (M, N)
    lines = [f"a = {tensor(r, (n,), r.choice(dtypes))}", f"b = {tensor(r, (m,), r.choice(dtypes))}",
             f"mat = {laid_out(r, (m, n) if swapped else (n, m), r.choice(dtypes))}",
             f"c = {tensor(r, (), r.choice(dtypes))}", f"s = {r.choice(['0.5', '2', '-1.5'])}", f"N = {n}", f"M = {m}"]
    enumerated = r.random() < 0.25
    rows = ["u", "a[i]"] if enumerated else ["a[i]"]
    cols = ["w", "b[j]"] if enumerated else ["b[j]"]
    leaves = rows + cols + (["mat[j, i]", "mat[j][i]"] if swapped else ["mat[i, j]", "mat[i][j]"])
    if r.random() < 0.2:
        text = f"{r.choice(rows)} * {r.choice(cols)}"  # an outer product
    else:
        text = Expr(r, leaves, ["2", "0.5", "s", "c", "-3", "1e-3"], 0).gen()[0]
    store = r.choice(["out[j, i]", "out[j][i]"]) if swapped else r.choice(["out[i, j]", "out[i][j]"])
    body = [f"{store} = {text}"]
    if r.random() < 0.25:
        cond = r.choice([f"{r.choice(rows)} > 0", f"{r.choice(cols)} <= s", f"{leaves[-1]} > c"])
        other = Expr(r, leaves, ["0", "s"], 0).gen(1)[0]
        body = [f"if {cond}:", f"    {store} = {text}", "else:", f"    {store} = {other}"]
    outer = "for i, u in enumerate(a):" if enumerated else f"for i in range({r.choice([str(n), 'len(a)', 'N'])}):"
    inner = "for j, w in enumerate(b):" if enumerated else \
        f"for j in range({r.choice([str(m), 'len(b)', 'b.shape[0]', 'M'])}):"
    if r.random() < 0.3:
        outer, inner = inner, outer  # the order of the loops does not matter
    shape = (m, n) if swapped else (n, m)
    dtype = r.choice(["", ", dtype=torch.float64", ", dtype=torch.float32", ", dtype=torch.int64"])
    factory = r.choice(['torch.empty', 'torch.zeros'])
    alloc = f"{factory}_like(mat{dtype})" if r.random() < 0.15 else f"{factory}({shape[0]}, {shape[1]}{dtype})"
    lines += [f"out = {alloc}", outer, f"    {inner}", *(f"        {line}" for line in body)]
    if r.random() < 0.2:
        lines.append("flat = out.view(-1)")  # the result keeps the row-major layout of the allocation
    check("nested map into a preallocated output", program([seed(r)] + lines))


# -- TW405: running max / min, with or without the index -----------------------------------------------------
EXTREME_DTYPES = FLOATS + INTS + ["torch.int16", "torch.int8", "torch.uint8", "torch.bool"]


def extreme_tensor(r: random.Random, n: int, dtype: str, ties: bool = False, nan: bool = False) -> list:
    if dtype == "torch.bool":
        lines = [f"x = torch.randn({n}) > 0"]
    elif dtype == "torch.uint8":
        lines = [f"x = torch.randint(0, 6, ({n},), dtype={dtype})"]
    elif dtype in FLOATS:
        lines = [f"x = {tensor(r, (n,), dtype)}"]
    else:
        lines = [f"x = torch.randint(-4, 5, ({n},), dtype={dtype})"]
        if ties or r.random() < 0.3:
            lines.append("x = x // 2")  # ties
    if dtype in FLOATS and n and (nan or r.random() < 0.4):
        lines.append(f"x[{r.randrange(n)}] = float('nan')")
    return lines


@MANY
@given(st.randoms(use_true_random=False))
def test_running_extreme(r):
    # 40% are integer programs with ties and an in-place change of x afterwards: where the loop keeps
    # the first or the last of equal elements, and that it keeps a view of x, then shows. 25% are float
    # programs with a NaN, which a Python comparison skips and `max()` does not.
    mode = r.random()
    ties, nan = mode < 0.4, 0.4 <= mode < 0.65
    n = 6 if ties or nan else r.choice([0, 1, 2, 5])
    dtype = r.choice(INTS + ["torch.int16", "torch.int8"] if ties else FLOATS if nan else EXTREME_DTYPES)
    lines = [seed(r)] + extreme_tensor(r, n, dtype, ties, nan) + [f"N = {n}"]
    which = r.choice(["max", "min"])
    header = r.choice(["for v in x:", "for i in range(N):", "for i in range(len(x)):", "for i, v in enumerate(x):",
                       "for i in range(1, N):"])
    element = "x[i]" if "v" not in header else r.choice(["v", "v", "x[i]"] if "enumerate" in header else ["v"])
    if r.random() < 0.25 and dtype != "torch.bool":
        element = r.choice([f"({element} * 2)", f"({element} - 1)", f"{element}.abs()"])
    form = r.randrange(3)
    if form == 2:  # torch.maximum takes tensors only
        start = r.choice(["x[0]", "torch.tensor(0)", "torch.tensor(-2.5)", "torch.tensor(3, dtype=torch.int32)"])
    else:
        start = r.choice(["x[0]", "x[0]", "0", "10", "-3", "2.5", "float('-inf')", "torch.tensor(0)",
                          "torch.tensor(-2.5)", "True"])
    if ("range(1," in header or ties) and r.random() < 0.8:
        start = "x[0]"  # what makes starting at 1 the same walk
    lines.append(f"m = {start}")
    tracked = form == 0 and "i" in header.split(" in ")[0] and r.random() < 0.4
    if tracked:
        lines.append("k = 0")
    lines.append(header)
    if form == 0:
        op = (">" if which == "max" else "<") + ("=" if r.random() < 0.25 else "")
        flipped = {">": "<", "<": ">", ">=": "<=", "<=": ">="}[op]
        lines += [f"    if {element} {op} m:" if r.random() < 0.5 else f"    if m {flipped} {element}:",
                  f"        m = {element}"]
        if tracked:
            lines.append("        k = i")
    elif form == 1:
        lines.append(f"    m = {which}(m, {element})" if r.random() < 0.8 else f"    m = {which}({element}, m)")
    else:
        call = r.choice([f"torch.{which}imum(m, {element})", f"torch.{which}(m, {element})", f"m.{which}({element})",
                         f"torch.{which}imum({element}, m)", f"torch.{which}({element}, m)", f"{element}.{which}(m)"])
        lines.append(f"    m = {call}")
    post = r.random()
    if (ties or post < 0.5) and dtype != "torch.bool":
        # The loop keeps a view of x's (first extreme) element, and so must the rewrite.
        lines.append("x.add_(torch.arange(len(x)).to(x.dtype))")
    elif post < 0.65:
        lines.append("m += 1")
    check("running max / min", program(lines))


# -- TW405: any / all flags ----------------------------------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_flag_loop(r):
    n = r.choice([0, 1, 4])
    rank = r.choice([0, 0, 1])
    lines, shape = inputs(r, n, rank, r.choice([FLOATS, FLOATS + INTS]))
    lines.insert(0, seed(r))
    if n and rank == 0 and r.random() < 0.3:
        lines.append(f"x[{r.randrange(n)}] = float('nan')" if "float" in lines[0] else "x[0] = 0")
    header, leaves = r.choice([("for v in x:", ["v"]), ("for i in range(N):", ["x[i]", "y[i]"]),
                               ("for p, q in zip(x, y):", ["p", "q"]), ("for i, v in enumerate(x):", ["v", "y[i]"])])
    leaf = r.choice(leaves)
    if rank == 0:
        cond = r.choice([f"{leaf} > 0", f"{leaf} <= b", f"({leaf} > 0) and ({r.choice(leaves)} < 2)", f"{leaf} == 1",
                         f"{leaf} != {r.choice(leaves)}", f"{leaf} * 2 > c"])
    else:
        cond = r.choice([f"{leaf}.sum() > 0", f"{leaf}.amax() < 1"])
    any_form = r.random() < 0.5
    if any_form:
        init, setting = "False", "True"
    else:
        init, setting = "True", "False"
        cond = r.choice([f"not {cond}" if " and " not in cond else f"not ({cond})", cond])
    lines += [f"N = {n}", f"found = {init}", header, f"    if {cond}:", f"        found = {setting}"]
    if r.random() < 0.5:
        lines.append("        break")
    check("any / all flag", program(lines))


# -- zip / enumerate: maps, sums, filters, comprehensions -------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_zip_enumerate(r):
    rank = r.choice([0, 0, 1])
    n = r.choice([0, 1, 5])
    lines, shape = inputs(r, n, rank, r.choice([FLOATS, FLOATS + INTS]))
    lines.append(f"N = {n}")
    zipped = r.random() < 0.6
    if zipped:
        header, generator, leaves = "for p, q in zip(x, y):", "for p, q in zip(x, y)", ["p", "q"]
    else:
        header, generator, leaves = "for i, v in enumerate(x):", "for i, v in enumerate(x)", ["v", "y[i]", "x[i]"]
    text = Expr(r, leaves, invariants(r, rank), rank).gen()[0]
    leaf = r.choice(leaves)
    cond = f"{leaf} > 0" if rank == 0 else f"{leaf}.sum() > 0"
    form = r.randrange(6 if zipped else 7)
    if form == 0:
        lines += ["res = []", header, f"    res.append({text})", "out = torch.stack(res)"]
    elif form == 1:
        lines += [f"out = torch.stack([{text} {generator}])"]
    elif form == 2:
        lines += [f"out = torch.tensor([{text} {generator}])"]
    elif form == 3:
        lines += ["s = " + r.choice(["0", "0.0", "10"]), header,
                  r.choice([f"    s += {text}", f"    s += {leaves[0]} * {leaves[1]}"])]
    elif form == 4:
        if r.random() < 0.5:
            lines += ["kept = []", header, f"    if {cond}:", f"        kept.append({r.choice(leaves)})",
                      "out = torch.stack(kept)"]
        else:
            lines += [f"out = torch.stack([{r.choice(leaves)} {generator} if {cond}])"]
    elif form == 5:
        lines += ["s = 0", header, f"    if {cond}:", "        s += 1"]
    else:
        out_shape = f"{n}" if rank == 0 else f"{n}, {shape[1]}"
        lines += [f"out = torch.zeros({out_shape})", header, f"    out[i] = {text}"]
    check("zip / enumerate", program([seed(r)] + lines), tolerance=1e-4 * max(1, n), empty_selection=form == 4)


# -- near misses: no fix, ever ---------------------------------------------------------------------------------------
GRID = ["a, b = torch.randn(3), torch.randn(4)", "mat = torch.randn(3, 4)", "out = torch.zeros(3, 4)"]
NEAR_MISSES = [
    # a carried dependence
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(6):", "    out[i] = x[i] + out[i - 1]"],
    ["x = torch.randn(6)", "s = 0.0", "for i in range(6):", "    s = s * 0.5 + x[i]"],
    ["x = torch.randn(6)", "h = torch.zeros(6)", "for i in range(1, 6):", "    h[i] = h[i - 1] * 0.9 + x[i]"],
    # side effects
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(6):", "    out[i] = x[i] * 2", "    print(i)"],
    ["x = torch.randn(6)", "log = []", "out = torch.zeros(6)", "for i in range(6):", "    out[i] = f(x[i])"],
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(6):", "    out[i] = x[i] * torch.randn(())"],
    ["x = torch.randn(6)", "res = []", "for v in x:", "    res.append(v * 2)", "    res.append(v)",
     "out = torch.stack(res)"],
    # the loop variable read afterwards
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(6):", "    out[i] = x[i] * 2", "last = i"],
    ["x = torch.randn(6)", "s = 0.0", "for v in x:", "    s += v", "print(v)"],
    # the output read, aliased or partially written
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(6):", "    out[i] = x[i] * out[0]"],
    # the list used as a list
    ["x = torch.randn(6)", "res = []", "for v in x:", "    res.append(v * 2)", "out = torch.stack(res)",
     "n = len(res)"],
    # the loop may run zero times and the result's type would differ
    ["def f(k: int):", "    x = torch.randn(k)", "    s = 0.0", "    for v in x:", "        s += v", "    return s"],
    ["x = torch.randn(0)", "s = 0", "for v in x:", "    s += v"],
    ["t = torch.randn(0)", "total = sum(t)"],
    # NaN: max of floats
    ["t = torch.randn(5)", "m = max(t)"],
    # float16 sums round differently one at a time
    ["t = torch.randn(50).half()", "total = sum(t)"],
    ["x = torch.randn(50, dtype=torch.float16)", "s = 0.0", "for v in x:", "    s += v"],
    # the accumulator read inside the loop, or not fresh
    ["xs = [torch.randn(2) for _ in range(3)]", "acc = torch.zeros(0)", "for x in xs:",
     "    acc = torch.cat([acc, x * acc.sum()])"],
    ["def g(acc, xs):", "    for x in xs:", "        acc = torch.cat([acc, x])", "    return acc"],
    ["xs = [torch.randn(2) for _ in range(3)]", "acc = torch.zeros(0)", "buf = torch.zeros(2)", "for x in xs:",
     "    buf.add_(x)", "    acc = torch.cat([acc, buf])"],
    # the per-item list changes before the loop
    ["images = [torch.rand(3, 2, 2) for _ in range(4)]", "images.append(torch.rand(1, 2, 2))", "out = []",
     "for img in images:", "    out.append(img * 2)", "batch = torch.stack(out)"],
    # a training loop, epochs
    ["w = torch.randn(3)", "for epoch in range(10):", "    w = w - 0.1 * w"],
    # nested maps: a carried dependence, partial or triangular ranges, a transposed or diagonal access
    GRID + ["for i in range(3):", "    for j in range(4):", "        out[i, j] = a[i] * b[j] + out[i, j - 1]"],
    GRID + ["for i in range(3):", "    for j in range(i):", "        out[i, j] = a[i] * b[j]"],
    GRID + ["for i in range(3):", "    for j in range(4):", "        out[i, j] = a[j] * b[i]"],
    GRID + ["sq = torch.randn(4, 4)", "o2 = torch.zeros(4, 4)", "for i in range(4):", "    for j in range(4):",
            "        o2[i, i] = sq[i, j]"],
    GRID + ["for i in range(3):", "    for j in range(4):", "        out[i, j] = a[i] * b[j]", "        print(j)"],
    GRID + ["for i in range(3):", "    for j in range(4):", "        out[i, j] = a[i] * b[j]", "last = j"],
    GRID + ["for i in range(3):", "    for j in range(4):", "        out[i, j] = a[i] * b[j]", "        break"],
    GRID + ["for i in range(3):", "    for j in range(4):", "        out[i, j] = a[i] * torch.randn(())"],
    GRID + ["col = out[:, 0]", "for i in range(3):", "    for j in range(4):", "        out[i, j] = col[i] * 2 + 1"],
    ["def f(out, a):", "    for i in range(3):", "        for j in range(4):", "            out[i, j] = a[i] * 2",
     "    return out", "f(torch.zeros(3, 4), torch.randn(3))"],
    ["def f(n: int, k: int):", "    a, b = torch.randn(n), torch.randn(k)", "    out = torch.empty(n, k)",
     "    for i in range(n):", "        for j in range(k):", "            out[j, i] = a[i] * b[j]", "    return out"],
    # running max / min: floats (NaN), ties, a start that is not x[0], a shadowed loop variable
    ["x = torch.randn(5)", "m = x[0]", "for v in x:", "    if v > m:", "        m = v"],
    ["x = torch.randn(5)", "m = float('-inf')", "for v in x:", "    m = max(m, v)"],
    ["x = torch.randint(0, 3, (5,))", "m = x[0]", "for v in x:", "    if v >= m:", "        m = v"],
    ["x = torch.randint(0, 3, (5,))", "m = x[0]", "for v in x:", "    m = max(v, m)"],
    ["x = torch.randint(0, 3, (5,))", "m = 0", "for i in range(1, 5):", "    if x[i] > m:", "        m = x[i]"],
    ["x = torch.randint(0, 3, (5,))", "m = x[0]", "for i in range(2, 5):", "    if x[i] > m:", "        m = x[i]"],
    ["x = torch.randint(0, 3, (5,))", "m = x[0]", "x = torch.randint(0, 3, (5,))", "for i in range(1, 5):",
     "    if x[i] > m:", "        m = x[i]"],
    ["x = torch.randint(0, 3, (5,))", "m = x[0]", "for v in x:", "    if v > m:", "        m = v * 2"],
    ["x = torch.randint(0, 3, (5,))", "m = x[0]", "for v in x:", "    if v > m:", "        m = v", "print(v)"],
    ["x = torch.randint(0, 3, (5,))", "m = 0", "for v in x:", "    m = torch.maximum(m, v)"],
    ["x = torch.ones(5, requires_grad=True)", "m = x[0]", "for v in x:", "    m = torch.maximum(m, v)"],
    ["x = torch.ones(5, requires_grad=True)", "m = x[0]", "for v in x:", "    m = torch.max(m, v)"],
    ["x = torch.ones(5, requires_grad=True)", "m = x[0]", "for v in x:", "    m = m.min(v)"],
    ["x = torch.randint(0, 3, (5,))", "m = 0", "for v in x:", "    m = torch.min(m, v)"],
    ["x = torch.randint(0, 3, (5,))", "m = torch.tensor(1)", "for v in x:", "    m = torch.max(m, 0)"],
    ["def f(x):", "    m = torch.tensor(0.0)", "    for v in x:", "        m = torch.maximum(m, v)", "    return m"],
    ["x = torch.randn(5) > 0", "m = x[0]", "for v in x:", "    if v > m:", "        m = v"],
    ["x = torch.randint(0, 3, (5,))", "best, k = x[0], 0", "for i in range(5):", "    if x[i] > best:",
     "        best = x[i]", "        k = i"],
    ["x = torch.randint(0, 3, (5,))", "best = x[0]", "k = -1", "for i in range(5):", "    if x[i] > best:",
     "        best = x[i]", "        k = i"],
    ["def f(n: int):", "    x = torch.randint(0, 3, (n,))", "    m = 10", "    for v in x:", "        m = max(m, v)",
     "    return m"],
    # any / all flags: the flag read in the loop, an else, an integer division skipped after the hit
    ["x = torch.randn(5)", "found = False", "for v in x:", "    if v > 0 and not found:", "        found = True"],
    ["x = torch.randn(5)", "found = False", "for v in x:", "    if v > 0:", "        found = True", "    else:",
     "        found = False"],
    ["x = torch.randint(0, 3, (5,))", "found = False", "for v in x:", "    if 6 // v > 2:", "        found = True",
     "        break"],
    ["x = torch.randn(5)", "found = False", "for v in x:", "    if v > 0:", "        found = True", "        break",
     "hit = v"],
    ["x = torch.randn(5)", "found = 0", "for v in x:", "    if v > 0:", "        found = True"],
    # zip of lengths that differ or may differ, enumerate with a start
    ["def f(n: int, k: int):", "    x, y = torch.randn(n), torch.randn(k)", "    kept = []",
     "    for p, q in zip(x, y):", "        if q > 0:", "            kept.append(p)", "    return torch.stack(kept)"],
    ["def f(x, y):", "    return torch.tensor([p + q for p, q in zip(x, y)])"],
    ["x = torch.randn(5)", "out = torch.zeros(5)", "for i, v in enumerate(x, 1):", "    out[i - 1] = v * 2"],
    ["x = torch.randn(5)", "out = torch.zeros(5)", "for i, v in enumerate(x):", "    out[i] = v * 2", "    break"],
    # layouts: an output that keeps a transposed model's layout, channels-last items that `torch.stack` keeps so
    ["x = torch.randn(3, 5).t()", "out = torch.empty_like(x)", "for i in range(5):", "    out[i] = x[i] * 2"],
    ["images = [torch.rand(2, 2, 2, 3).permute(0, 3, 1, 2) for _ in range(4)]", "out = []", "for img in images:",
     "    out.append(img * 2)", "batch = torch.stack(out)"],
    ["x = torch.randn(4, 2, 2, 2, 3).permute(0, 1, 4, 2, 3)", "out = torch.stack([v + 1 for v in x])"],
]


@pytest.mark.parametrize("lines", NEAR_MISSES, ids=[str(i) for i in range(len(NEAR_MISSES))])
def test_near_miss_gets_no_fix(lines):
    check_refused("near miss", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_generated_near_misses(r):
    """Generated maps broken one way: no fix."""
    n = r.choice([3, 5])
    lines = [f"x = torch.randn({n})", f"y = torch.randn({n + r.choice([0, 1])})", f"out = torch.zeros({n})"]
    breakage = r.randrange(6)
    value = r.choice(["x[i] * 2", "x[i] + y[i]", "torch.exp(x[i])"])
    header = f"for i in range({n}):"
    if breakage == 0:
        header = f"for i in range({n - 1}):"
        value = value + " + out[i + 1]"  # reads a slot the loop has not written yet
    elif breakage == 1:
        value = value + " + out[i - 1]"
    elif breakage == 2:
        value = value.replace("x[i]", "x[i - 1]")
    elif breakage == 3:
        value = value + " + float(i)"
    elif breakage == 4:
        lines.append("keep = out")
        value = value + " + keep[0]"  # the output, read through an alias while it is written
    body = [f"    out[i] = {value}"]
    if breakage == 5:
        body.append("    y[0] = x[i]")  # one slot written by every iteration: the loop keeps the last
    lines += [header, *body]
    check_refused("generated near miss", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_generated_near_misses_new_patterns(r):
    """Nested maps, running max / min, flags and zip loops broken one way: no fix."""
    n, m = r.choice([3, 5]), r.choice([2, 4])  # never square: a swapped write cannot fit
    breakage = r.randrange(8)
    pattern = r.randrange(4)
    if pattern == 0:
        lines = [f"a = torch.randn({n})", f"b = torch.randn({m})", f"mat = torch.randn({n}, {m})",
                 f"out = torch.zeros({n}, {m})"]
        value = r.choice(["a[i] * b[j]", "mat[i, j] + a[i]", "mat[i][j] - b[j]"])
        outer, inner, store, after, extra = f"for i in range({n}):", f"for j in range({m}):", "out[i, j]", [], []
        if breakage == 0:
            inner = f"for j in range({m - 1}):"
            value += " + out[i, j + 1]"  # a slot the loop has not written yet
        elif breakage == 1:
            outer = f"for i in range(1, {n}):"
            value += " * out[i - 1, j]"  # a slot the loop wrote before
        elif breakage == 2:
            value += " + out[i, j - 1]"
        elif breakage == 3:
            inner = "for j in range(i):"
        elif breakage == 4:
            value += " * out[i, 0]"  # the first slot of the row, written at j == 0
        elif breakage == 5:
            store = "out[j, i]"
        elif breakage == 6:
            extra = ["        print(i)"]
        elif breakage == 7:
            after = ["last = j"]
        lines += [outer, f"    {inner}", f"        {store} = {value}", *extra, *after]
    elif pattern == 1:
        lines = [f"x = torch.randint(0, 4, ({n},))", "m = x[0]"]
        header, test, assign, after = "for v in x:", "v > m", "m = v", []
        if breakage == 0:
            lines[0] = f"x = torch.randn({n})"  # NaN
        elif breakage == 1:
            test = "v >= m"
        elif breakage == 2:
            lines[1] = "m = 0"
            header, test, assign = f"for i in range(1, {n}):", "x[i] > m", "m = x[i]"
        elif breakage == 3:
            header, test, assign = f"for i in range(2, {n}):", "x[i] > m", "m = x[i]"
        elif breakage == 4:
            assign = "m = v * 2"
        elif breakage == 5:
            after = ["print(v)"]
        elif breakage == 6:
            lines[1] = "m = 0"
            assign = r.choice(["m = torch.maximum(m, v)", "m = torch.max(m, v)", "m = torch.min(v, m)"])
        elif breakage == 7:
            lines[0] = f"x = torch.randn({n}) > 0"
        body = ["    m = max(v, m)"] if breakage == 1 and r.random() < 0.5 else [f"    if {test}:", f"        {assign}"]
        if breakage == 6:
            body = [f"    {assign}"]
        lines += [header, *body, *after]
    elif pattern == 2:
        lines = [f"x = torch.randint(-2, 3, ({n},))", "found = False"]
        test, body, after = "v > 0", ["        found = True"], []
        if breakage == 0:
            test = "v > 0 and not found"
        elif breakage == 1:
            body += ["    else:", "        found = False"]
        elif breakage == 2:
            test, body = "6 // v > 2", body + ["        break"]
        elif breakage == 3:
            body, after = body + ["        break"], ["hit = v"]
        elif breakage == 4:
            body = ["        found = v > 1"]
        elif breakage == 5:
            lines[1] = "found = True"
        elif breakage == 6:
            body += ["        print(v)"]
        elif breakage == 7:
            lines[1] = "found = 0"
        lines += ["for v in x:", f"    if {test}:", *body, *after]
    else:
        lines = [f"x = torch.randn({n})", f"y = torch.randn({n})", "res = []"]
        header, value, after = "for p, q in zip(x, y):", "p * q", ["out = torch.stack(res)"]
        if breakage in (1, 2):
            lines[1] = f"y = [float(k) for k in range({n})]"
        elif breakage == 4:
            header, value = "for i, p in enumerate(x, 1):", "p * i"
        elif breakage == 5:
            after.append("n = len(res)")
        lines += [header, f"    res.append({value})", *after]
        if breakage in (0, 3, 6, 7):  # lengths that may differ: only known as different symbols, or unknown
            second = {0: "torch.randn(k + 1)", 3: "torch.randn(k)", 6: "y", 7: "torch.randn(k)"}[breakage]
            header = "zip(x, x, t)" if breakage == 3 else "zip(x, y)"
            lines = ["def f(k: int, y):" if breakage == 6 else "def f(k: int):", "    x = torch.randn(k)",
                     f"    {'t' if breakage == 3 else 'y'} = {second}" if breakage != 6 else "    pass", "    res = []",
                     f"    for p, q{', s' if breakage == 3 else ''} in {header}:", "        res.append(p * q)",
                     "    return torch.stack(res)"]
    check_refused("generated near miss (new patterns)", program(lines))


def test_zz_report():
    """Prints how many generated programs ran and how many got a rewrite (pytest -s shows it)."""
    if not STATS:
        pytest.skip("run with the generating tests")
    total = sum(s[0] for s in STATS.values())
    for pattern, (programs, fixed) in sorted(STATS.items()):
        print(f"{pattern:45s} {programs:6d} programs, {fixed:6d} rewritten and checked")
    print(f"{'total':45s} {total:6d}")
    for pattern in ("map into a preallocated output", "append + stack / comprehension map", "filter", "reduction",
                    "torch.cat accumulation", "per-item loop over a list", "builtins",
                    "nested map into a preallocated output", "running max / min", "any / all flag",
                    "zip / enumerate"):
        if pattern in STATS:
            programs, fixed = STATS[pattern]
            assert fixed >= programs * 0.15, f"{pattern}: only {fixed} of {programs} generated loops were rewritten"
