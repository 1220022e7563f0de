"""Calls per row against real PyTorch: ``torch.dist``, ``torch.einsum`` per sample, ``F.layer_norm`` / ``F.rms_norm``.

- ``torch.dist(a[i], b[i], p)`` (and ``a[i].dist(b, p)``) is ATen's ``norm(a - b, p)``: batched as ``(a - b).norm(p,
  dim=1)``;
- ``torch.einsum("ij,jk->ik", A[n], B[n])``: the subscripts of each batched operand and of the output gain a letter
  for the loop (``"nij,njk->nik"``); an invariant operand keeps its own;
- ``F.layer_norm(x[i], shape, w, b, eps)`` / ``F.rms_norm(x[i], shape, w, eps)`` normalize trailing dims only: the
  same call on the whole tensor.

Generated at module level and in functions, on empty and non-row-major inputs, with near-misses that must get no
fix (a shape that is not the slice's trailing dims, a weight of another dtype or that varies per row, mixed einsum
dtypes, an implicit einsum output, an operand that is indexed by the loop twice). The differential check of
``test_vectorize_truth`` compares values, dtype, shape, Python type, contiguity and errors.
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_vectorize_forms import _with_params, counter  # noqa: E402,I001
from test_vectorize_truth import FLOATS, INTS, MANY, laid_out, program, seed, tensor  # noqa: E402

FORMS: dict = {}  # this file's forms, reported by its own test_zz report
counted = counter(FORMS)


def _store(r: random.Random, value: str, n: int, shape: str) -> list:
    """The loop storing ``value`` per row: into a preallocated ``out``, or appended and stacked."""
    if r.random() < 0.5:
        return [f"out = torch.{r.choice(['empty', 'zeros'])}({shape})", "for i in range(len(x)):",
                f"    out[i] = {value}"]
    return ["out = []", r.choice(["for i in range(len(x)):", f"for i in range({n}):"]), f"    out.append({value})",
            "out = torch.stack(out)" if n else "out = torch.stack(out) if out else torch.zeros(0)"]


@MANY
@given(st.randoms(use_true_random=False))
def test_dist_per_row(r):
    n, d = r.choice([0, 1, 5]), r.choice([1, 4])
    dtype = r.choice(FLOATS + (INTS if r.random() < 0.1 else []))
    other = r.choice(["y[i]", "g", "y[i] * 2"])
    p = r.choice(["", ", 1", ", p=3", ", float('inf')", ", 0", ", p=2.0", ", -1"])
    value = r.choice([f"torch.dist(x[i], {other}{p})", f"x[i].dist({other}{p})", f"torch.dist({other}, x[i]{p})"])
    if r.random() < 0.3:
        value = f"{value} * w[i]"
    params = {"x": laid_out(r, (n, d), dtype), "y": tensor(r, (n, d), r.choice([dtype, dtype, "torch.float64"])),
              "g": tensor(r, (r.choice([d, d, 1]),), dtype), "w": tensor(r, (n,), "torch.float32")}
    body = _store(r, value, n, f"{n}" if r.random() < 0.8 else f"{n}, dtype=torch.float64")
    counted("torch.dist per row", program([seed(r)] + _with_params(r, body, params)), tolerance=1e-3)


EINSUMS = [
    # (equation, element shapes of the operands by letter, whether an operand may be loop-invariant)
    ("ij,jk->ik", True), ("ij,kj->ik", True), ("ij,j->i", True), ("i,i->", False), ("ij,ij->", False),
    ("ij->ji", False), ("ij,jk->ki", True), ("i,j->ij", True), ("ijk,ik->ij", True), ("ii->i", False),
    ("ij -> i", False), ("ij,jk", True), ("...j,j->...", True), ("ij,jk->ik", True),
]


@MANY
@given(st.randoms(use_true_random=False))
def test_einsum_per_sample(r):
    n = r.choice([0, 1, 4])
    sizes = {c: r.choice([1, 2, 3]) for c in "ijk"}
    equation, invariant_ok = r.choice(EINSUMS)
    spec = equation.replace(" ", "")
    inputs = spec.split("->")[0].split(",")
    if "ii" in spec:
        sizes["i"] = sizes["j"] = sizes.get("i")
    dtype = r.choice(FLOATS)
    names, params = [], {}
    for k, sub in enumerate(inputs):
        shape = tuple(sizes.get(c, 2) for c in sub.replace(".", "")) or ()
        name = "AB"[k] if k < 2 else "C"
        kind = dtype if r.random() < 0.9 else r.choice(FLOATS + INTS)
        if invariant_ok and k == 1 and r.random() < 0.3:
            params[name] = laid_out(r, shape, kind)
            names.append(name)
        else:
            params[name] = laid_out(r, (n,) + shape, kind) if r.random() < 0.5 else tensor(r, (n,) + shape, kind)
            names.append(f"{name}[i]" if r.random() < 0.9 else f"{name}[0]")
    value = f'torch.einsum("{equation}", {", ".join(names)})'
    params["x"] = tensor(r, (n,), "torch.float32")
    body = ["out = []", r.choice(["for i in range(len(x)):", f"for i in range({n}):"]), f"    out.append({value})",
            "out = torch.stack(out)"]
    try:  # the per-sample result's shape, for a store into a preallocated output
        element = torch.einsum(equation, *[torch.zeros(tuple(sizes.get(c, 2) for c in sub.replace(".", "")))
                                           for sub in inputs]).shape
    except RuntimeError:
        element = None
    if element is not None and r.random() < 0.5:
        body = [f"out = torch.zeros({', '.join(map(str, (n,) + tuple(element)))})", "for i in range(len(x)):",
                f"    out[i] = {value}"]
    counted("einsum per sample", program([seed(r)] + _with_params(r, body, params)), tolerance=1e-3)


@MANY
@given(st.randoms(use_true_random=False))
def test_layer_norm_and_rms_norm_per_row(r):
    n, t, d = r.choice([0, 1, 4]), r.choice([1, 3]), r.choice([1, 5])
    dtype = r.choice(FLOATS)
    rank3 = r.random() < 0.4
    x = laid_out(r, (n, t, d) if rank3 else (n, d), dtype) if not rank3 else tensor(r, (n, t, d), dtype)
    shape = r.choice([f"({d},)", f"[{d}]", f"{d}", "(D,)", "D"] + ([f"({t}, {d})"] if rank3 else []) +
                     [f"({d + 1},)"] * (r.random() < 0.1))
    fn = r.choice(["F.layer_norm", "F.rms_norm"])
    extra = []
    trailing = (t, d) if shape == f"({t}, {d})" else (d,)
    wdtype = dtype if r.random() < 0.9 else r.choice(FLOATS)
    if r.random() < 0.5:
        extra.append(r.choice(["w", "weight=w"]) if r.random() < 0.9 else "w[i % len(w)]")
    if fn == "F.layer_norm" and extra and r.random() < 0.5:
        extra.append(r.choice(["b", "bias=b"]) if extra[0] == "w" else "bias=b")
    if r.random() < 0.3:
        extra.append(r.choice(["eps=1e-3", "eps=1e-6"]))
    value = f"{fn}(x[i], {', '.join([shape] + extra)})"
    if r.random() < 0.2:
        value = f"{value} * 2 + 1"
    params = {"x": x, "w": tensor(r, trailing, wdtype), "b": tensor(r, trailing, wdtype)}
    lines = ["import torch.nn.functional as F", f"D = {d}"]
    body = _store(r, value, n, f"{n}, {t}, {d}" if rank3 else f"{n}, {d}")
    counted("layer_norm / rms_norm per row", program([seed(r)] + lines + _with_params(r, body, params)),
            tolerance=1e-3)


COMPUTED = ["F.log_softmax(x[i], dim=0)", "torch.softmax(x[i] * 2, dim=-1)", "x[i] - x[i].max()", "x[i].exp()",
            "torch.cumsum(x[i], dim=0)", "F.normalize(x[i], dim=0)", "x[i] * w", "torch.sort(x[i]).values"]


@MANY
@given(st.randoms(use_true_random=False))
def test_gather_from_a_value_computed_per_row(r):
    """``logp = F.log_softmax(x[i], dim=0)`` then ``logp[t[i]]``: ``logp_all[torch.arange(n), t]``. Indices may be
    negative (both wrap), one past the end (both raise), int32 or bool (refused), Python ints (``.item()``)."""
    n, c = r.choice([0, 1, 5]), r.choice([1, 4])
    dtype = r.choice(FLOATS)
    low, high = r.choice([(0, c), (0, c), (-c, c), (0, c + 1)])
    index_dtype = r.choice(["torch.int64"] * 4 + ["torch.int32", "torch.bool"])
    index = r.choice(["t[i]", "t[i]", "t[i].item()", "int(t[i])"])
    computed = r.choice(COMPUTED)
    inline = r.random() < 0.4
    read = f"({computed})[{index}]" if inline else f"logp[{index}]"
    body = [] if inline else [f"    logp = {computed}"]
    form = r.randrange(3)
    if form == 0:
        lines = [f"out = torch.zeros({n}, dtype={dtype})", "for i in range(len(x)):"] + body + \
            [f"    out[i] = {r.choice([read, '-' + read, read + ' * 2'])}"]
    elif form == 1:
        lines = ["out = 0.0", f"for i in range({n}):"] + body + [f"    out {r.choice(['+=', '-='])} {read}"]
    else:
        lines = ["out = []", "for i in range(len(x)):"] + body + [f"    out.append({read})"] + \
            ["out = torch.stack(out)"]
    filtered = r.random() < 0.15
    if filtered:  # only some rows: a filter (the stack of none raises in the loop, not masked: the documented case)
        lines.insert(2 if form else 2, "    if i % 2 == 0:")
        lines[3:] = ["    " + line for line in lines[3:] if not line.startswith("out = torch.stack")] + \
            [line for line in lines[3:] if line.startswith("out = torch.stack")]
    params = {"x": laid_out(r, (n, c), dtype), "w": tensor(r, (c,), dtype),
              "t": f"torch.randint({low}, {max(high, low + 1)}, ({n},)).to({index_dtype})"}
    setup = [f"{name} = {value}" for name, value in params.items()] + lines if filtered else \
        _with_params(r, lines, params)
    counted("gather from a value computed per row", program([seed(r), "import torch.nn.functional as F"] + setup),
            tolerance=1e-4, empty_selection=filtered)


@MANY
@given(st.randoms(use_true_random=False))
def test_gathers_where_the_loop_skips_elements(r):
    """A read at a data-dependent slot under a test (``if ids[i] < n: tot += x[i, ids[i]]``, a filter, a choice, an
    ``and``): the loop reads it only where the test holds, so an index out of range elsewhere must not make the
    rewrite raise (main: ``x[torch.arange(n), ids][ids < n].sum()`` raised), and a filter's selected value is
    masked once (main: ``emb[ids[mask]][mask]`` raised on the shapes)."""
    n, v, d = r.choice([0, 1, 6]), r.choice([3, 4]), r.choice([1, 2])
    dtype = r.choice(FLOATS)
    bad = r.choice([v, v + 5, -v - 1, 0])  # some slots out of range (or not)
    test = r.choice(["ids[i] < {v}", "i % 2 == 0", "ids[i] >= 0", "(ids[i] >= 0) & (ids[i] < {v})", "w[i] > 0"])
    test = test.format(v=v)
    read = r.choice(["emb[ids[i]]", "x[i, ids[i]]", "emb[ids[i]] * 2", "x[i][ids[i]]"])
    row = read.startswith("emb")
    form = r.randrange(5)
    if form == 0:
        lines = ["out = []", "for i in range(len(ids)):", f"    if {test}:", f"        out.append({read})",
                 "out = torch.stack(out) if out else None"]
    elif form == 1:
        lines = [f"out = torch.stack([{read} for i in range(len(ids)) if {test}]) if {n} else None"]
    elif form == 2:
        lines = ["out = torch.zeros(d)" if row else "out = 0.0", "for i in range(len(ids)):", f"    if {test}:",
                 f"        out += {read}"]
    elif form == 3:
        zero = "torch.zeros(d)" if row else "0.0"
        lines = [f"out = torch.zeros({n}, d)" if row else f"out = torch.zeros({n})", "for i in range(len(ids)):",
                 f"    out[i] = {read} if {test} else {zero}"]
    else:
        lines = ["out = 0", "for i in range(len(ids)):", f"    if {test} and ({read}).sum() > 0:", "        out += 1"]
    ids = f"torch.randint(0, {v}, ({n},))"
    setup = [seed(r), f"d = {d}", f"ids = {ids}", f"if len(ids): ids[::2] = {bad}", f"emb = {tensor(r, (v, d), dtype)}",
             f"x = {tensor(r, (n, v), dtype)}", f"w = {tensor(r, (n,), dtype)}"]
    counted("gathers where the loop skips elements", program(setup + lines), tolerance=1e-4, empty_selection=True)


def test_zz_row_calls_report():
    print({form: FORMS[form] for form in FORMS})
