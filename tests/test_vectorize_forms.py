"""The general loop vectorizer against real PyTorch: every new form, generated, and its near-misses.

Each generator writes loops the way users do (module level and in functions, with temporaries, several
outputs, conditions), on random shapes (empty ones too), dtypes and layouts, and runs the original and
the rewrite with the differential check of ``test_vectorize_truth`` (values, dtype, shape, Python type,
contiguity, requires_grad; if the loop raises the rewrite must raise). Forms:

- multi-statement bodies (temporaries, unpacked rows, ``if``/``elif``/``else``), per-row scalars (``w[i]``),
  reductions and scans of a slice along a dim (softmax, normalize, cosine similarity, norms, topk...);
- index forms: shifted (``x[i + 1] - x[i]``, ``range(1, N)``), reversed, strided, columns (``X[:, j]``),
  diagonals (``A[i, i]``), gathers (``emb[ids[i]]``, ``x[i, idx[i]]``), partial and in-place stores;
- stores of data-dependent slots: one-hot (``out[i, y[i]] = 1``), scatters and histograms (``out[idx[i]] += v``),
  ragged prefixes (``mask[b, :n[b]] = True``);
- contractions (nested ``+=``, Gram matrices, dot products), ``.item()`` accumulations and lists of numbers,
  scans (running sums and products, in-place prefix sums), ``torch.vmap`` of functions of the file;
- comprehensions consumed by ``torch.cat`` / ``sum`` / ``all`` / ``any``, ``map``, nested comprehensions.

Near-misses (a recurrence through the output, an index past the end or wrapping below zero, aliasing
views, duplicate slots with different values, random draws, a temporary read after the loop...) must get
no fix. ``test_zz_forms_report`` prints the counts (``pytest -s``).
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_vectorize_truth import (  # noqa: E402,I001
    FLOATS, INTS, MANY, STATS, check, check_refused, laid_out, program, seed, tensor,
)

FORMS: dict = {}  # form -> [programs, rewritten]


def counter(registry: dict):
    """A ``counted`` that records its forms in ``registry``: each test file reports (and bounds) its own forms, so a
    file's report does not depend on which other files ran before it in the session."""
    def counted(form: str, code: str, **options) -> None:
        check(form, code, **options)
        registry[form] = STATS[form]
    return counted


counted = counter(FORMS)


def refused(form: str, code: str) -> None:
    check_refused(form, code)
    FORMS[form] = STATS[form]


def in_function(r: random.Random, lines: list, params: dict) -> list:
    """Half the time the loop lives in a function whose tensors come in as parameters (facts from the call)."""
    if r.random() < 0.5:
        return lines
    setup = [f"{name}_arg = {value}" for name, value in params.items()]
    body = [line for line in lines]
    names = list(params)
    call = f"result = f({', '.join(n + '_arg' for n in names)})"
    return setup + [f"def f({', '.join(names)}):"] + ["    " + line for line in body] + \
        ["    return locals()"] + [call]


# -- multi-statement bodies, per-row scalars, ops along a dim ----------------------------------------------------------
ROW_OPS = [
    ("{r}.sum()", 0), ("{r}.mean()", 0), ("{r}.norm()", 0), ("{r}.max()", 0), ("{r}.amin()", 0),
    ("torch.softmax({r}, dim=0)", 1), ("torch.log_softmax({r}, dim=-1)", 1), ("F.normalize({r}, dim=0)", 1),
    ("torch.cumsum({r}, dim=0)", 1), ("{r}.std()", 0), ("{r}.var(unbiased=False)", 0), ("{r}.abs().max()", 0),
    ("F.cosine_similarity({r}, {q}, dim=0)", 0), ("torch.dot({r}, {q})", 0), ("{r}.exp() / {r}.exp().sum()", 1),
    ("({r} - {r}.max()).exp()", 1), ("{r} * {s}", 1), ("{r} / ({r}.norm() + 1e-6)", 1), ("{r}.argmax()", 0),
    ("torch.sort({r}).values", 1), ("{r}.flip(0)", 1), ("torch.clamp({r}, min=-0.5)", 1), ("F.relu({r})", 1),
    ("torch.where({r} > 0, {r}, {q})", 1), ("{r}.logsumexp(dim=0)", 0), ("torch.tanh({r}) * 2 + {s}", 1),
    ("({r} * g).sum()", 0), ("torch.sum({r} * g)", 0), ("({r} * {q}).sum()", 0),
    # a loop-invariant first operand of a reduction of two tensors broadcasts against the rows
    ("F.cosine_similarity(g, {r}, dim=0)", 0), ("F.cosine_similarity(g, {r}, dim=-1, eps=1e-3)", 0),
    # factories shaped like the element
    ("torch.where({r} > 0, {r}, torch.zeros_like({r}))", 1), ("{r} + torch.ones_like({r})", 1),
    ("torch.full_like({r}, 2.5) * {r}", 1), ("torch.zeros_like({r}, dtype=torch.float64) + {r}", 1),
    # `log` is also a logger's method: torch's and a tensor's are ops
    ("-({r}.abs() * torch.log({r}.abs() + 1e-9)).sum()", 0), ("({r}.abs() + 1).log()", 1),
    # `torch.min(a, b)` of two tensors is element-wise (box IoU), not a reduction
    ("torch.min({r}, {q})", 1), ("{r}.max({q})", 1), ("(torch.min({r}, {q}) - torch.max({r}, {q})).clamp(min=0)", 1),
    # a median of the whole slice is the values of the median along its dim (not for empty slices: NaN vs raise)
    ("{r}.median()", 0), ("torch.nanmedian({r})", 0), ("{r} - {r}.median()", 1),
]


@MANY
@given(st.randoms(use_true_random=False))
def test_multi_statement_rows(r):
    n, d = r.choice([0, 1, 5]), r.choice([1, 4])
    dtype = r.choice(FLOATS)
    lines = [seed(r), "import torch.nn.functional as F", f"x = {laid_out(r, (n, d), dtype)}",
             f"y = {tensor(r, (n, d), r.choice(FLOATS))}", f"w = {tensor(r, (n,), r.choice(FLOATS))}",
             f"g = {tensor(r, (d,), dtype)}"]
    header = r.choice(["for i in range(len(x)):", "for i, row in enumerate(x):", "for i in range(x.shape[0]):"])
    row = "row" if "row" in header else r.choice(["x[i]", "x[i]"])
    body = []
    if row == "x[i]" and r.random() < 0.5:
        body.append("    row = x[i]")
        row = "row"
    first, rank1 = r.choice(ROW_OPS)
    second, rank2 = r.choice(ROW_OPS)
    q = r.choice(["y[i]", "g"])
    s = r.choice(["w[i]", "2.0", "w[i] * 0.5"])
    body.append(f"    a = {first.format(r=row, q=q, s=s)}")
    body.append(f"    b = {second.format(r=row, q=q, s=s)}")
    shape = "(len(x), x.shape[1])" if max(rank1, rank2) else "(len(x),)"
    combine = r.choice(["a + b", "a * b", "a - b * 2", "torch.maximum(a, b)" if rank1 == rank2 else "a + b"])
    if r.random() < 0.3:
        body += ["    if a.sum() > 0:" if rank1 else "    if a > 0:", f"        c = {combine}", "    else:",
                 "        c = b"]
        combine = "c"
    lines += [f"out = torch.{r.choice(['empty', 'zeros'])}{shape}", header] + body + [f"    out[i] = {combine}"]
    counted("multi-statement body", program(lines), tolerance=1e-3)


@MANY
@given(st.randoms(use_true_random=False))
def test_rank_only_functions(r):
    """Functions whose tensors are known only by rank (jaxtyping annotations: no dtype, device or layout)."""
    n, d = r.choice([0, 1, 5]), r.choice([1, 4])
    first, rank = r.choice(ROW_OPS)
    value = first.format(r="x[i]", q=r.choice(["y[i]", "g"]), s=r.choice(["w[i]", "2.0"]))
    form = r.randrange(3)
    lines = ["from typing import TYPE_CHECKING", "import torch.nn.functional as F",
             "if TYPE_CHECKING:", "    from jaxtyping import Float", "    from torch import Tensor",
             'def f(x: Float[Tensor, "n d"], y: Float[Tensor, "n d"], w: Float[Tensor, "n"], g: Float[Tensor, "d"]):']
    if form == 0:
        lines += ["    out = torch.empty_like(x)" if rank else "    out = torch.zeros(x.shape[0])",
                  "    for i in range(x.shape[0]):", f"        out[i] = {value}", "    return out"]
    elif form == 1:
        lines += ["    res = []", "    for i in range(len(x)):", f"        res.append({value})",
                  "    return torch.stack(res)"]
    else:
        lines += [f"    return torch.stack([{value} for i in range(len(x))])"]
    dtype = r.choice(FLOATS)
    lines += [seed(r), f"out = f({laid_out(r, (n, d), dtype)}, {tensor(r, (n, d), r.choice(FLOATS))}, "
              f"{tensor(r, (n,), r.choice(FLOATS))}, {tensor(r, (d,), dtype)})"]
    counted("functions known only by rank", "from __future__ import annotations\n" + program(lines), tolerance=1e-3)


@MANY
@given(st.randoms(use_true_random=False))
def test_unpacked_rows_and_several_outputs(r):
    n = r.choice([0, 1, 6])
    lines = [seed(r), f"boxes = {tensor(r, (n, 4), r.choice(FLOATS))}.abs() * 10"]
    lines += ["areas = torch.zeros(len(boxes))", "ratio = torch.empty(len(boxes), dtype=torch.float64)",
              "for i in range(len(boxes)):", "    x1, y1, x2, y2 = boxes[i]", "    w = x2 - x1",
              f"    h = {r.choice(['y2 - y1', '(y2 - y1).abs()', 'torch.maximum(y2 - y1, w)'])}",
              "    areas[i] = w * h", f"    ratio[i] = {r.choice(['w / (h + 1)', 'h', 'w * 2 + h'])}"]
    counted("several outputs, unpacked rows", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_elif_chains(r):
    n = r.choice([0, 3, 7])
    dtype = r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {tensor(r, (n,), dtype)}", "out = torch.zeros(len(x))", "for i in range(len(x)):",
             "    v = x[i]", "    if v > 1:", f"        out[i] = {r.choice(['v * 2', '1.0', 'v - 1'])}",
             "    elif v < -1:", f"        out[i] = {r.choice(['-v', '0.5', 'v'])}", "    else:",
             f"        out[i] = {r.choice(['v', 'v * v', '0.0'])}"]
    if r.random() < 0.4:  # no final `else`: some elements get neither store (an in-place clamp)
        lines = lines[:-2]
        if r.random() < 0.5:
            lines = [line.replace("out[i]", "x[i]").replace("out = torch.zeros(len(x))", "out = x") for line in lines]
    counted("if / elif / else", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_branches_with_powers_and_divisions(r):
    """``**``, ``//``, ``%`` in a branch computed for every element vectorized: on floating tensors they give inf or
    NaN, never raise (the smooth L1 loss, ``0.5 * d ** 2 / beta``), nor does an int tensor to a power >= 0."""
    n = r.choice([0, 3, 8])
    dtype = r.choice(FLOATS + ["torch.float16"] + INTS)
    lines = [seed(r), f"x = {tensor(r, (n,), dtype if dtype != 'torch.float16' else 'torch.float32')}"
             + (".half()" if dtype == "torch.float16" else ""),
             f"y = {tensor(r, (n,), 'torch.float32')}", "beta = 1.0", "out = torch.zeros(len(x), dtype=torch.float64)",
             "for i in range(len(x)):", "    d = (x[i] - y[i]).abs()" if r.random() < 0.5 else "    d = x[i]",
             f"    if {r.choice(['d < beta', 'd > 0', 'x[i] == 0'])}:",
             f"        out[i] = {r.choice(['0.5 * d ** 2 / beta', 'd // 0', 'd % 0', 'd ** -1', 'y[i] ** 2'])}",
             "    else:", f"        out[i] = {r.choice(['d - 0.5 * beta', 'd // 2', 'd ** 2', 'd % 3'])}"]
    counted("branches with powers and divisions", program(lines), tolerance=1e-3)


@MANY
@given(st.randoms(use_true_random=False))
def test_in_place_clamps_and_tuples(r):
    n, d = r.choice([0, 1, 6]), r.choice([1, 3, 7])
    dtype = r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {tensor(r, (n,), dtype)}"]
    if dtype in FLOATS and n and r.random() < 0.5:
        lines.append(f"x[{r.randrange(n)}] = float('nan')")  # NaN < c is False: the loop and clamp_ keep it
    if r.random() < 0.5:
        c = r.choice(["0", "1", "-2"] + (["0.5", "-1.5"] if dtype in FLOATS else []))
        op = r.choice(["<", "<=", ">", ">="])
        test = r.choice([f"x[i] {op} {c}", f"{c} {dict(zip('<>', '><')).get(op[0]) + op[1:]} x[i]"])
        lines += ["for i in range(len(x)):", f"    if {test}:", f"        x[i] = {c}"]
    else:
        k = r.choice([1, 2, d])
        lines += [f"scores = {tensor(r, (n, d), r.choice(FLOATS))}", f"vals = torch.empty({n}, {k})",
                  f"idx = torch.empty({n}, {k}, dtype=torch.long)", f"for i in range({n}):",
                  f"    v, j = scores[i].topk({k}{r.choice(['', ', largest=False'])})",
                  "    vals[i] = v", "    idx[i] = j"]
    counted("in-place clamps, tuple results", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_in_place_arithmetic(r):
    c, h = r.choice([1, 3]), r.choice([0, 2])
    dtype = r.choice(FLOATS + ["torch.int64"])
    means = ", ".join(r.choice(["0.485", "1", "-2.5", "0.1"]) for _ in range(c))
    lines = [seed(r), f"img = {tensor(r, (c, h, h), dtype)}", f"mean = [{means}]",
             f"std = [{', '.join(r.choice(['0.229', '2', '0.5']) for _ in range(c))}]",
             f"scale = {tensor(r, (c,), r.choice(FLOATS))}"]
    value = r.choice(["(img[k] - mean[k]) / std[k]", "img[k] * 2 + mean[k]", "(img[k] - scale[k]) * 0.5",
                      "img[k] / img[k].abs().max()", "(img[k] + 1) * std[k] - mean[k]"])
    # temporaries read from the slot: a later step of an in-place chain must not read what an earlier one changed
    body = r.choice([[f"img[k] = {value}"], ["lo = img[k].min()", "hi = img[k].max()", "img[k] = (img[k] - lo) / (hi - lo)"],
                     ["m = img[k].mean()", "img[k] = (img[k] - m) * 2"],
                     ["s = img[k].abs().sum()", "img[k] = (img[k] + 1) / (s + 1)"]])
    lines += ["for k in range(img.shape[0]):"] + ["    " + line for line in body]
    counted("in-place arithmetic", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_in_place_updates_per_slot(r):
    """``Z[i] += w[i]`` (one number per row, lined up with the rows, not the columns), ``X[:, j] *= w[j]`` (the walked
    dim last: the numbers broadcast from the right), ``/=``, square targets where a wrong alignment would not raise."""
    n, d = r.choice([0, 1, 3]), r.choice([1, 3])
    dtype = r.choice(FLOATS + ["torch.int64"])
    square = r.random() < 0.5
    m = n if square else d
    lines = [seed(r), f"X = {tensor(r, (n, m), dtype)}", f"w = {tensor(r, (max(n, m),), r.choice(FLOATS))}.abs() + 0.5",
             f"v = {tensor(r, (max(n, m),), dtype)}"]
    if r.random() < 0.5:  # a zeros allocation right before: the update cannot replace it unless it has its shape
        lines.append(f"X = torch.zeros({n}, {m}, dtype={dtype})")
    op = r.choice(["+=", "-=", "*=", "/="])
    value = r.choice(["w[{k}]", "v[{k}]", "v[{k}] * 2", "w[{k}] + 1"])
    if r.random() < 0.5:
        lines += [f"for i in range({n}):", f"    X[i] {op} {value.format(k='i')}"]
    else:
        lines += [f"for j in range({m}):", f"    X[:, j] {op} {value.format(k='j')}"]
    counted("in-place updates per slot", program(lines))


# -- index forms -------------------------------------------------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_shifted_and_strided(r):
    n = r.choice([0, 1, 2, 6, 9])
    dtype = r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {laid_out(r, (n,), dtype)}", f"y = {tensor(r, (n,), r.choice(FLOATS))}"]
    form = r.randrange(6)
    if form == 0:
        lines += ["d = torch.empty(len(x) - 1)" if n else "d = torch.empty(0)", "for i in range(len(x) - 1):",
                  f"    d[i] = {r.choice(['x[i + 1] - x[i]', 'x[i + 1] * y[i]', '(x[i] + x[i + 1]) / 2'])}"]
    elif form == 1:
        lines += ["d = x.clone().float()", "for i in range(1, len(x) - 1):",
                  f"    d[i] = {r.choice(['0.5 * (x[i - 1] + x[i + 1])', 'x[i - 1] - y[i + 1]', 'x[i] * 2'])}"]
    elif form == 2:
        reversed_read = r.choice(['x[len(x) - 1 - i]', 'x[n - 1 - i] + y[i]'])
        lines += [f"d = torch.zeros({n})", "for i in range(len(x)):", f"    d[i] = {reversed_read}"]
        lines.insert(1, f"n = {n}")
    elif form == 3:
        step = r.choice([2, 3])
        lines += [f"d = torch.zeros({n})", f"for i in range(0, len(x), {step}):", "    d[i] = x[i] * 3 + y[i]"]
    else:
        lines += [f"d = torch.ones({n}, dtype=torch.float64)", "for i in reversed(range(len(x))):",
                  "    d[i] = x[i] + 1"]
    counted("shifted / reversed / strided walks", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_columns_and_diagonals(r):
    n, m = r.choice([0, 1, 4]), r.choice([1, 3])
    dtype = r.choice(FLOATS)
    lines = [seed(r), f"X = {laid_out(r, (n, m), dtype)}"]
    form = r.randrange(6)
    if form == 0:
        lines += ["stats = torch.zeros(X.shape[1])", "for j in range(X.shape[1]):",
                  "    stats[j] = " + r.choice(['X[:, j].mean()', 'X[:, j].abs().max()', 'X[:, j].sum() * 2',
                                           'X[:, j].norm()'])]
    elif form == 1:
        lines += ["Z = X.clone()", "for j in range(X.shape[1]):",
                  "    Z[:, j] = " + r.choice(['(X[:, j] - X[:, j].mean()) / (X[:, j].std() + 1)', 'X[:, j] * 2',
                                           'X[:, j] / (X[:, j].abs().max() + 1)'])]
    elif form == 2:
        lines += ["S = torch.empty_like(X)", "for j in range(X.shape[1]):", "    S[:, j] = X[:, j].exp()"]
    elif form == 3:
        k = r.choice([0, 1, 5])
        lines += [f"A = {laid_out(r, (k, k), dtype)}", f"diag = torch.zeros({k})", f"for i in range({k}):",
                  f"    diag[i] = {r.choice(['A[i, i]', 'A[i, i] * 2', 'A[i][i] + 1'])}",
                  "tr = 0.0" if k else "tr = torch.tensor(0.0)", f"for i in range({k}):", "    tr += A[i, i]"]
    else:
        k = r.choice([0, 1, 4])
        lines += [f"E = torch.zeros({k}, {k})", f"v = {tensor(r, (k,), dtype)}", f"for i in range({k}):",
                  f"    E[i, i] = {r.choice(['1.0', 'v[i]', 'v[i] * 2'])}"]
    counted("columns and diagonals", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_medians_per_row(r):
    """``x[i].median()`` / ``torch.nanmedian(x[i])`` per row (NaN, ties, ints): ``x.median(dim=1).values``; rows that
    may be empty are refused (the no-dim median of an empty row is NaN, the dim form raises), and so are expanded
    inputs (torch's median along a stride-0 dim returns garbage; the dim forms were rewritten before: WRONG)."""
    n, d = r.choice([0, 1, 4]), r.choice([0, 1, 2, 5])
    dtype = r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {laid_out(r, (n, d), dtype)}"]
    if dtype in FLOATS and r.random() < 0.5 and n and d:
        lines.append("x[0, 0] = float('nan')")
    op = r.choice(["x[i].median()", "torch.median(x[i])", "x[i].median(dim=0).values", "torch.median(x[i], 0)[0]"]
                  + (["torch.nanmedian(x[i])", "x[i].nanmedian(0).values"] if dtype in FLOATS else []))
    if r.random() < 0.5:
        lines += [f"med = torch.zeros({n}, dtype={dtype})", "for i in range(x.shape[0]):", f"    med[i] = {op}"]
    else:
        lines += ["med = []", "for i in range(len(x)):", f"    med.append({op})"] + (["med = torch.stack(med)"] if n else [])
    counted("medians per row", program(lines))


PERMUTATIONS = ["torch.randperm({n})", "x.argsort()", "torch.argsort(x, descending=True)", "x.sort().indices",
                "torch.sort(x, stable=True).indices"]


@MANY
@given(st.randoms(use_true_random=False))
def test_stores_through_a_permutation(r):
    """``inv[perm[i]] = i`` / ``out[perm[i]] = x[i] * 2`` with ``perm`` a permutation made right before the loop (and
    only sized in between): one advanced-index store, each slot written once (ties in ``x``, empty, partial ranges)."""
    n = r.choice([0, 1, 2, 7])
    dtype = r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {tensor(r, (n,), dtype)}", f"perm = {r.choice(PERMUTATIONS).format(n=n)}"]
    # (not empty_like: a partial range leaves its garbage, different from run to run)
    lines.append(r.choice(["inv = torch.full_like(perm, -1)", "inv = torch.zeros(len(perm), dtype=torch.long)",
                           f"inv = torch.full(({n},), -1)", "inv = torch.zeros_like(perm)"]))
    if r.random() < 0.3:
        lines.append("m = perm.numel() + len(perm)")
    header = r.choice(["for i in range(len(perm)):", "for i in range(perm.numel()):", f"for i in range({n}):",
                       f"for i in range({n // 2}):", "for i in range(1, len(perm)):"])
    if r.random() < 0.5:
        lines += [header, f"    inv[perm[i]] = {r.choice(['i', 'i * 2', 'x[i].long()', 'n_off - i'])}"]
        lines.insert(1, "n_off = 10")
    else:
        lines += [f"out = torch.zeros({n}, dtype={dtype})", header,
                  f"    out[perm[i]] = {r.choice(['x[i] * 2', 'x[i]', 'x[i] + i'])}"]
    counted("stores through a permutation", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_several_lists_stacked_after(r):
    """Two or three lists appended in one loop and joined by the statements right after it, one each, in any order
    (``variances = torch.stack(variances)`` then ``stds = torch.stack(stds)``): each join rewritten in its place."""
    n, d = r.choice([1, 3, 6]), r.choice([1, 4])
    dtype = r.choice(FLOATS)
    lines = [seed(r), f"X = {laid_out(r, (n, d), dtype)}"]
    lists = r.sample([("m", "col.mean()"), ("v", "col.var()"), ("s", "col.std() * 2"), ("mx", "col.max()"),
                      ("e", "col.exp()")], r.choice([2, 3]))
    lines += [f"{name} = []" for name, _ in lists]
    lines += [f"for j in range(X.shape[1]):", "    col = X[:, j]"]
    lines += [f"    {name}.append({value})" for name, value in lists]
    order = r.sample(lists, len(lists))
    for name, value in order:
        join = "torch.stack" if "exp" in value or r.random() < 0.7 else "torch.tensor"
        target = name if r.random() < 0.7 else f"{name}_t"
        lines.append(f"{target} = {join}({name})")
    if r.random() < 0.5:
        lines = [lines[0]] + in_function(r, lines[1:], {})
    counted("several lists stacked after the loop", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_masked_stores_per_row(r):
    """``x[i][x[i] < 0] = 0`` (``x[i, m[i]] = c``) over every row: each row's boolean mask picks its slots for one
    number, ``x[x < 0] = 0`` (the masks read the rows before any is written; rows of 1 or 2 dims, empty, NaN)."""
    n, d, e = r.choice([0, 1, 5]), r.choice([0, 3]), r.choice([None, 2])
    shape = (n, d) if e is None else (n, d, e)
    dtype = r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {laid_out(r, shape, dtype)}", f"y = {tensor(r, shape, 'torch.float32')}"]
    if dtype in FLOATS and n and d and r.random() < 0.3:
        lines.append("x[0, 0] = float('nan')")
    mask = r.choice(["x[i] < 0", "y[i] > 0", "x[i] > x[i].float().mean()", "(x[i] > 0) & (y[i] < 0)"]
                    + (["torch.isnan(x[i])"] if dtype in FLOATS else []))
    value = r.choice(["0", "1", "-2"] + (["0.5", "float('nan')"] if dtype in FLOATS else []))
    store = r.choice([f"x[i][{mask}] = {value}", f"x[i, {mask}] = {value}"]) if e is None else f"x[i][{mask}] = {value}"
    lines += [r.choice(["for i in range(x.shape[0]):", "for i in range(len(x)):"]), f"    {store}"]
    if r.random() < 0.5:
        lines = [lines[0]] + in_function(r, lines[1:], {})
    counted("masked stores per row", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_ragged_spans(r):
    """``mask[i, starts[i]:ends[i]] = True`` (and ``x[i, lo[i]:hi[i]] = c``): the positions >= lo and < hi of each row,
    each bound counted from the end when negative as Python slices do, empty when hi <= lo, clamped past the end."""
    b, t = r.choice([0, 1, 6]), r.choice([1, 5])
    low = r.choice([0, -t - 1])
    lines = [seed(r), f"starts = torch.randint({low}, {t + 2}, ({b},))",
             f"ends = {r.choice(['starts + torch.randint(0, 4, starts.shape)', f'torch.randint({low}, {t + 2}, ({b},))'])}"]
    if r.random() < 0.5:
        lines += [f"mask = torch.zeros({b}, {t}, dtype=torch.bool)", f"for i in range({b}):",
                  "    mask[i, starts[i]:ends[i]] = True"]
    else:
        lines += [f"x = {tensor(r, (b, t, 2), r.choice(FLOATS))}", "for i in range(len(starts)):",
                  f"    x[i, starts[i]:ends[i]] = {r.choice(['0', '-1.5'])}"]
    if r.random() < 0.5:
        lines = [lines[0]] + in_function(r, lines[1:], {})
    counted("ragged spans (two bounds)", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_triangular_walks(r):
    """``for j in range(i + c, n)`` inside ``for i in range(m)``: the iterations of ``range(n)`` where ``j >= i + c``,
    in the same order (stores above the diagonal, pairwise distances, counts of pairs; square or not, empty)."""
    m, n, c = r.choice([0, 1, 5]), r.choice([0, 1, 5]), r.choice([0, 1, 2])
    dtype = r.choice(FLOATS)
    lines = [seed(r), f"x = {laid_out(r, (max(m, n), 3), dtype)}"]
    start = r.choice([f"i + {c}", f"{c} + i"]) if c else "i"
    form = r.randrange(4)
    if form == 0:
        lines += [f"D = torch.zeros({m}, {n}, dtype={dtype})", f"for i in range({m}):",
                  f"    for j in range({start}, {n}):", "        D[i, j] = torch.dot(x[i], x[j])"]
    elif form == 1:
        lines += [f"D = torch.full(({m}, {n}), -1.0, dtype={dtype})", f"for i in range({m}):",
                  f"    for j in range({start}, {n}):", "        D[i, j] = (x[i] - x[j]).norm()"]
    elif form == 2:
        lines += [f"M = torch.zeros({m}, {n}, dtype=torch.bool)", f"for i in range({m}):",
                  f"    for j in range({start}, {n}):", "        M[i, j] = True"]
    else:
        lines += [f"close = torch.zeros({m}, dtype=torch.long)", f"for i in range({m}):",
                  f"    for j in range({start}, {n}):", "        if (x[i] - x[j]).abs().sum() < 2:",
                  "            close[i] += 1"]
    if r.random() < 0.5:
        lines = [lines[0]] + in_function(r, lines[1:], {})
    counted("triangular walks", program(lines), tolerance=1e-4)


@MANY
@given(st.randoms(use_true_random=False))
def test_traces_per_matrix(r):
    """``torch.trace(M[k])`` / ``m.trace()`` per matrix of a batch: ``M.diagonal(dim1=-2, dim2=-1).sum(-1)`` (square
    or not, empty, int dtypes summed to int64 as trace does), stored, stacked or kept in a comprehension."""
    n, a, b = r.choice([0, 1, 5]), r.choice([0, 1, 3]), r.choice([1, 3, 4])
    dtype = r.choice(FLOATS + INTS + ["torch.float16"])
    lines = [seed(r), f"M = {tensor(r, (n, a, b), dtype) if dtype != 'torch.float16' else tensor(r, (n, a, b), 'torch.float32') + '.half()'}"]
    form = r.randrange(4)
    if form == 0:
        lines += [f"tr = torch.zeros({n}, dtype=torch.float64)", "for k in range(M.shape[0]):",
                  f"    tr[k] = {r.choice(['torch.trace(M[k])', 'M[k].trace()', 'torch.trace(M[k]) * 2 + 1'])}"]
    elif form == 1:
        lines += ["tr = torch.stack([torch.trace(m) for m in M])" if n else "tr = None"]
    elif form == 2:
        lines += ["out = []", "for m in M:", "    out.append(m.trace())"] + (["tr = torch.stack(out)"] if n else [])
    else:
        lines += ["tr = torch.empty(M.shape[0])", "for k in range(len(M)):", "    tr[k] = torch.trace(M[k] + 1) / 2"]
    counted("traces per matrix", program(lines), tolerance=1e-3)


@MANY
@given(st.randoms(use_true_random=False))
def test_triangles(r):
    """``if j > i + k: M[i, j] = c`` in two nested ``range`` loops: a triangle (``triu``/``tril`` of ones, not two
    aranges compared); into fresh zeros, ``torch.full(...).triu_(k)``. Square and not, both orders of the
    comparison, offsets, ranges not starting at 0, values per element, ints and bools; a third loop or a
    comparison of an index with itself keeps the generic mask."""
    n, m = r.choice([0, 1, 4]), r.choice([1, 3, 4])
    dtype = r.choice(FLOATS + ["torch.int64", "torch.bool"])
    op = r.choice(["<", "<=", ">", ">="])
    offset = r.choice(["", "", " + 1", " - 2", " + 3"])
    test = r.choice([f"j {op} i{offset}", f"i{offset} {op} j", f"j{offset} {op} i", f"i {op} j - 1"])
    value = {"torch.bool": "True", "torch.int64": r.choice(["1", "-3"])}.get(dtype, r.choice(
        ["float('-inf')", "1.0", "-2", "0.5"]))
    if dtype != "torch.bool" and r.random() < 0.25:
        value = r.choice(["A[i, j]", "A[i, j] * 2"])
    start = r.choice(["", "", "1, "])
    alloc = r.choice([f"torch.zeros({n}, {m}, dtype={dtype})", f"torch.zeros(({n}, {m}), dtype={dtype})",
                      f"torch.ones({n}, {m}, dtype={dtype})"] + (
        [f"torch.zeros({n}, {m})"] if dtype == "torch.float32" or dtype in FLOATS and value != "-2" else []))
    lines = [seed(r), f"A = {tensor(r, (n, m), dtype if dtype != 'torch.bool' else 'torch.float32')}",
             f"M = {alloc}", f"for i in range({start}{n}):", f"    for j in range({m}):", f"        if {test}:",
             f"            M[i, j] = {value}"]
    if r.random() < 0.15:
        lines[-1:] = ["            for k in range(2):", f"                M[i, j] = {value}"]
    counted("triangles", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_gathers(r):
    n, v, d = r.choice([0, 1, 6]), r.choice([1, 5]), r.choice([1, 3])
    index_dtype = r.choice(["torch.int64", "torch.int32", "torch.int64"])
    low = -v if r.random() < 0.3 else 0  # negative indices wrap, in the loop and vectorized alike
    high = v + (1 if r.random() < 0.1 else 0)  # past the end: both raise
    lines = [seed(r), f"table = {laid_out(r, (v, d), r.choice(FLOATS))}",
             f"ids = torch.randint({low}, {high}, ({n},), dtype={index_dtype})",
             f"logits = {laid_out(r, (n + r.choice([0, 0, 2]), v), r.choice(FLOATS))}"]  # rows past the loop's too
    if r.random() < 0.2:
        lines += un_nonnegative(r, "ids", n)  # `gather` takes no negative index: then advanced indexing stays
    form = r.randrange(5)
    if form == 0:
        lines += ["out = torch.stack([table[t] for t in ids])" if n else "out = table[ids]"]
    elif form == 1:
        lines += ["picked = torch.empty(len(ids))", "for i in range(len(ids)):", "    picked[i] = logits[i, ids[i]]"]
    elif form == 2:
        lines += ["loss = 0.0", "for i in range(len(ids)):", "    loss -= logits[i, ids[i]]"]
        if not n:
            lines = lines[:-3] + ["loss = 0.0"]
    elif form == 3:
        lines += ["onehot = torch.zeros(len(ids), table.shape[0])", "for i in range(len(ids)):",
                  f"    onehot[i, ids[i]] = {r.choice(['1', '1.0', 'logits[i, 0]' if v else '1'])}"]
    else:  # token embeddings: one row per (b, t), inside two loops
        t = r.choice([1, 3])
        lines += [f"tokens = torch.randint({low}, {high}, ({n}, {t}), dtype={index_dtype})",
                  f"pos = {tensor(r, (t, d), r.choice(FLOATS))}", f"h = torch.zeros({n}, {t}, {d})",
                  f"for b in range({n}):", f"    for s in range({t}):",
                  f"        h[b, s] = {r.choice(['table[tokens[b, s]]', 'table[tokens[b, s]] + pos[s]', 'table[tokens[b][s]] * 2'])}"]
    counted("gathers and one-hot stores", program(lines), tolerance=1e-4 * max(1, n))


@MANY
@given(st.randoms(use_true_random=False))
def test_windows_and_ragged_reductions(r):
    n, t, h = r.choice([0, 1, 5, 9]), r.choice([1, 4]), r.choice([1, 3])
    lines = [seed(r)]
    if r.random() < 0.5:
        k = r.choice([1, 2, 3])
        lines += [f"x = {tensor(r, (n,) if r.random() < 0.7 else (n, h), r.choice(FLOATS))}", f"k = {k}"]
        stop = r.choice(["len(x) - k + 1", "len(x) - k", "len(x) - k + 2", "len(x)"])  # the last two run past the end
        lines += [f"out = torch.zeros(max(0, {stop}), *x.shape[1:])", f"for i in range(max(0, {stop})):",
                  f"    out[i] = x[i:i + k].{r.choice(['mean(dim=0)', 'sum(dim=0)', 'amax(dim=0)', 'sum(0) * 2'])}"]
    else:
        low = r.choice([0, 0, -t - 1])
        lines += [f"hidden = {tensor(r, (n, t, h), r.choice(FLOATS))}",
                  f"lengths = torch.randint({low}, {t + 2}, ({n},))"]
        if n and r.random() < 0.5:
            lines.append(f"hidden[0, -1] = float('{r.choice(['nan', 'inf'])}')")  # outside most rows' slice
        lines += [f"pooled = torch.zeros({n}, {h})", f"for b in range({n}):",
                  f"    pooled[b] = hidden[b, {r.choice([':lengths[b]', 'lengths[b]:'])}]."
                  + r.choice(['mean(dim=0)', 'sum(dim=0)', 'sum(0)'])]
    counted("windows and ragged reductions", program(lines), tolerance=1e-4)


# -- scatters, histograms, ragged stores -------------------------------------------------------------------------------
def un_nonnegative(r: random.Random, name: str, n: int) -> list:
    """Sometimes, lines that may make an index tensor made >= 0 negative afterwards (the wrap is needed again)."""
    if r.random() < 0.6:
        return []
    return [r.choice([f"{name} -= 2", f"{name}[:1] = -1", f"alias = {name}\nalias.sub_(3)",
                      f"{name} = {name} - 1", f"{name}.neg_()"])]


@MANY
@given(st.randoms(use_true_random=False))
def test_scatters(r):
    n, k, d = r.choice([0, 1, 8, 30]), r.choice([1, 4]), r.choice([1, 2])
    low = -k if r.random() < 0.3 else 0
    lines = [seed(r), r.choice([f"idx = torch.randint({low}, {k + (1 if r.random() < 0.1 else 0)}, ({n},))",
                                f"idx = torch.randn({n}, {k}).argmax(dim=1)", f"idx = torch.arange({n}) % {k}"]),
             f"feats = {tensor(r, (n, d), r.choice(FLOATS))}", f"vals = {tensor(r, (n,), r.choice(FLOATS + INTS))}"]
    lines += un_nonnegative(r, "idx", n)
    form = r.randrange(5)
    dtype = r.choice(FLOATS + ["torch.int64"])
    if form == 0:
        lines += [f"sums = torch.zeros({k}, {d})", "for i in range(len(idx)):", "    sums[idx[i]] += feats[i]"]
    elif form == 1:
        lines += [f"counts = torch.zeros({k}, dtype={dtype})", "for t in idx:", "    counts[t] += 1"]
    elif form == 2:
        lines += [f"totals = torch.zeros({k}, {d})", f"counts = torch.zeros({k})", "for p, c in zip(feats, idx):",
                  "    totals[c] += p", "    counts[c] += 1"]
    elif form == 3:
        lines += [f"acc = torch.zeros({k})", "for i in range(len(idx)):", "    if vals[i] > 0:",
                  "        acc[idx[i]] += 2"]
    else:
        lines += [f"acc = torch.ones({k}, dtype={dtype})", "for i in range(len(idx)):", "    acc[idx[i]] -= vals[i]"]
    counted("scatters and histograms", program(lines), tolerance=1e-4 * max(1, n))


@MANY
@given(st.randoms(use_true_random=False))
def test_two_writes_per_iteration(r):
    """Two writes into one tensor per iteration whose order cannot matter: additions into slots (``deg[u] += 1;
    deg[v] += 1``, ``+=`` and ``-=``, one of them conditional) or one number into gathered slots (``A[u, v] = 1;
    A[v, u] = 1``): one statement each (duplicates, wrapping negative indices, out-of-range ones that raise)."""
    n, k = r.choice([0, 1, 6, 25]), r.choice([1, 5])
    low = -k if r.random() < 0.3 else 0
    high = k + (1 if r.random() < 0.1 else 0)
    lines = [seed(r), f"edges = torch.randint({low}, {high}, ({n}, 2))",
             f"w = {tensor(r, (n,), r.choice(FLOATS + INTS))}"]
    header = r.choice(["for u, v in edges:", "for e in range(edges.shape[0]):"])
    u, v = ("u", "v") if header.startswith("for u") else ("edges[e, 0]", "edges[e, 1]")
    weight = "w[e]" if "e in" in header else None
    form = r.randrange(4)
    dtype = r.choice(FLOATS + ["torch.int64"])
    if form == 0:
        lines += [f"deg = torch.zeros({k}, dtype={dtype})", header, f"    deg[{u}] += 1", f"    deg[{v}] += 1"]
    elif form == 1:
        one = r.choice(["1", "1.0"])
        lines += [f"A = torch.zeros({k}, {k}, dtype={dtype})", header, f"    A[{u}, {v}] = {one}",
                  f"    A[{v}, {u}] = {r.choice(['1', '1.0'])}"]
    elif form == 2 and weight:
        lines += [f"acc = torch.zeros({k}, dtype=torch.float64)", header, f"    acc[{u}] += {weight}",
                  f"    acc[{v}] -= {weight} * 2"]
    else:
        lines += [f"deg = torch.zeros({k})", header, f"    deg[{u}] += 1", f"    if {v} > 0:",
                  f"        deg[{v}] += 0.5"]
    if r.random() < 0.5:
        lines = [lines[0]] + in_function(r, lines[1:], {})
    counted("two writes per iteration", program(lines), tolerance=1e-4 * max(1, n))


@MANY
@given(st.randoms(use_true_random=False))
def test_scatters_in_nested_walks(r):
    """``counts[i, tok] += 1`` in ``for i ...: for tok in docs[i]`` (bag of words), ``hist[tok] += 1`` over every row,
    ``H[a[i, j], b[i, j]] += w[i, j]`` (a 2-d histogram in a nest): one accumulating ``index_put_`` whose indices
    broadcast over the loop dims (duplicates, negative indices that wrap, out-of-range ones that raise, empty)."""
    n, m, k = r.choice([0, 1, 4]), r.choice([0, 1, 6]), r.choice([1, 5])
    low = -k if r.random() < 0.3 else 0
    high = k + (1 if r.random() < 0.1 else 0)
    dtype = r.choice(FLOATS + ["torch.int64"])
    lines = [seed(r), f"docs = torch.randint({low}, {high}, ({n}, {m}))",
             f"other = torch.randint(0, {k}, ({n}, {m}))", f"w = {tensor(r, (n, m), r.choice(FLOATS))}"]
    form = r.randrange(4)
    if form == 0:
        lines += [f"counts = torch.zeros({n}, {k}, dtype={dtype})", "for i in range(docs.shape[0]):",
                  "    for tok in docs[i]:", "        counts[i, tok] += 1"]
    elif form == 1:
        lines += [f"counts = torch.zeros({n}, {k})", "for i, row in enumerate(docs):",
                  "    for j in range(row.shape[0]):", f"        counts[i, row[j]] {r.choice(['+=', '-='])} w[i, j]"]
    elif form == 2:
        lines += [f"hist = torch.zeros({k}, dtype={dtype})", "for row in docs:", "    for tok in row:",
                  "        hist[tok] += 1"]
    else:
        lines += [f"H = torch.zeros({k}, {k})", f"for i in range({n}):", f"    for j in range({m}):",
                  "        H[docs[i, j], other[i, j]] += w[i, j]"]
    if r.random() < 0.5:
        lines = [lines[0]] + in_function(r, lines[1:], {})
    counted("scatters in nested walks", program(lines), tolerance=1e-4 * max(1, n * m))


@MANY
@given(st.randoms(use_true_random=False))
def test_scatters_into_a_parameter(r):
    """``totals[c] += p`` in a function whose index tensor is a parameter: no wrap below zero only where every
    call passes a tensor made >= 0 that nothing changes, and the function only reads it (the near-misses: a
    call passing negatives, a second call, the function passed around, the parameter changed inside, another
    argument position that the function writes, an index made negative after the call is decided)."""
    n, k = r.choice([0, 1, 8, 30]), r.choice([1, 4])
    low = -k if r.random() < 0.25 else 0
    body = ["def update(points, assign, k):", f"    totals = torch.zeros(k, {2})", "    counts = torch.zeros(k)"]
    if r.random() < 0.15:
        body.append(r.choice(["    assign = assign - 1", "    assign[:1] = -1", "    assign.neg_()"]))
    body += ["    for p, c in zip(points, assign):", "        totals[c] += p", "        counts[c] += 1",
             "    return totals, counts"]
    lines = [seed(r), f"points = {tensor(r, (n, 2), r.choice(FLOATS))}",
             f"assign = torch.randint({low}, {k}, ({n},))"] + un_nonnegative(r, "assign", n) + body
    lines.append(r.choice(["result = update(points, assign, {k})", "result = update(points, assign=assign, k={k})",
                           "result = update(points, assign, {k})\nother = update(points, assign - 1, {k})",
                           "g = update\nresult = g(points, assign, {k})"]).format(k=k))
    counted("scatters into a parameter", program(lines), tolerance=1e-4 * max(1, n))


@MANY
@given(st.randoms(use_true_random=False))
def test_ragged_stores(r):
    b, t, h = r.choice([0, 1, 5]), r.choice([1, 4]), r.choice([1, 2])
    low = r.choice([0, 0, -t - 1])  # negative bounds count from the end, as Python slices do
    if r.random() < 0.3:  # a Python list of lengths, read by `max` too (negative ones count from the end)
        lines = [seed(r), f"lengths = [{', '.join(str(r.randrange(low, t + 2)) for _ in range(b))}]",
                 f"longest = max(lengths{', default=0' if not b else ''})"]
    else:
        lines = [seed(r), f"lengths = torch.randint({low}, {t + 2}, ({b},))"] + un_nonnegative(r, "lengths", b)
    form = r.randrange(3)
    if form == 0:
        lines += [f"mask = torch.zeros({b}, {t}, dtype=torch.bool)", f"for i in range({b}):",
                  "    mask[i, :lengths[i]] = True"]
    elif form == 1:
        lines += [f"x = {tensor(r, (b, t, h), r.choice(FLOATS))}", "for i, L in enumerate(lengths):",
                  "    x[i, L:] = 0"]
    else:
        lines += [f"pad = torch.full(({b}, {t}), -1)", "for i in range(len(lengths)):",
                  f"    pad[i, {r.choice([':lengths[i]', 'lengths[i]:'])}] = 7"]
    counted("ragged prefix stores", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_copy_into_slots(r):
    """``T[i].copy_(v)``, its result thrown away, is the store ``T[i] = v``: cast to ``T``'s dtype, broadcast to
    the slot, in place."""
    n, d = r.choice([0, 1, 5]), r.choice([1, 3])
    src, dst = r.choice(FLOATS + INTS), r.choice(FLOATS + INTS)
    params = {"x": laid_out(r, (n, d), src), "w": tensor(r, (n,), src)}
    value = r.choice(["x[i]", "x[i] * 2", "x[i].abs()", "torch.relu(x[i])", "w[i]", "x[i] + w[i]", "x[i, 0]"])
    call = r.choice([f"copy_({value})", f"copy_({value}, non_blocking=True)", f"copy_({value}, False)"])
    slot = r.choice(["out[i]", "out[i, :]", "out[i][:]"])
    lines = [f"out = torch.zeros({n}, {d}, dtype={dst})"]
    if r.random() < 0.3:
        lines += ["for i in range(len(x)):", "    for j in range(x.shape[1]):",
                  f"        out[i][j].copy_({r.choice(['x[i, j]', 'x[i][j] * 2', 'w[i]'])})"]
    else:
        lines += ["for i in range(len(x)):", f"    {slot}.{call}"]
    counted("copy_ into a slot (a store)", program([seed(r)] + _with_params(r, lines, params)))


@MANY
@given(st.randoms(use_true_random=False))
def test_items_of_pairs(r):
    """``batch[i][0]`` of a list of ``(image, label)`` pairs (timm's fast_collate): the tensors at that place of
    every pair, stacked; stored, copied into slots or computed on."""
    n, d = r.choice([1, 4]), r.choice([1, 3])
    src, dst = r.choice(FLOATS + INTS), r.choice(FLOATS + INTS)
    where = r.choice([0, 1, -1])
    pair = ["f\"{k}\"", "x"] if where else ["x", "k % 3"]
    pairs = f"[({', '.join(pair).replace('x', laid_out(r, (d,), src))}) for k in range({n})]"
    if where == 0:
        item = "batch[i][0]"
    else:
        item = f"batch[i][{where}]"
    value = r.choice([item, f"{item} * 2", f"{item}.abs()", f"torch.relu({item}.float())"])
    store = r.choice([f"out[i] = {value}", f"out[i].copy_({value})", f"out[i] += {value}"])
    lines = [f"out = torch.zeros({n}, {d}, dtype={dst})", "for i in range(len(batch)):", f"    {store}"]
    counted("items of pairs (batch[i][0])", program([seed(r)] + _with_params(r, lines, {"batch": pairs})))


@MANY
@given(st.randoms(use_true_random=False))
def test_membership_in_rows(r):
    """``v in t[i]`` of a tensor row is ``Tensor.__contains__``, ``(v == t[i]).any()`` (``not in``: ``(v != t[i]).all()``):
    counted, kept as Python bools, stored; the element a slice, its ``.item()`` or a number; NaN and empty rows."""
    n, k = r.choice([0, 1, 5]), r.choice([0, 1, 3])
    row_dtype, value_dtype = r.choice(FLOATS + INTS), r.choice(FLOATS + INTS)
    nan = ["if t.is_floating_point() and t.numel():", "    t[0, 0] = float('nan')"] if r.random() < 0.3 else []
    op = r.choice(["in", "not in"])
    element = r.choice(["v[i]", "v[i].item()", "2", "v[i] * 2", "a"])
    header = "for i, a in enumerate(v):" if element == "a" else r.choice(["for i in range(len(v)):",
                                                                          "for i in range(v.shape[0]):"])
    test = f"{element} {op} {r.choice(['t[i]', 't[i] * 1'])}"
    form = r.randrange(3)
    if form == 0:
        body = ["out = 0", header, f"    if {test}:", "        out += 1"]
    elif form == 1:
        body = ["out = []", header, f"    out.append({test})"]
    else:
        body = [f"out = torch.zeros({n}, dtype={r.choice(['torch.bool', 'torch.int64', 'torch.float32'])})", header,
                f"    out[i] = {test}"]
    params = {"t": tensor(r, (n, k), row_dtype), "v": tensor(r, (n,), value_dtype)}
    lines = [seed(r)] + [f"{name} = {value}" for name, value in params.items()] + nan
    counted("membership in a row (v in t[i])", program(lines + body))


@MANY
@given(st.randoms(use_true_random=False))
def test_items_of_one_element_tensors(r):
    """``.item()`` / ``float()`` / ``int()`` of an element of shape (1,) or (1, 1): a per-row number plus a
    ``torch.randn(1)`` bias is one number per element (the whole leaves the size-1 dims out); appended, summed,
    stored. A bias of 2 numbers makes the loop raise: the rewrite must raise too, or not be offered."""
    n, d = r.choice([0, 1, 5]), r.choice([1, 3])
    dtype = r.choice(FLOATS + INTS)
    bias_shape = r.choice([(1,), (1,), (1, 1), (2,)])
    row = r.choice(["(x[i] * w).sum()", "x[i].sum()", "x[i].max()", "torch.dot(x[i], w)" if dtype in FLOATS else
                    "x[i].amin()", "x[i] @ w" if dtype in FLOATS else "x[i].sum()"])
    value = r.choice([f"{row} + b", f"b + {row}", f"({row} + b) * 2", f"torch.relu({row} - b)" if dtype in FLOATS
                      else f"{row} - b"])
    convert = r.choice([".item()", "float", "int" if dtype in INTS else ".item()"])
    number = f"({value}).item()" if convert == ".item()" else f"{convert}({value})"
    form = r.randrange(3)
    if form == 0:
        body = ["out = []", "for i in range(len(x)):", f"    out.append({number})"]
    elif form == 1:
        body = ["out = 0.0", "for i in range(len(x)):", f"    out += {number}"]
    else:
        body = [f"out = torch.zeros({n}, dtype={r.choice(FLOATS)})", "for i in range(len(x)):", f"    out[i] = {number}"]
    params = {"x": laid_out(r, (n, d), dtype), "w": tensor(r, (d,), dtype), "b": tensor(r, bias_shape, dtype)}
    counted("items of one-element tensors (+ randn(1))", program([seed(r)] + _with_params(r, body, params)))


# (a literal list joined per element, the element rank of its items)
JOINS = [
    ("torch.stack([a, b, a + b])", 0), ("torch.stack((a, b * 2), dim=-1)", 0), ("torch.stack([b, a], 0)", 0),
    ("torch.cat([a, b])", 1), ("torch.cat((a, b.exp(), a * b), dim=0)", 1), ("torch.cat([a, b], -1)", 1),
    ("torch.stack([a, b], dim=1)", 1), ("torch.stack([a, b, a], dim=-2)", 1), ("torch.stack([a, b], dim=-1)", 1),
    ("torch.cat([a, b], dim=1)", 2), ("torch.stack([a, b], dim=2)", 2), ("torch.cat([a, b], dim=-2)", 2),
    # near-misses: an invariant item (stack does not broadcast), a dim out of range (the loop raises)
    ("torch.stack([a, g])", None), ("torch.stack([a, b], dim=2)", 0), ("torch.cat([a, b], dim=1)", 1),
    ("torch.cat([a, b])", 0),
]


def _joined_shape(join: str, item_shape: tuple) -> tuple:
    """The shape one join gives for items of ``item_shape`` (a join that raises: any shape, the loop raises)."""
    try:
        zeros = torch.zeros(item_shape)
        return tuple(eval(join, {"torch": torch, "a": zeros, "b": zeros, "g": zeros}).shape)
    except (RuntimeError, IndexError):
        return ()


@MANY
@given(st.randoms(use_true_random=False))
def test_joined_literal_lists(r):
    """``torch.stack([a, b, a + b])`` / ``torch.cat((a, b), dim=d)`` of per-element values (unpacked scalars, rows,
    matrices): the wholes joined at ``d`` moved past the loop dim; stored, appended, in a comprehension."""
    n = r.choice([0, 1, 4])
    join, rank = r.choice(JOINS)
    rank = r.choice([0, 1, 2]) if rank is None else rank
    shape = {0: (n, 2), 1: (n, 2, 3), 2: (n, 2, 3, 2)}[rank]
    pieces = {0: "x[i, 0], x[i, 1]", 1: "x[i, 0], x[i, 1]", 2: "x[i, 0], x[i, 1]"}[rank]
    x_dtype, y_dtype = r.choice(FLOATS + INTS), r.choice(FLOATS)
    unpack = r.choice([f"a, b = {pieces}", "a, b = x[i]", f"a, b = {pieces.split(', ')[0]}, y[i]"])
    lines = [seed(r), f"x = {laid_out(r, shape, x_dtype) if rank == 0 else tensor(r, shape, x_dtype)}",
             f"y = {tensor(r, (n,) + shape[2:], y_dtype)}", f"g = {tensor(r, shape[2:], y_dtype)}"]
    if "exp" in join and x_dtype in INTS:
        join = join.replace("b.exp()", "b * 3")
    form = r.randrange(3)
    if form == 0:
        lines += ["res = []", "for i in range(len(x)):", f"    {unpack}", f"    res.append({join})",
                  "out = torch.stack(res)"]
    elif form == 1:
        lines += [f"out = torch.zeros(({n},) + {_joined_shape(join, shape[2:])})", "for i in range(len(x)):",
                  f"    {unpack}", f"    out[i] = {join}"]
    else:
        lines += ["def f(i):", f"    {unpack}", f"    return {join}", "out = torch.stack([f(i) for i in range(len(x))])"]
    counted("joined literal lists (stack([a, b]))", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_walks_of_rows_inside_walks(r):
    """``for row in X: for v in row:`` (or ``for v in X[i]``, either enumerated): the inner loop walks each row's
    first dim, the same length for every row; counted, summed, stored at ``[i, j]``, on rows of rows too."""
    n, m = r.choice([0, 1, 4]), r.choice([0, 1, 3])
    shape = r.choice([(n, m), (n, m), (n, m, 2)])
    dtype = r.choice(FLOATS + INTS)
    outer, inner = r.choice([("for row in X:", "for v in row:"), ("for i, row in enumerate(X):", "for j, v in enumerate(row):"),
                             ("for i in range(len(X)):", "for v in X[i]:"),
                             ("for i in range(X.shape[0]):", "for j, v in enumerate(X[i]):"),
                             ("for row in X:", "for j, v in enumerate(row):")])
    has_i, has_j = "i" in outer.split(" in ")[0], "j" in inner.split(" in ")[0]
    sub = "" if len(shape) == 2 else ".sum()"
    bodies = [["total = 0", f"        if v{sub} > 0:", "            total += 1"],
              ["total = 0.0" if dtype in FLOATS else "total = 0", f"        total += v{sub} * 2"],
              ["total = torch.zeros(())", f"        total = total + v{sub}.abs()"]]
    if has_i and has_j:
        bodies.append([f"out = torch.zeros({shape}, dtype={r.choice(FLOATS)})", "        out[i, j] = v * 2 - 1"])
    setup, *body = r.choice(bodies)
    lines = [seed(r), f"X = {laid_out(r, shape, dtype)}", setup, outer, f"    {inner}"] + body
    counted("walks of rows inside walks (for v in row)", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_walks_of_literal_numbers(r):
    """``for c, w in enumerate([0.299, 0.587, 0.114])`` / ``zip(x, (1, -2, 3))``: a list of numbers written in the
    header walks as ``torch.tensor([...])`` (default float, or int64); weighted sums, stores, lists."""
    k = r.choice([1, 3])
    numbers = [r.choice([0.5, -2, 3, 0.299, 1e-3, 7]) for _ in range(k)]
    if r.random() < 0.3:
        numbers = [int(abs(v)) + 1 if isinstance(v, float) else v for v in numbers]
    literal = "[" + ", ".join(map(str, numbers)) + "]" if r.random() < 0.6 else "(" + ", ".join(map(str, numbers)) + \
        ("," if k == 1 else "") + ")"
    d, dtype = r.choice([1, 4]), r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {laid_out(r, (k, d), dtype)}"]
    form = r.randrange(3)
    if form == 0:
        lines += [f"out = torch.zeros({d}, dtype={r.choice(FLOATS)})", f"for c, w in enumerate({literal}):",
                  f"    out += w * x[c]"]
    elif form == 1:
        lines += [f"out = torch.zeros({k}, {d})", f"for c, w in enumerate({literal}):", f"    out[c] = x[c] / w + w"]
    else:
        lines += ["res = []", f"for row, w in zip(x, {literal}):", f"    res.append(row * w - 1)", "out = torch.stack(res)"]
    counted("walks of literal numbers (enumerate([0.3, ...]))", program(lines), tolerance=1e-3)


@MANY
@given(st.randoms(use_true_random=False))
def test_literal_floats_with_float64_values(r):
    """A walked list of Python floats meeting float64 values computes with the exact doubles, as the loop does: to
    within float64 rounding (a float32 tensor of the list was off by ~1e-8 relative)."""
    k = r.choice([1, 3])
    numbers = [r.choice([0.2126, 0.7152, 0.0722, 0.1, 1 / 3, -2.7]) for _ in range(k)]
    literal = "[" + ", ".join(map(repr, numbers)) + "]"
    d = r.choice([1, 4])
    lines = [seed(r), f"x = {laid_out(r, (k, d), 'torch.float64')}"]
    form = r.randrange(3)
    if form == 0:
        lines += [f"out = torch.zeros({d}, dtype=torch.float64)", f"for c, w in enumerate({literal}):",
                  "    out += w * x[c]"]
    elif form == 1:
        lines += [f"out = torch.zeros({k}, {d}, dtype=torch.float64)", f"for c, w in enumerate({literal}):",
                  f"    out[c] = {r.choice(['x[c] * w', 'w * x[c] + 1', 'x[c] - w'])}"]
    else:
        lines += [f"weights = {literal}", "res = []", "for row, w in zip(x, weights):", "    res.append(row * w)",
                  "out = torch.stack(res)"]
    if r.random() < 0.5:
        lines = [lines[0]] + in_function(r, lines[1:], {})
    counted("literal floats with float64 values", program(lines), tolerance=1e-13)


@MANY
@given(st.randoms(use_true_random=False))
def test_rows_unpacked_in_the_header(r):
    """``for u, v in edges`` / ``for k, (a, b) in enumerate(E)`` / ``for (a, b), w in zip(E, W)``: each name is its
    item of the row (``E[:, 0]``...), on rows of 2 or 3 items (a row of another length makes the loop raise: the
    rewrite must raise too, or not be offered), of scalars or of vectors."""
    n, width = r.choice([0, 1, 5]), r.choice([2, 2, 3])
    names = ["a", "b", "c"][:r.choice([width, width, 2, 3])]
    shape = r.choice([(n, width), (n, width), (n, width, 2)])
    dtype = r.choice(FLOATS + INTS)
    target = ", ".join(names)
    header = r.choice([f"for {target} in E:", f"for k, ({target}) in enumerate(E):", f"for ({target}), w in zip(E, W):"])
    value = r.choice([f"{names[0]} * {names[1]} + {names[0]}", f"{names[-1]} - {names[0]}", f"({names[1]} > 0) * 1.5"])
    if "w in" in header:
        value = f"({value}) * w"
    lines = [seed(r), f"E = {laid_out(r, shape, dtype)}", f"W = {tensor(r, (n,), r.choice(FLOATS))}"]
    form = r.randrange(2)
    if form == 0:
        lines += ["res = []", header, f"    res.append({value})", "out = torch.stack(res)"]
    else:
        lines += ["out = 0.0" if len(shape) == 2 else "out = torch.zeros(2)", header, f"    out = out + {value}"]
    counted("rows unpacked in the header (for u, v in E)", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_quantiles_of_elements(r):
    """``torch.quantile(x[i], q)`` (no dim: all the element's values) is ``torch.quantile(x.flatten(1), q, dim=-1)``:
    rows and matrices, NaN, every interpolation, q a literal or a name; an int element, an empty one, a q out of
    [0, 1] or a tensor q must raise in both or get no fix."""
    n, d = r.choice([0, 1, 5]), r.choice([0, 1, 4, 4])
    shape = r.choice([(n, d), (n, d), (n, d, 2)])
    dtype = r.choice(FLOATS + FLOATS + INTS)
    q = r.choice(["0.0", "0.25", "0.5", "0.9", "1.0", "q", "1.5", "torch.tensor(0.5)"])
    options = r.choice(["", "", ", interpolation='lower'", ", interpolation='nearest'", ", interpolation='midpoint'"])
    lines = [seed(r), "q = 0.75", f"x = {laid_out(r, shape, dtype) if dtype in FLOATS else tensor(r, shape, dtype)}"]
    if r.random() < 0.3:
        lines += ["if x.numel():", "    x.view(-1)[0] = float('nan')"] if dtype in FLOATS else []
    value = f"torch.quantile(x[i], {q}{options})"
    if r.random() < 0.5:
        lines += [f"out = torch.zeros({n})", "for i in range(len(x)):", f"    out[i] = {value}"]
    else:
        lines += [f"out = torch.stack([{value} for i in range(len(x))])"]
    counted("quantiles of elements (torch.quantile(x[i], q))", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_squares_of_python_float_arithmetic(r):
    """``(p - t) ** 2`` of Python floats from float32 tensors (``.tolist()``, ``.item()``): bounded by the float32
    range, so the square is exact in float64 torch and cannot overflow; summed or listed. From float64 tensors (huge
    values too: Python raises ``OverflowError``) the bound is unknown and no fix may be offered unless it agrees."""
    n = r.choice([0, 1, 6])
    dtype = r.choice(["torch.float32", "torch.float32", "torch.float16", "torch.float64"])
    scale = r.choice(["1", "1e30", "3e38"]) if dtype == "torch.float32" else r.choice(["1", "1e200"])
    header, p, t = r.choice([("for p, t in zip(a.tolist(), b.tolist()):", "p", "t"),
                             ("for i in range(len(a)):", "a[i].item()", "b[i].item()"),
                             ("for x, y in zip(a, b):", "x.item()", "y.item()")])
    base = r.choice([f"({p} - {t})", f"({p} + {t} * 0.5)", f"({p} * {t} - 1.0)", f"(-{p})", f"({p} - 2.5)"])
    lines = [seed(r), f"a = (torch.randn({n}, dtype=torch.float64) * {scale}).to({dtype})",
             f"b = (torch.randn({n}, dtype=torch.float64) * {scale}).to({dtype})"]
    if r.random() < 0.5:
        lines += ["out = 0.0", header, f"    out += {base} ** 2"]
    else:
        lines += ["out = []", header, f"    out.append({base} ** 2)"]
    counted("squares of Python float arithmetic ((p - t) ** 2)", program(lines))


ROW_WALK_NEAR_MISSES = [
    # triangles that are recurrences (each row updated from rows already updated), or whose stop depends on the
    # outer index, or start below it
    ["A = torch.randn(4, 4)", "for i in range(4):", "    for j in range(i + 1, 4):", "        A[j] = A[j] - A[i] * 0.5"],
    ["A = torch.randn(4, 4)", "for i in range(4):", "    for j in range(i + 1, 4):",
     "        A[j, i] = A[j, i] / A[i, i]"],
    ["x = torch.randn(4)", "D = torch.zeros(4, 4)", "for i in range(4):", "    for j in range(0, i):",
     "        D[i, j] = x[i] - x[j]"],
    ["x = torch.randn(4)", "D = torch.zeros(4, 4)", "for i in range(4):", "    for j in range(i - 1, 4):",
     "        D[i, j] = x[i] - x[j]"],
    ["x = torch.randn(6)", "D = torch.zeros(6, 6)", "for i in range(4):", "    for j in range(i + 1, i + 3):",
     "        D[i, j] = x[i] - x[j]"],
    # a span with a step, a span of values that depend on the loop, over part of the rows
    ["s = torch.randint(0, 3, (4,))", "m = torch.zeros(4, 6)", "for i in range(4):", "    m[i, s[i]:s[i] + 3:2] = 1"],
    ["s = torch.randint(0, 3, (4,))", "m = torch.zeros(4, 6)", "for i in range(4):", "    m[i, s[i]:s[i] + 2] = i"],
    ["s = torch.randint(0, 3, (4,))", "m = torch.zeros(4, 6)", "for i in range(3):", "    m[i, s[i]:s[i] + 2] = 1"],
    # a row's mask read from a row already written, over part of the rows, conditional, a mask of fewer dims
    ["x = torch.randn(5, 3)", "for i in range(1, 5):", "    x[i][x[i - 1] < 0] = 0"],
    ["x = torch.randn(5, 3)", "for i in range(4):", "    x[i][x[i + 1] < 0] = 0"],
    ["x = torch.randn(5, 3)", "for i in range(1, 5):", "    x[i][x[i] < 0] = 0"],
    ["x = torch.randn(5, 3)", "for i in range(5):", "    if x[i, 0] > 0:", "        x[i][x[i] < 0] = 0"],
    ["x = torch.randn(5, 3, 2)", "for i in range(5):", "    x[i][x[i, :, 0] < 0] = 0"],
    # an int division by zero or an int to a negative power in a branch the loop skips would raise vectorized
    ["x = torch.tensor([0, 2, 3])", "out = torch.zeros(3)", "for i in range(3):", "    if x[i] != 0:",
     "        out[i] = 6 // x[i]", "    else:", "        out[i] = 0"],
    ["x = torch.tensor([0, 2, 3])", "out = torch.zeros(3)", "for i in range(3):", "    if x[i] != 0:",
     "        out[i] = x[i] ** -1", "    else:", "        out[i] = 0"],
    ["x = torch.tensor([0, 2, 3])", "out = torch.zeros(3)", "for i in range(3):", "    if x[i] != 0:",
     "        out[i] = x[i] % x[i]"],
    # lists stacked after the loop where a statement between rebinds what the loop read, or does something else
    ["X = torch.randn(3, 4)", "a = []", "b = []", "for j in range(4):", "    a.append(X[:, j].sum())",
     "    b.append(X[:, j].max())", "X = torch.stack(a)", "b = torch.stack(b)"],
    ["X = torch.randn(3, 4)", "a = []", "b = []", "for j in range(4):", "    a.append(X[:, j].sum())",
     "    b.append(X[:, j].max())", "a = torch.stack(a)", "X.add_(1)", "b = torch.stack(b)"],
    ["X = torch.randn(3, 4)", "a = []", "b = []", "for j in range(4):", "    a.append(X[:, j].sum())",
     "    b.append(X[:, j].max())", "a = torch.stack(a)", "b.append(X[0, 0])", "b = torch.stack(b)"],
    # a scatter in a nest whose index does not follow every loop (it adds once per inner iteration), or under a
    # condition
    ["idx = torch.randint(0, 3, (4,))", "c = torch.zeros(3)", "for i in range(4):", "    for j in range(5):",
     "        c[idx[i]] += 1"],
    ["d = torch.randint(0, 3, (4, 5))", "c = torch.zeros(4, 3)", "for i in range(4):", "    for j in range(5):",
     "        if j > 1:", "            c[i, d[i, j]] += 1"],
    # two writes per iteration whose order matters: different numbers or loop values into slots that may coincide,
    # an addition and a product, a read of the target between them
    ["edges = torch.randint(0, 3, (9, 2))", "A = torch.zeros(3, 3)", "for u, v in edges:", "    A[u, v] = 1",
     "    A[v, u] = 2"],
    ["edges = torch.randint(0, 3, (9, 2))", "w = torch.randn(9)", "A = torch.zeros(3, 3)",
     "for e in range(9):", "    A[edges[e, 0], edges[e, 1]] = w[e]", "    A[edges[e, 1], edges[e, 0]] = w[e]"],
    ["edges = torch.randint(0, 3, (9, 2))", "d = torch.ones(3)", "for u, v in edges:", "    d[u] += 1",
     "    d[v] *= 2"],
    ["edges = torch.randint(0, 3, (9, 2))", "d = torch.ones(3)", "s = torch.zeros(9)", "for e in range(9):",
     "    d[edges[e, 0]] += 1", "    s[e] = d[edges[e, 1]]", "    d[edges[e, 1]] += 1"],
    ["edges = torch.randint(0, 3, (9, 2))", "A = torch.zeros(3, 3)", "for u, v in edges:", "    A[u, v] = 1",
     "    A[u, v] += 1"],
    # recurrences that look like scans: clipped (CUSUM), damped (EMA), two slots back, part of the tensor, float16
    # rounding per step, int slots that truncate each float sum
    ["x = torch.randn(9)", "s = torch.zeros(9)", "for t in range(1, 9):", "    s[t] = torch.clamp(s[t - 1] + x[t], min=0)"],
    ["x = torch.randn(9)", "s = torch.zeros(9)", "for t in range(1, 9):", "    s[t] = s[t - 1] * 0.9 + x[t]"],
    ["x = torch.randn(9)", "s = torch.zeros(9)", "for t in range(2, 9):", "    s[t] = s[t - 2] + x[t]"],
    ["x = torch.randn(9)", "s = torch.zeros(9)", "for t in range(1, 5):", "    s[t] = s[t - 1] + x[t]"],
    ["x = torch.randn(9)", "s = torch.zeros(9)", "for t in range(1, 9):", "    s[t] = s[t - 1] + x[t] + s[t]"],
    ["x = torch.randn(9).half()", "s = torch.zeros(9).half()", "for t in range(1, 9):", "    s[t] = s[t - 1] + x[t]"],
    ["x = torch.rand(9)", "s = torch.zeros(9, dtype=torch.long)", "for t in range(1, 9):", "    s[t] = s[t - 1] + x[t]"],
    ["x = torch.randn(9)", "s = torch.zeros(9)", "for t in range(7, -1, -1):", "    s[t] = s[t - 1] + x[t]"],
    ["x = torch.randn(9)", "s = torch.zeros(9)", "for t in range(1, 9):", "    if x[t] > 0:",
     "        s[t] = s[t - 1] + x[t]"],
    ["x = torch.randn(9)", "s = x[1:]", "for t in range(1, 8):", "    s[t] = s[t - 1] + x[t]"],
    ["x = torch.randn(9)", "s = torch.zeros(9)", "for t in range(1, 9):", "    s[t] = max(s[t - 1], x[t])"],
    # an index that may repeat (randint), changed or kept under another name after the permutation is made, or a
    # permutation of rows: the loop keeps the last value written to a slot
    ["idx = torch.randint(0, 5, (5,))", "inv = torch.empty_like(idx)", "for i in range(5):", "    inv[idx[i]] = i"],
    ["perm = torch.randperm(5)", "perm[0] = perm[1]", "inv = torch.empty_like(perm)", "for i in range(5):",
     "    inv[perm[i]] = i"],
    ["perm = torch.randperm(5)", "alias = perm", "alias[1] = 0", "inv = torch.zeros(5, dtype=torch.long)",
     "for i in range(5):", "    inv[perm[i]] = i"],
    ["x = torch.randn(3, 4)", "perm = x.argsort()", "inv = torch.zeros(4, dtype=torch.long)", "for i in range(3):",
     "    inv[perm[i, 0]] = i"],
    ["x = torch.randn(3, 4)", "perm = x.flatten().argsort() % 4", "inv = torch.zeros(4, dtype=torch.long)",
     "for i in range(12):", "    inv[perm[i]] = i"],
    ["perm = torch.randperm(5)", "perm.add_(0)", "perm[2] = perm[3]", "for i in range(5):", "    perm[perm[i]] = i"],
    ["def g(p):", "    p[0] = p[1]", "perm = torch.randperm(5)", "g(perm)", "inv = torch.zeros(5, dtype=torch.long)",
     "for i in range(5):", "    inv[perm[i]] = i"],
    ["perm = torch.randperm(300, dtype=torch.int8)", "inv = torch.zeros(300, dtype=torch.long)",
     "for i in range(300):", "    inv[perm[i]] = i"],
    # a triangle (the inner walk's length depends on the outer index), a recurrence along the row, an outer element
    # that is not a tensor row (a Python list), a random draw per element
    ["X = torch.randn(4, 4)", "total = 0.0", "for i in range(4):", "    for v in X[i, :i]:", "        total += v"],
    ["X = torch.randn(4, 4)", "out = torch.zeros(4, 4)", "for i, row in enumerate(X):",
     "    for j, v in enumerate(row):", "        out[i, j] = out[i, j - 1] + v"],
    ["rows = [[1.0, 2.0], [3.0, 4.0]]", "total = 0.0", "for row in rows:", "    for v in row:", "        total += v"],
    ["X = torch.randn(4, 3)", "total = 0.0", "for row in X:", "    for v in row:", "        total += v * torch.rand(())"],
]


@pytest.mark.parametrize("lines", ROW_WALK_NEAR_MISSES, ids=[str(i) for i in range(len(ROW_WALK_NEAR_MISSES))])
def test_row_walk_near_miss_gets_no_fix(lines):
    refused("near miss (row walks)", program(lines))


MEMBERSHIP_NEAR_MISSES = [
    # `in` of a list or tuple compares by identity first, then `==` (a tensor's `==` as a bool raises for a row)
    ["v = torch.randint(0, 4, (6,))", "out = 0", "for i in range(6):", "    if v[i] in [1, 2]:", "        out += 1"],
    ["v = torch.randint(0, 4, (6,))", "out = 0", "for x in v:", "    if x.item() in (1, 2):", "        out += 1"],
    ["rows = [torch.randn(3) for _ in range(4)]", "x = torch.randn(5, 3)", "out = []", "for r in x:",
     "    out.append(r in rows)"],
    ["vocab = {1: 'a', 2: 'b'}", "v = torch.randint(0, 4, (6,))", "out = 0", "for i in range(6):",
     "    if v[i].item() in vocab:", "        out += 1"],
]


@pytest.mark.parametrize("lines", MEMBERSHIP_NEAR_MISSES, ids=[str(i) for i in range(len(MEMBERSHIP_NEAR_MISSES))])
def test_membership_near_miss_gets_no_fix(lines):
    refused("near miss (membership)", program(lines))


# (the layer, the shape of one sample, the sample's dtype): layers that treat each sample on their own
PER_SAMPLE_LAYERS = [
    ("nn.Linear(4, 3)", (4,), "torch.float32"), ("nn.Linear(4, 3, bias=False)", (2, 4), "torch.float64"),
    ("nn.LayerNorm(4)", (4,), "torch.float32"), ("nn.LayerNorm([2, 4])", (2, 4), "torch.float32"),
    ("nn.GELU()", (4,), "torch.float32"), ("nn.Tanh()", (3, 2), "torch.float64"), ("nn.SiLU()", (4,), "torch.float32"),
    ("nn.LeakyReLU(0.2)", (4,), "torch.float32"), ("nn.Identity()", (4,), "torch.float32"),
    ("nn.Conv1d(2, 3, 3, padding=1)", (2, 5), "torch.float32"), ("nn.Conv2d(2, 3, 3)", (2, 5, 5), "torch.float32"),
    ("nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))", (4,), "torch.float32"),
    ("nn.Embedding(10, 3)", "ids", None), ("nn.Embedding(10, 3, padding_idx=0)", "ids", None),
]


@MANY
@given(st.randoms(use_true_random=False))
def test_per_sample_layers(r):
    """``out[i] = layer(x[i])``, its append-and-stack and comprehension forms: one call on the whole batch."""
    layer, shape, dtype = r.choice(PER_SAMPLE_LAYERS)
    n = r.choice([1, 3, 6])
    data = f"torch.randint(0, 10, ({n}, 2))" if shape == "ids" else tensor(r, (n, *shape), dtype)
    dtype_line = [f"layer = layer.to({dtype})"] if dtype == "torch.float64" else []
    form = r.randrange(3)
    if form == 0:
        lines = ["out = torch.stack([layer(x[i]) for i in range(len(x))])"]
    elif form == 1:
        lines = ["res = []", "for row in x:", "    res.append(layer(row))", "out = torch.stack(res)"]
    else:
        lines = ["out = torch.zeros(len(x), *layer(x[0]).shape)", "for i in range(len(x)):", "    out[i] = layer(x[i])"]
    code = ["import torch.nn as nn", seed(r), f"layer = {layer}", *dtype_line, f"x = {data}", *lines]
    counted("per-sample layers (layer(x[i]))", program(code), tolerance=1e-5)


@MANY
@given(st.randoms(use_true_random=False))
def test_grid_reductions_of_two_walks(r):
    """``out[i, j] = F.cosine_similarity(a[i], b[j], dim=0)``: a reduction of several tensors broadcasts them first,
    so the rows of ``a`` (placed ``a[:, None]``) and of ``b`` make the grid, the dim past both loop dims."""
    n, m, d = r.choice([0, 1, 4]), r.choice([1, 3]), r.choice([1, 5])
    dtype = r.choice(FLOATS)
    value = r.choice(["F.cosine_similarity(a[i], b[j], dim=0)", "F.cosine_similarity(a[i], b[j], dim=-1)",
                      "F.cosine_similarity(b[j], a[i], dim=0) * 2", "F.pairwise_distance(a[i], b[j])",
                      "torch.cosine_similarity(a[i], b[j], dim=0, eps=1e-6)"])
    lines = [seed(r), "import torch.nn.functional as F", f"a = {laid_out(r, (n, d), dtype)}",
             f"b = {tensor(r, (m, d), dtype)}", f"out = torch.zeros({n}, {m})", f"for i in range({n}):",
             f"    for j in range({m}):", f"        out[i, j] = {value}"]
    counted("grid reductions of two walks", program(lines), tolerance=1e-4)


BATCH_OF_ONE = [
    "F.interpolate({b}, size=(4, 6), mode='bilinear', align_corners=False)", "F.interpolate({b}, scale_factor=2)",
    "F.max_pool2d({b}, 2)", "F.avg_pool2d({b}, kernel_size=3, stride=1, padding=1)", "F.adaptive_avg_pool2d({b}, 1)",
    "F.pad({b}, (1, 2, 0, 1))", "F.conv2d({b}, w, padding=1)", "F.layer_norm({b}, (5, 5))", "conv({b})",
    "F.pixel_shuffle(F.pad({b}, (0, 1, 0, 1))[:, :2].repeat(1, 2, 1, 1), 2)",
]


@MANY
@given(st.randoms(use_true_random=False))
def test_batches_of_one(r):
    """``F.interpolate(img[None], ...)[0]`` of each image: the op treats the samples of a batch apart, so it is the
    op on the whole batch (``F.interpolate(x, ...)``)."""
    n = r.choice([1, 3])
    dtype = r.choice(["torch.float32", "torch.float64"])
    made = r.choice(["img[None]", "img.unsqueeze(0)", "img[None, ...]"])
    op = r.choice(BATCH_OF_ONE).format(b=made)
    out_of = r.choice(["[0]", ".squeeze(0)"])
    lines = [seed(r), "import torch.nn as nn", "import torch.nn.functional as F", f"x = {laid_out(r, (n, 2, 5, 5), dtype)}",
             f"w = torch.randn(3, 2, 3, 3, dtype={dtype})", "conv = nn.Conv2d(2, 3, 3).to(x.dtype)"]
    if r.random() < 0.5:
        lines += [f"out = torch.stack([{op}{out_of} for img in x])"]
    else:
        lines += ["res = []", "for i in range(len(x)):", "    img = x[i]", f"    res.append({op}{out_of})",
                  "out = torch.stack(res)"]
    counted("batches of one (op(img[None])[0])", program(lines), tolerance=1e-4)


@MANY
@given(st.randoms(use_true_random=False))
def test_conditions_of_some_loops(r):
    """``if j > i: m[h, i, j] = -inf`` in three nested loops: a condition of some loops only, one number stored:
    the mask broadcasts over the other loops' dims (``masked_fill_``), as it lines up from the right."""
    a, b, c = r.choice([1, 2, 3]), r.choice([1, 4]), r.choice([1, 4, 5])
    cond = r.choice(["j > i", "j <= i", "i == j", "j < 2", "i + j > 3", "h > 0", "h == i", "h + j < 4"])
    value = r.choice(["float('-inf')", "0.0", "1", "-2.5"])
    dtype = r.choice(FLOATS)
    lines = [seed(r), f"attn = {laid_out(r, (a, b, c), dtype)}", r.choice(["m = attn.clone()", "m = attn"]),
             f"for h in range({a}):", f"    for i in range({b}):", f"        for j in range({c}):",
             f"            if {cond}:", f"                m[h, i, j] = {value}"]
    counted("conditions of some loops (masked_fill_)", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_rows_of_indices(r):
    """``mask[i, scores[i].topk(k).indices] = True``: one number into the slots a row of indices picks, in each row
    (negative indices wrap, repeated ones get the same number)."""
    n, m = r.choice([0, 1, 4]), r.choice([3, 5])
    index = r.choice(["scores[i].topk(2).indices", "scores[i].argsort()[:2]", "idx[i]", "idx[i, :1]",
                      "torch.argsort(scores[i], descending=True)[:3]"])
    value = r.choice(["True", "1", "-1.5", "0"]) 
    dtype = r.choice(["torch.bool", "torch.float32", "torch.int64"]) if value in ("True", "1", "0") else "torch.float32"
    lines = [seed(r), f"scores = {tensor(r, (n, m), 'torch.float32')}",
             f"idx = torch.randint(-{m}, {m}, ({n}, 3))",
             r.choice([f"mask = torch.zeros({n}, {m}, dtype={dtype})", f"mask = torch.zeros_like(scores, dtype={dtype})"]),
             "for i in range(scores.shape[0]):", f"    mask[i, {index}] = {value}"]
    counted("rows of indices (mask[i, idx[i]] = c)", program(lines))


def _with_params(r: random.Random, lines: list, params: dict) -> list:
    """The inputs at module level, or passed to a function holding the loop."""
    if r.random() < 0.5:
        return [f"{name} = {value}" for name, value in params.items()] + lines
    return [f"{name}_arg = {value}" for name, value in params.items()] + [f"def f({', '.join(params)}):"] + \
        ["    " + line for line in lines] + ["    return out", f"result = f({', '.join(n + '_arg' for n in params)})"]


@MANY
@given(st.randoms(use_true_random=False))
def test_grid_dots_and_column_scalars(r):
    """``C[i, j] = (u(i) * v(j)).sum()`` of computed vectors (one matrix product of the two batched sides, a column
    walk in the data's own order: ``(X - mu).T @ (X - mu)``), and column walks with per-column numbers
    (``(X[:, j] - mu[j]) * s[j]`` is ``(X - mu) * s`` in X's order). Near-misses: sides of different lengths or
    dtypes, int data, a side that follows both loops."""
    n, k, m = r.choice([0, 1, 4]), r.choice([1, 3]), r.choice([1, 2])
    dtype, other = r.choice(FLOATS), r.choice(FLOATS + INTS)
    lines = [seed(r), f"X = {laid_out(r, (n, k), dtype)}", f"Y = {laid_out(r, (n, m), r.choice([dtype, other]))}",
             f"A = {laid_out(r, (k, n), dtype)}", f"B = {tensor(r, (m, r.choice([n, n, 1])), dtype)}",
             f"mu = {tensor(r, (k,), dtype)}", f"nu = {tensor(r, (m,), r.choice([dtype, other]))}",
             f"s = {tensor(r, (k,), r.choice([dtype, other]))}", f"w = {tensor(r, (n,), dtype)}"]
    form = r.randrange(6)
    if form == 0:
        lines += [f"C = torch.zeros({k}, {k}, dtype={dtype})", f"for i in range({k}):", f"    for j in range({k}):",
                  f"        C[i, j] = ((X[:, i] - mu[i]) * (X[:, j] - mu[j])).sum(){r.choice(['', ' / 2'])}"]
    elif form == 1:
        lines += [f"C = torch.zeros({k}, {m})", f"for i in range({k}):", f"    for j in range({m}):",
                  f"        C[i, j] = {r.choice(['(X[:, i] * Y[:, j]).sum()', '((X[:, i] + 1) * (Y[:, j] - nu[j])).sum()', '(Y[:, j] * X[:, i] * 2).sum()'])}"]
    elif form == 2:
        lines += [f"C = torch.empty({k}, {m}, dtype={dtype})", f"for i in range({k}):", f"    for j in range({m}):",
                  f"        C[i, j] = {r.choice(['(A[i] * B[j]).sum()', '((A[i] - 1) * B[j].exp()).sum()', '(A[i] * w * B[j]).sum()'])}"]
    elif form == 3:
        lines += [f"C = torch.zeros({k}, {k})", f"for i in range({k}):", f"    for j in range({k}):",
                  "        C[i, j] = (X[:, i] * X[:, j] * (i + j)).sum()"]
    elif form == 4:
        lines += ["Z = torch.empty_like(X)", f"for j in range({k}):",
                  f"    Z[:, j] = {r.choice(['(X[:, j] - mu[j]) * s[j]', 'X[:, j] / (s[j] + 10)', 'mu[j] - X[:, j]', 'X[:, j] * s[j] + mu[j]'])}"]
    else:
        lines += [f"Z = torch.zeros({n}, {k})", f"for j in range({k}):", "    Z[:, j] = (X[:, j] - mu[j]).abs() + w"]
    counted("grid dots, column scalars", program(lines), tolerance=1e-3 * max(1, n))


@MANY
@given(st.randoms(use_true_random=False))
def test_per_sample_cross_entropy(r):
    """``F.cross_entropy(logits[i], y[i])`` and the batch-of-one form ``logits[i:i + 1]``: ``reduction="none"`` for
    classes known >= 0; classes that may be -100 (``ignore_index``: NaN in the loop, 0 batched) or negative get none."""
    n, c = r.choice([0, 1, 5]), r.choice([1, 3])
    dtype = r.choice(FLOATS)
    lines = [seed(r), "import torch.nn.functional as F", f"logits = {laid_out(r, (n, c), dtype)}",
             r.choice([f"y = torch.randint(0, {c + (1 if r.random() < 0.1 else 0)}, ({n},))",
                       f"y = torch.randn({n}, {c}).argmax(dim=1)", f"y = torch.randint(-1, {c}, ({n},))"])]
    lines += un_nonnegative(r, "y", n) if r.random() < 0.5 else (["y[:1] = -100"] if r.random() < 0.3 else [])
    one = r.choice(["F.cross_entropy(logits[i], y[i])", "F.cross_entropy(logits[i:i + 1], y[i:i + 1])"])
    if r.random() < 0.5:
        lines += [f"losses = torch.empty({n}, dtype={dtype})", f"for i in range({n}):", f"    losses[i] = {one}"]
    else:
        lines += [f"losses = [{one} for i in range(len(y))]", "loss = torch.stack(losses).mean()" if n else ""]
    counted("per-sample cross entropy", program(lines), tolerance=1e-4)


SOFTMAX_BODIES = [
    ["r = x[i]", "e = torch.exp(r - r.max())", "out[i] = e / e.sum()"],
    ["r = x[i]", "shifted = r - r.max()", "e = torch.exp(shifted)", "out[i] = e / e.sum()"],
    ["e = (x[i] - x[i].max()).exp()", "out[i] = e / torch.sum(e)"],
    ["out[i] = torch.exp(x[i] - torch.max(x[i])) / torch.exp(x[i] - torch.max(x[i])).sum()"],
    ["r = x[i]", "e = torch.exp(r - r.amax())", "out[i] = e / e.sum()"],
    # near-misses of the idiom (rewritten another way, or not at all): no shift, another row's max, a rebound name
    ["e = x[i].exp()", "out[i] = e / e.sum()"],
    ["r = x[i]", "e = torch.exp(r - y[i].max())", "out[i] = e / e.sum()"],
    ["r = x[i]", "e = torch.exp(r - r.max())", "r = r * 2", "out[i] = e / e.sum()"],
    ["r = x[i]", "e = torch.exp(r - r.max())", "out[i] = e / (e.sum() + 1)"],
]


@MANY
@given(st.randoms(use_true_random=False))
def test_hand_written_softmax(r):
    """``e = exp(r - r.max()); e / e.sum()`` per row is ``torch.softmax(x, dim=-1)``: rows of any length (none: the
    loop's ``max()`` raises), NaN and inf, float32/64 and other layouts; near-misses of the idiom stay what they were."""
    n, c = r.choice([0, 1, 5]), r.choice([0, 1, 4])
    dtype = r.choice(FLOATS)
    lines = [seed(r), f"x = {laid_out(r, (n, c), dtype)}", f"y = {tensor(r, (n, c), dtype)}"]
    if r.random() < 0.3 and n and c:
        special = r.choice(["float('nan')", "float('inf')", "float('-inf')"])
        lines.append(f"x[{r.randrange(n)}, {r.randrange(c)}] = {special}")
    lines += [f"out = torch.empty({n}, {c}, dtype={dtype})", f"for i in range({n}):"]
    lines += ["    " + line for line in r.choice(SOFTMAX_BODIES)]
    counted("hand-written softmax", program(lines), tolerance=1e-4)


# -- contractions, .item(), scans --------------------------------------------------------------------------------------
@MANY
@given(st.randoms(use_true_random=False))
def test_contractions(r):
    n, k, m = r.choice([0, 1, 3]), r.choice([1, 4]), r.choice([1, 2])
    dtype = r.choice(FLOATS)
    lines = [seed(r), f"A = {laid_out(r, (n, k), dtype)}", f"B = {laid_out(r, (k, m), dtype)}",
             f"X = {tensor(r, (n, k), dtype)}", f"u = {tensor(r, (k,), dtype)}", f"v = {tensor(r, (k,), dtype)}"]
    form = r.randrange(7)
    if form == 0:
        lines += [f"C = torch.zeros({n}, {m}, dtype={dtype})", f"for i in range({n}):", f"    for j in range({m}):",
                  f"        for p in range({k}):", "            C[i, j] += A[i, p] * B[p, j]"]
    elif form == 1:
        lines += [f"K = torch.empty({n}, {n}, dtype={dtype})", f"for i in range({n}):", f"    for j in range({n}):",
                  "        K[i, j] = " + r.choice(['torch.dot(X[i], X[j])', '((X[i] - X[j]) ** 2).sum()',
                                               'X[i] @ X[j]'])]
    elif form == 2:
        lines += ["s = 0.0", f"for i in range({k}):", "    s += u[i] * v[i]"] if k else ["s = 0.0"]
    elif form == 3:
        init = r.choice(["0", "0.0", "torch.tensor(0.0)", f"torch.zeros((), dtype={dtype})"])
        lines += [f"s = {init}", "for a, b in zip(u, v):", f"    s = {r.choice(['s + a * b', 'a * b + s', 's - a * b'])}"]
    elif form == 4:
        lines += [f"y = torch.empty({n}, {m}, dtype={dtype})", f"for i in range({n}):", "    y[i] = A[i] @ B"]
    elif form == 6:  # outer products: summed (a covariance), or one per row
        if r.random() < 0.5:
            lines += [f"C = torch.zeros({k}, {k}, dtype={dtype})", "for x in X:",
                      f"    C += {r.choice(['torch.outer(x, x)', 'torch.outer(x, u)', 'torch.outer(u, x) * 2'])}"]
        else:
            lines += [f"O = torch.empty({n}, {k}, {k}, dtype={dtype})", f"for i in range({n}):",
                      f"    O[i] = {r.choice(['torch.outer(X[i], u)', 'torch.outer(u, X[i])', 'torch.outer(X[i], X[i])'])}"]
    else:  # a matrix and a vector per row, either side (batched matrix-vector products)
        lines += [f"M = {laid_out(r, (n, m, k), dtype)}", f"W = {laid_out(r, (n, k, m), dtype)}"]
        value, size = r.choice([("M[i] @ X[i]", m), ("X[i] @ W[i]", m), ("torch.matmul(M[i], X[i])", m),
                                ("torch.mv(M[i], X[i])", m), ("M[i] @ u", m), ("(X[i] @ W[i]).relu()", m)])
        if r.random() < 0.5:
            lines += [f"y = torch.empty({n}, {size}, dtype={dtype})", f"for i in range({n}):", f"    y[i] = {value}"]
        else:
            lines += [f"y = torch.stack([{value} for i in range({n})])"] if n else []
    counted("contractions", program(lines), tolerance=1e-3 * max(1, k))


COMPUTED_ONCE = [
    ("cov = (X - mu).T @ (X - mu) / (X.shape[0] - 1)", ["diff = X - mu", "cov = diff.T @ diff / (X.shape[0] - 1)"]),
    ("p = torch.where((x > 0)[:, None], h, 0).sum(1) / (x > 0).sum(1)",
     ["mask = x > 0", "p = torch.where(mask[:, None], h, 0).sum(1) / mask.sum(1)"]),
    # the statement's outermost in-place call runs after all its arguments
    ("t.index_add_(0, torch.where(i < 0, i + 3, i), v[torch.where(i < 0, i + 3, i)])",
     ["chosen = torch.where(i < 0, i + 3, i)", "t.index_add_(0, chosen, v[chosen])"]),
    # not once: an in-place call between the two, a branch, random draws, the program's own code, sizes
    ("y = x.add_(x.exp()).mul_(x.exp())", None),
    ("y = x.exp() if c else x.exp() + 1", None),
    ("y = torch.randn_like(x) + torch.randn_like(x)", None),
    ("y = f(x) + f(x)", None),
    ("y = x[:n - 1] + z[:n - 1]", None),
    ("y = x[:x.shape[0] - 1] * x[:x.shape[0] - 1]", None),
    ("y = torch.arange(n) * torch.arange(n)", None),
]


@pytest.mark.parametrize("line, once", COMPUTED_ONCE, ids=[str(i) for i in range(len(COMPUTED_ONCE))])
def test_computed_once(line, once):
    """A piece a rewrite writes twice is bound once where computing it once is the same (``shared``)."""
    from torchwise.vectorize.shared import computed_once

    tensors = {"X", "mu", "x", "h", "i", "t", "v", "z", "c"}
    assert computed_once([line], "torch", lambda wanted: wanted, tensors.__contains__) == (once or [line])


@MANY
@given(st.randoms(use_true_random=False))
def test_python_numbers(r):
    n = r.choice([0, 1, 7])
    dtype = r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {tensor(r, (n,), dtype)}", f"y = {tensor(r, (n,), dtype)}",
             f"logits = {tensor(r, (n, 3), r.choice(FLOATS))}"]
    if dtype in FLOATS and n and r.random() < 0.4:
        lines.append(f"x[{r.randrange(n)}] = float('nan')")  # max(0.0, nan) is 0.0 in Python
    if dtype in FLOATS and n and r.random() < 0.3:
        lines.append(f"x[{r.randrange(n)}] = float('{r.choice(['inf', '-inf'])}')")  # kept by clamp's NaN fix
    form = r.randrange(7)
    if form == 0:
        lines += ["total = 0.0", "for v in x:", "    total += v.item()"]
    elif form == 1:
        lines += ["hits = 0", "for i in range(len(x)):", "    if x[i].item() == y[i].item():", "        hits += 1"]
    elif form == 2:
        lines += ["preds = [row.argmax().item() for row in logits]"]
    elif form == 3:
        lines += ["vals = [v.item() for v in x]"]
    elif form == 4:
        value = r.choice(['1 if v > 0 else 0', 'v.item()', 'max(0.0, v)', 'v * 2', 'min(v, 0.5)',
                          'v if v < 1 else 1.0', 'max(v, 0.0)', 'min(0.5, v)', 'v if v >= 0.0 else 0.0',
                          '0.0 if v < 0.0 else v', '-1.5 if -1.5 > v else v', 'max(-1, v)', 'min(v, 2)'])
        lines += [f"out = torch.tensor([{value} "
                  f"for v in x{'.tolist()' if r.random() < 0.5 else ''}])"]
    elif form == 6:
        # a squared error of numbers: exact for float32 (no overflow); float64 may overflow in Python, ints are exact
        value = r.choice(["(x[i] - y[i]).item() ** 2", "x[i].item() ** 2", "(x[i] - y[i]).item() ** 3",
                          "abs(x[i].item()) ** 2"])
        lines += ["sse = 0.0", "for i in range(len(x)):", f"    sse += {value}"]
    else:
        # a clamp written as a choice, per tensor element: `clamp` where NaN is kept, and a NaN fix where it is not
        bound = r.choice(["0", "2", "-1"] + (["0.0", "0.5", "-1.5"] if dtype in FLOATS else []))
        value = r.choice([f"max({bound}, x[i])", f"max(x[i], {bound})", f"min({bound}, x[i])", f"min(x[i], {bound})",
                          f"x[i] if x[i] > {bound} else {bound}", f"{bound} if x[i] > {bound} else x[i]",
                          f"x[i] if {bound} >= x[i] else {bound}", f"x[i] if x[i] < {bound} else y[i]"])
        lines += [f"out = torch.zeros({n}, dtype={dtype})", f"for i in range({n}):", f"    out[i] = {value}"]
    counted(".item() values and lists of numbers", program(lines), tolerance=1e-5 * max(1, n))


@MANY
@given(st.randoms(use_true_random=False))
def test_scans(r):
    n = r.choice([0, 1, 2, 9])
    dtype = r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {tensor(r, (n,), dtype)}"]
    form = r.randrange(4)
    if form == 0:
        start = r.choice(["0", "0.0", "1.5"])
        lines += [f"running = {start}", "cums = torch.empty(len(x))", "for i in range(len(x)):",
                  "    running += x[i]", "    cums[i] = running"]
    elif form == 1:
        lines += ["h = (x.float() / 10).clamp(-0.5, 0.5)", "alive = 1.0", "surv = torch.empty_like(h)",
                  "for t in range(len(h)):", "    alive = alive * (1 - h[t])", "    surv[t] = alive"]
    elif form == 2:
        lines += ["for i in range(1, len(x)):", f"    x[i] {r.choice(['+=', '*='])} x[i - 1]"]
    else:
        lines += ["acc = 0", "seen = torch.zeros(len(x))", "for i, v in enumerate(x):", "    acc = acc + v",
                  "    seen[i] = acc * 2"]
    counted("scans", program(lines), tolerance=1e-4 * max(1, n))


STORE_SCANS = ["{o}[i - 1] + x[i]", "x[i] + {o}[i - 1]", "{o}[i - 1] * x[i]", "torch.maximum({o}[i - 1], x[i])",
               "torch.minimum(x[i], {o}[i - 1])", "torch.max({o}[i - 1], x[i])", "torch.min(x[i], {o}[i - 1])",
               "{o}[i - 1] + x[i] * 2", "{o}[i - 1] + (x[i] - x[i].mean())"]


@MANY
@given(st.randoms(use_true_random=False))
def test_store_scans(r):
    """``out[i] = out[i - 1] + x[i]`` (``*``, ``torch.maximum``/``minimum``, ``torch.max``/``min`` of two) over
    ``range(1, N)``, and backwards ``out[t] = out[t + 1] + x[t]`` over ``range(N - 2, -1, -1)`` / ``reversed(range(N -
    1))``: the scan of the first (last) slot then the values; 1-d and rows, NaN, ints (which wrap alike), empty."""
    n, d = r.choice([0, 1, 2, 9]), r.choice([0, 3])
    dtype = r.choice(FLOATS + INTS)
    shape = (n, d) if d else (n,)
    lines = [seed(r), f"x = {laid_out(r, shape, dtype)}"]
    if dtype in FLOATS and n > 3 and r.random() < 0.3:
        lines.append("x[3] = float('nan')")
    lines.append(r.choice(["out = x.clone()", "out = torch.zeros_like(x)", "out = torch.empty_like(x)",
                           f"out = torch.ones({', '.join(map(str, shape))}, dtype={r.choice(FLOATS + INTS)})"]))
    forward = r.random() < 0.6
    first = "0" if forward else "len(x) - 1"
    if (r.random() < 0.8 or "empty" in lines[-1]) and n:  # (an unset empty slot is garbage, different per run)
        lines.append(f"out[{first}] = x[{first}]")
    if forward:
        header = r.choice(["for i in range(1, len(x)):", f"for i in range(1, {n}):", "for i in range(1, x.shape[0]):"])
        body = r.choice(STORE_SCANS).format(o="out")
    else:
        header = r.choice(["for i in range(len(x) - 2, -1, -1):", "for i in reversed(range(len(x) - 1)):",
                           f"for i in range({n - 2}, -1, -1):"])
        body = r.choice(STORE_SCANS).format(o="out").replace("[i - 1]", "[i + 1]")
    if "mean" in body and (dtype in INTS or not d):
        body = body.replace(" + (x[i] - x[i].mean())", " + x[i]")
    lines += [header, f"    out[i] = {body}"]
    if r.random() < 0.5:
        lines = [lines[0]] + in_function(r, lines[1:], {})
    counted("store scans", program(lines), tolerance=1e-4 * max(1, n))


# -- vmap and comprehensions -------------------------------------------------------------------------------------------
FUNCTION_BODIES = [
    ["return torch.sin(x) * x + x ** 2"], ["y = x - x.mean()", "return y / (y.norm() + 1e-6)"],
    ["return (x * x).sum()"], ["return torch.softmax(x, dim=0)"], ["return x.abs().max() - x.min()"],
    ["return x.flip(0)"], ["return x"], ["return x[0] * 2"],
]


@MANY
@given(st.randoms(use_true_random=False))
def test_vmap_functions(r):
    n, d = r.choice([0, 1, 5]), r.choice([1, 4])
    body = r.choice(FUNCTION_BODIES)
    two = r.random() < 0.3
    scaled = "return z * " if two else "return "
    lines = [seed(r), f"def f(x{', z' if two else ''}):"]
    lines += ["    " + (line.replace("return ", scaled) if line.startswith("return") else line) for line in body]
    lines += [f"items = [{tensor(r, (d,), r.choice(FLOATS))} for _ in range({n})]",
              f"X = {laid_out(r, (n, d), r.choice(FLOATS))}", f"Z = {tensor(r, (n,), r.choice(FLOATS))}"]
    form = r.randrange(3)
    if form == 0 and not two:
        lines.append("out = torch.stack([f(x) for x in items])")
    elif form == 1:
        lines.append(f"out = torch.stack([f(X[i]{', Z[i]' if two else ''}) for i in range(len(X))])")
    else:
        lines += ["res = []", "for i in range(len(X)):", f"    res.append(f(X[i]{', Z[i]' if two else ''}))",
                  "out = torch.stack(res)"]
    counted("vmap of a function of the file", program(lines), tolerance=1e-4)


@MANY
@given(st.randoms(use_true_random=False))
def test_comprehension_consumers(r):
    n, d = r.choice([0, 1, 4]), r.choice([1, 3])
    dtype = r.choice(FLOATS)
    lines = [seed(r), f"x = {laid_out(r, (n, d), dtype)}", f"y = {tensor(r, (n, d), dtype)}",
             f"u = {tensor(r, (n,), dtype)}", f"v = {tensor(r, (n,), dtype)}",
             f"chunks = [{tensor(r, (2, d), dtype)} for _ in range({max(n, 1)})]"]
    form = r.randrange(9)
    if form == 0:
        lines.append(f"out = torch.cat([row * 2 for row in x]{r.choice(['', ', 0', ', dim=0'])})")
    elif form == 1:
        lines.append(f"out = sum({r.choice(['a * b', 'a + 1', 'a'])} for a, b in zip(u, v))")
    elif form == 2:
        lines.append("out = sum(1 for a, b in zip(u, v) if a > b)")
    elif form == 3:
        lines.append(f"out = {r.choice(['all', 'any'])}(a > 0 for a in u)")
    elif form == 4:
        lines += ["z = x + 1e-9", "out = all(torch.allclose(x[i], z[i]) for i in range(len(x)))"]
    elif form == 5:
        lines.append(f"out = torch.stack(list(map({r.choice(['torch.abs', 'torch.exp', 'torch.sigmoid'])}, u)))"
                     if n else "out = u.abs()")
    elif form == 6:
        # an outer product (`torch.outer`), and near it forms that are not one
        lines += [f"w = {laid_out(r, (r.choice([1, 3]),), r.choice(FLOATS))}",
                  f"out = torch.tensor([[{r.choice(['u[i] * w[j]', 'w[j] * u[i]', 'u[i] * w[j] + 1', 'u[i] * u[j]'])}"
                  f" for j in range(len({r.choice(['w', 'u'])}))] for i in range(len(u))])"]
    elif form == 7:
        lines.append(f"out = torch.cat([c for c in chunks], dim={r.choice([0, 1])})")
    else:
        # the list named, then joined into the same name (read once there), and read again after
        element = r.choice(["x[i].mean()", "x[:, j].sum()", "x[i] * 2", "torch.dot(x[i], y[i])"])
        walk = "j in range(x.shape[1])" if "j]" in element else "i in range(len(x))"
        join = r.choice(["torch.stack(out)", "torch.stack(out, dim=0)", "torch.stack(out) + len(out)",
                         "torch.stack(out) * 2"])
        lines += [f"out = [{element} for {walk}]"] + r.choice([[], ["out.append(out[0])"], ["k = len(out)"]]) + \
            [f"out = {join}", "total = out.sum()"]
    counted("comprehension consumers", program(lines), tolerance=1e-4 * max(1, n))


CAT_PIECES = ["x ** {i}", "x * {i}", "x + {i}", "(x - {i}) * 2", "-x / ({i} + 1)", "x // ({i} + 1)",
              "x % ({i} + 2)", "w * x ** {i}", "x * {i} + w", "{i} - x"]


@MANY
@given(st.randoms(use_true_random=False))
def test_cat_of_size_one_pieces(r):
    """``torch.cat([f(x, i) for i in range(...)], dim)`` of pieces of size 1 along ``dim``: the index placed at
    ``dim`` (``x ** torch.arange(1, K + 1)``), on row-major and other layouts, ints and floats; pieces that are
    not size 1 there, or not element-wise, take the stacked form."""
    n, k = r.choice([0, 1, 5]), r.choice([1, 3, 4])
    dtype = r.choice(FLOATS + INTS)
    shape = r.choice([(n, 1), (n, 1, 2), (2, n, 1), (1, n)])
    dim = r.choice([i for i, size in enumerate(shape) if size == 1] + [len(shape) - 1, -1])
    column = tensor(r, shape, dtype) if len(shape) != 2 or r.random() < 0.5 else \
        r.choice([f"{tensor(r, (shape[1], shape[0]), dtype)}.T", f"{tensor(r, (shape[0], 3), dtype)}[:, :1]"
                  if shape[1] == 1 else tensor(r, shape, dtype)])
    piece = r.choice(CAT_PIECES).format(i=r.choice(["i", "i", "(i + 1)"]))
    head = r.choice([f"range({k})", f"range(1, {k} + 1)", f"range({k} - 1, -1, -1)", f"range(0, {2 * k}, 2)",
                     f"range(-2, {k})"])
    lines = [seed(r), f"x = {column}", f"w = {tensor(r, (), dtype)}",
             f"out = torch.cat([{piece} for i in {head}], {dim})"]
    counted("cat of size-1 pieces", program(lines), tolerance=1e-4)


@MANY
@given(st.randoms(use_true_random=False))
def test_search_loops(r):
    n = r.choice([0, 1, 5, 12])
    dtype = r.choice(FLOATS + INTS)
    lines = [seed(r), f"x = {tensor(r, (n,), dtype)}", f"y = {tensor(r, (n,), dtype)}",
             f"X = {tensor(r, (n, 3), dtype)}", f"t0 = {tensor(r, (), dtype)}"]
    if dtype in FLOATS and n and r.random() < 0.3:
        lines.append(f"x[{r.randrange(n)}] = float('nan')")
    test = r.choice(["x[i] > {t}", "x[i].abs() >= {t}", "(x[i] > {t}) & (y[i] < 0)", "x[i] * y[i] > {t}",
                     "x[i] == {t}", "X[i].sum() > {t}", "X[i].max() > {t}", "x[i + 1] > {t}", "v > {t}"])
    test = test.format(t=r.choice(["0.5", "1", "t0", "0"]))
    start, step = r.choice([(0, 1), (0, 1), (1, 1), (2, 1), (0, 2)])
    walk = f"range({start}, len(x){f', {step}' if step != 1 else ''})"
    head = "for i, v in enumerate(x):" if test.startswith("v ") else f"for i in {walk}:"
    hit, default = r.choice([("i", "-1"), ("i", "None"), ("True", "False"), ("False", "True"), ("x[i]", "None")])
    if hit == "x[i]" and test.startswith("v "):
        hit = "v"
    if r.random() < 0.5:
        lines += ["def search(x, y, X, t0):", f"    {head}", f"        if {test}:", f"            return {hit}",
                  f"    return {default}", "result = search(x, y, X, t0)"]
    else:
        lines += [f"k = {default}", head, f"    if {test}:", f"        k = {hit}", "        break"]
    counted("search loops (first hit, any)", program(lines))


# -- near-misses: no fix, ever -----------------------------------------------------------------------------------------
NEAR_MISSES = [
    # the no-dim median of an empty row is NaN, the dim form raises; along an expanded dim torch's median(dim)
    # returns garbage
    ["x = torch.randn(4, 0)", "med = torch.zeros(4)", "for i in range(4):", "    med[i] = x[i].median()"],
    ["x = torch.randn(6, 1).expand(6, 5)", "med = torch.zeros(6)", "for i in range(6):", "    med[i] = x[i].median()"],
    ["x = torch.randn(6, 1).expand(6, 5)", "med = torch.zeros(6)", "for i in range(6):",
     "    med[i] = x[i].median(dim=0).values"],
    ["x = torch.randn(6, 1).expand(6, 5)", "med = torch.zeros(6)", "for i in range(6):",
     "    med[i] = torch.nanmedian(x[i], 0)[0]"],
    # trace raises on bool matrices, the diagonal's sum would not; and it is only defined for matrices
    ["M = torch.rand(4, 3, 3) > 0.5", "tr = torch.zeros(4)", "for k in range(4):", "    tr[k] = torch.trace(M[k])"],
    ["M = torch.randn(4, 2, 3, 3)", "tr = torch.zeros(4)", "for k in range(4):", "    tr[k] = torch.trace(M[k])"],
    ["M = torch.randn(4, 3)", "tr = torch.zeros(4)", "for k in range(4):", "    tr[k] = M[k].trace()"],
    # a recurrence through the output or the input
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(1, 6):", "    out[i] = out[i - 1] * 0.5 + x[i]"],
    ["x = torch.randn(6)", "for i in range(1, 6):", "    x[i] = x[i] - 0.5 * x[i - 1]"],
    ["u = torch.rand(8)", "for i in range(1, 7):", "    u[i] = 0.5 * (u[i - 1] + u[i + 1])"],
    ["x = torch.randn(6)", "env = x.clone()", "for i in range(1, 6):",
     "    env[i] = torch.maximum(env[i], env[i - 1] * 0.9)"],
    ["r = torch.rand(5)", "ret = torch.empty(5)", "R = 0.0", "for t in reversed(range(5)):", "    R = r[t] + 0.9 * R",
     "    ret[t] = R"],
    # an index past the end (the loop raises, a slice would clamp) or below zero (the loop wraps)
    ["x = torch.randn(6)", "d = torch.zeros(6)", "for i in range(6):", "    d[i] = x[i + 1] - x[i]"],
    ["x = torch.randn(6)", "d = torch.zeros(6)", "for i in range(6):", "    d[i] = x[i] - x[i - 1]"],
    ["x = torch.randn(6)", "d = torch.zeros(6)", "for i in range(6):", "    d[i] = x[5 - i] + x[i - 6]"],
    # a view of the output read while it is written
    ["x = torch.randn(3, 4)", "col = x[:, 0]", "for i in range(3):", "    x[i] = x[i] + col[i]"],
    ["out = torch.zeros(4, 4)", "diag = out.diagonal()", "for i in range(4):", "    out[i] = diag + 1"],
    ["def g(a, b):", "    for i in range(len(a)):", "        a[i] = b[i] * 2", "    return a", "t = torch.randn(5)",
     "g(t[1:], t[:-1])"],
    # duplicate slots written with different values (the loop keeps the last)
    ["idx = torch.tensor([0, 1, 0])", "v = torch.randn(3)", "out = torch.zeros(2)", "for i in range(3):",
     "    out[idx[i]] = v[i]"],
    # `copy_` that is not the store `T[i] = v`: its result used, the whole tensor, a list's item, an index that is
    # a tensor (`out[idx[i]]` may be a copy), a Python number (the store checks it fits), more dims than the slot
    # (`copy_` raises where the store drops leading ones), a recurrence through the output
    ["x = torch.randn(5, 3)", "out = torch.zeros(5, 3)", "res = []", "for i in range(5):",
     "    res.append(out[i].copy_(x[i] * 2))"],
    ["x = torch.randn(5, 3)", "out = torch.zeros(5, 3)", "for i in range(5):", "    y = out[i].copy_(x[i])"],
    ["x = torch.randn(5, 3)", "out = torch.zeros(5, 3)", "for i in range(5):", "    out.copy_(x * i)"],
    ["x = torch.randn(5, 3)", "outs = [torch.zeros(3) for _ in range(5)]", "for i in range(5):",
     "    outs[i].copy_(x[i])"],
    ["x = torch.randn(5, 3)", "idx = torch.tensor([4, 3, 2, 1, 0])", "out = torch.zeros(5, 3)", "for i in range(5):",
     "    out[idx[i]].copy_(x[i])"],
    ["x = [1.0, 2.0, 300.0]", "out = torch.zeros(3, dtype=torch.uint8)", "for i in range(3):", "    out[i].copy_(x[i])"],
    ["x = torch.randn(5, 1, 3)", "out = torch.zeros(5, 3)", "for i in range(5):", "    out[i].copy_(x[i])"],
    ["x = torch.randn(5, 3)", "out = torch.zeros(5, 3)", "for i in range(1, 5):", "    out[i].copy_(out[i - 1] + x[i])"],
    ["x = torch.randn(5, 3)", "out = torch.zeros(5, 3)", "for i in range(5):", "    out[i].copy_(x[i]).add_(1)"],
    ["x = torch.randn(5, 3)", "out = torch.zeros(5, 3)", "for i in range(5):", "    out[i].copy_(src=x[i])"],
    # random draws, effects
    ["x = torch.randn(5)", "out = torch.empty(5)", "for i in range(5):", "    out[i] = x[i] + torch.randn(())"],
    ["x = torch.randn(5)", "out = torch.empty(5)", "for i in range(5):", "    out[i] = x[i] * 2", "    print(out[i])"],
    ["x = torch.randn(5, 3)", "for i in range(5):", "    torch.nn.init.orthogonal_(x[i:i + 1])"],
    # a temporary or the loop variable read after the loop
    ["x = torch.randn(5)", "out = torch.zeros(5)", "for i in range(5):", "    t = x[i] * 2", "    out[i] = t + 1",
     "last = t"],
    # int() of floats raises on NaN where .long() does not; math functions raise on overflow
    ["p = torch.rand(5)", "h = torch.zeros(3, dtype=torch.long)", "for v in p:", "    h[int(v * 3)] += 1"],
    ["import math", "x = torch.randn(5)", "out = torch.tensor([1 / (1 + math.exp(-v)) for v in x])"],
    # a float running max with a Python comparison skips NaN
    ["x = torch.randn(5)", "best = -float('inf')", "k = -1", "for i, s in enumerate(x):", "    if s > best:",
     "        best = s", "        k = i"],
    # data-dependent control flow in a function vmap would batch
    ["def f(x):", "    if x.sum() > 0:", "        return x", "    return -x", "xs = [torch.randn(3) for _ in range(4)]",
     "out = torch.stack([f(x) for x in xs])"],
    ["def f(x):", "    return x * x.item()", "xs = [torch.randn(()) for _ in range(4)]",
     "out = torch.stack([f(x) for x in xs])"],
    ["calls = []", "def f(x):", "    calls.append(1)", "    return x * 2", "xs = [torch.randn(3) for _ in range(4)]",
     "out = torch.stack([f(x) for x in xs])"],
    # a count known only by name that sizes no tensor of the loop: it may be negative (`arange` raises, range is empty)
    ["class M(torch.nn.Module):", "    def __init__(self, n: int):", "        super().__init__()", "        self.n = n",
     "    def rep(self):", "        kernel = torch.zeros(5, 5)", "        for i in range(self.n):",
     "            kernel[i, 0] = 1", "        return kernel", "out = M(3).rep()", "out2 = M(-2).rep()"],
    # layers that do not treat each sample alone: random, batch statistics, in place, renormalizing, a user module
    ["import torch.nn as nn", "layer = nn.Dropout(0.5)", "x = torch.randn(4, 3)", "out = torch.zeros(4, 3)",
     "for i in range(4):", "    out[i] = layer(x[i])"],
    ["import torch.nn as nn", "layer = nn.BatchNorm1d(3)", "x = torch.randn(4, 3, 5)", "out = torch.zeros(4, 3, 5)",
     "for i in range(4):", "    out[i] = layer(x[i])"],
    ["import torch.nn as nn", "layer = nn.Embedding(10, 3, max_norm=1.0)", "x = torch.randint(0, 10, (4, 2))",
     "out = torch.stack([layer(row) for row in x])"],
    ["import torch.nn as nn", "layer = nn.ReLU(inplace=True)", "x = torch.randn(4, 3)",
     "out = torch.stack([layer(row) for row in x])"],
    ["import torch.nn as nn", "layer = nn.Flatten()", "x = torch.randn(4, 3, 2, 2)",
     "out = torch.stack([layer(row) for row in x])"],
    ["import torch.nn as nn", "layer = nn.Softmax(dim=0)", "x = torch.randn(4, 3)",
     "out = torch.stack([layer(row) for row in x])"],
    ["import torch.nn as nn", "class Net(nn.Module):", "    def __init__(self):", "        super().__init__()",
     "        self.fc = nn.Linear(3, 2)", "    def forward(self, x):", "        return self.fc(x) * x.sum()",
     "net = Net()", "x = torch.randn(4, 3)", "out = torch.stack([net(row) for row in x])"],
    # a logger's `log` (not torch's) is an effect per element
    ["class Logger:", "    def log(self, v):", "        print(v)", "        return v", "logger = Logger()",
     "x = torch.randn(4)", "out = torch.zeros(4)", "for i in range(4):", "    out[i] = logger.log(x[i])"],
    # a batch of one through an op that mixes the samples of a batch (batch statistics) or draws random numbers
    ["import torch.nn.functional as F", "x = torch.randn(4, 3, 5)",
     "out = torch.stack([F.batch_norm(s[None], None, None, training=True)[0] for s in x])"],
    ["import torch.nn.functional as F", "x = torch.randn(4, 3, 5)",
     "out = torch.stack([F.dropout(s[None], 0.5)[0] for s in x])"],
    # pairs whose tensors differ in shape, a list changed before the loop, the label (a Python int) of each pair
    ["batch = [(torch.randn(3), 0), (torch.randn(4), 1)]", "out = torch.zeros(2, 3)", "for i in range(2):",
     "    out[i] = batch[i][0]"],
    ["batch = [(torch.randn(3), 0) for _ in range(4)]", "batch.append((torch.randn(3), 1))", "out = torch.zeros(5, 3)",
     "for i in range(5):", "    out[i] = batch[i][0]"],
    ["batch = [(torch.randn(3), k) for k in range(4)]", "out = torch.zeros(4)", "for i in range(4):",
     "    out[i] = batch[i][1]"],
    ["batch = [(torch.randn(3), 0) for _ in range(4)]", "out = torch.zeros(3, 3)", "for i in range(3):",
     "    out[i] = batch[i][0]"],
    # a filter (break) or a list kept as a list of tensors
    ["x = torch.randn(5)", "total = 0", "for v in x:", "    if v.abs() > 2:", "        break", "    total += v"],
    ["x = torch.randn(5)", "res = []", "for v in x:", "    res.append(v * 2)", "n = len(res)"],
    # an accumulator read before its update (a recurrence)
    ["x = torch.randn(5)", "s = 0.0", "out = torch.zeros(5)", "for i in range(5):", "    out[i] = s", "    s += x[i]"],
    # zip of lengths that may differ
    ["def f(a, b):", "    s = 0", "    for x, y in zip(a, b):", "        s += x * y", "    return s"],
    # a search whose test raises past the first hit, or reads past the end; one that returns the element (a view)
    ["x = torch.tensor([1, 0, 2])", "y = torch.tensor([1, 0, 1])", "k = -1", "for i in range(3):",
     "    if x[i] // y[i] > 0:", "        k = i", "        break"],
    ["def f(x):", "    for i in range(len(x)):", "        if x[i + 1] > x[i]:", "            return i", "    return -1",
     "k = f(torch.tensor([0.0, 1.0, 2.0]))"],
    ["def f(x):", "    for i in range(len(x)):", "        if x[i] > 0:", "            return x[i]", "    return None",
     "k = f(torch.randn(5))"],
    ["def f(x):", "    for i in range(len(x)):", "        if x[i] > 0:", "            return i", "        return -2",
     "    return -1", "k = f(torch.randn(5))"],
]


@pytest.mark.parametrize("lines", NEAR_MISSES, ids=[str(i) for i in range(len(NEAR_MISSES))])
def test_form_near_miss_gets_no_fix(lines):
    refused("near miss (new forms)", program(lines))


# Loops the first vectorizer refused that are now rewritten: each must compute the same.
NOW_REWRITTEN = [
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(5):", "    out[i] = x[i] * 2"],
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(1, 6):", "    out[i] = x[i] * 2"],
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(0, 6, 2):", "    out[i] = x[i] * 2"],
    ["x = torch.randn(7)", "out = torch.zeros(6)", "for i in range(6):", "    out[i] = x[i] * 2"],
    ["x = torch.randn(6)", "out = torch.zeros(6)", "alias = out", "for i in range(6):", "    out[i] = x[i] * 2"],
    ["x = torch.randn(6)", "out = torch.zeros(6)", "for i in range(6):", "    if x[i] > 0:", "        out[i] = x[i]"],
    ["x = torch.randn(6)", "out = torch.zeros(6, 3)", "for i in range(6):", "    out[i] = x[i] * 2"],
    ["a, b = torch.randn(3), torch.randn(4)", "out = torch.zeros(3, 4)", "for i in range(3):", "    for j in range(3):",
     "        out[i, j] = a[i] * b[j]"],
    ["a, b = torch.randn(3), torch.randn(4)", "out = torch.zeros(3, 4)", "for i in range(1, 3):",
     "    for j in range(4):", "        out[i, j] = a[i] * b[j]"],
    ["sq = torch.randn(4, 4)", "o2 = torch.zeros(4, 4)", "for i in range(4):", "    for j in range(4):",
     "        o2[i, j] = sq[j, i] * 2", "flat = o2.view(-1)"],
    ["a, b = torch.randn(3), torch.randn(4)", "out = torch.zeros(3, 4)", "for i in range(3):",
     "    for j in range(4):", "        out[i, j] = a[i] * b[j]", "    out[i, 0] = 0"],
    ["mat = torch.randn(3, 4)", "out = torch.zeros(3, 4)", "for i in range(3):", "    for j in range(4):",
     "        out[i, j] = mat[i, j] * i"],
    ["t = torch.randn(4, 3).t()", "out = torch.zeros(3, 4)", "for i in range(3):", "    for j in range(4):",
     "        out[i, j] = t[i, j] * 2", "flat = out.view(-1)"],
    ["x = torch.randn(5)", "ys = [1.0, 2.0, 3.0, 4.0, 5.0]", "res = []", "for p, q in zip(x, ys):",
     "    res.append(p * q)", "out = torch.stack(res)"],
    ["x = torch.randn(5)", "out = torch.zeros(6)", "for i, v in enumerate(x):", "    out[i] = v * 2"],
    ["x = torch.randn(5)", "out = torch.zeros(5)", "for i, v in enumerate(x):", "    out[i] = v * i"],
    # zip stops at the shorter: the longer one is cut
    ["x, y = torch.randn(5), torch.randn(6)", "res = []", "for p, q in zip(x, y):", "    res.append(p * q)",
     "out = torch.stack(res)"],
    ["x, y = torch.randn(5), torch.randn(6)", "s = 0.0", "for p, q in zip(x, y):", "    s += p * q"],
    # the article's loops, verbatim
    ["batch_size = 100", "feature_dim = 16", "data = torch.randn(batch_size, feature_dim)",
     "weight = torch.randn(feature_dim)", "bias = torch.randn(1)", "results_loop = torch.empty(batch_size)",
     "for i in range(batch_size):", "    results_loop[i] = torch.dot(data[i], weight) + bias"],
    ["tensor = torch.randn(1000)", "result = []", "for x in tensor:", "    if x > 0:", "        result.append(x)",
     "result = torch.tensor(result)"],
    ["import torch.nn.functional as F", "def cosine_similarity_loop(a, b):", "    result = torch.empty(a.shape[0])",
     "    for i in range(a.shape[0]):", "        result[i] = F.cosine_similarity(a[i], b[i], dim=0)",
     "    return result", "sims = cosine_similarity_loop(torch.randn(64, 8), torch.randn(64, 8))"],
    ["def f(x):", "    return torch.sin(x) * x + x ** 2", "tensor_list = [torch.randn(64) for _ in range(20)]",
     "outputs = torch.stack([f(x) for x in tensor_list])"],
    # `T[i].copy_(v)` is the store `T[i] = v` (timm's fast_collate), with its cast and broadcast
    ["x = torch.randn(6, 3)", "out = torch.zeros(6, 3)", "for i in range(6):", "    out[i].copy_(x[i] * 2)"],
    ["x = torch.randn(6, 3)", "out = torch.zeros(6, 3, dtype=torch.float64)", "for i in range(6):",
     "    out[i].copy_(x[i], non_blocking=True)"],
    ["x = torch.randn(6)", "out = torch.zeros(6, 4)", "for i in range(6):", "    out[i].copy_(x[i])"],
    ["def collate(images):", "    out = torch.zeros(len(images), 3, 4, dtype=torch.uint8)",
     "    for i in range(len(images)):", "        out[i].copy_(images[i])", "    return out",
     "batch = collate(torch.randint(0, 256, (5, 3, 4), dtype=torch.uint8))"],
    # pairwise box IoU, two nested loops of temporaries with `torch.min`/`torch.max` of two tensors
    ["def iou_matrix(boxes_a, boxes_b):", "    ious = torch.zeros(len(boxes_a), len(boxes_b))",
     "    for i in range(len(boxes_a)):", "        for j in range(len(boxes_b)):",
     "            a, b = boxes_a[i], boxes_b[j]",
     "            w = (torch.min(a[2], b[2]) - torch.max(a[0], b[0])).clamp(min=0)",
     "            h = (torch.min(a[3], b[3]) - torch.max(a[1], b[1])).clamp(min=0)", "            inter = w * h",
     "            ious[i, j] = inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)",
     "    return ious", "boxes = torch.rand(10, 4)", "boxes[:, 2:] += boxes[:, :2]", "m = iou_matrix(boxes, boxes[:7])"],
    # the output allocated right before a `with torch.no_grad():` block holding the loop
    ["import torch.nn as nn", "head = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 1))",
     "x = torch.randn(9, 6)", "scores = torch.zeros(9, 1)", "with torch.no_grad():", "    for i in range(9):",
     "        scores[i] = head(x[i])"],
    ["w = torch.randn(5, requires_grad=True)", "x = torch.randn(7, 5)", "out = torch.empty(7)",
     "with torch.no_grad():", "    for i in range(7):", "        out[i] = torch.dot(x[i], w)"],
    # a count of Python bools made ints (`int(p.item() == l.item())`)
    ["preds = torch.randint(0, 4, (50,))", "labels = torch.randint(0, 4, (50,))", "correct = 0",
     "for p, l in zip(preds, labels):", "    correct += int(p.item() == l.item())"],
    # the entropy of each row (`torch.log` and `.log()` are ops, not a logger's)
    ["probs = torch.softmax(torch.randn(32, 5), dim=1)", "ent = torch.zeros(32)", "for i in range(32):",
     "    p = probs[i]", "    ent[i] = -(p * torch.log(p + 1e-9)).sum()"],
    # timm's reparameterization (ghostnet): a count known only as a size of the class, and the kernel it fills
    ["class M(torch.nn.Module):", "    def __init__(self, c: int, k: int):", "        super().__init__()",
     "        self.in_channels = c", "        self.groups = c", "        self.kernel_size = k",
     "    def rep(self):", "        input_dim = self.in_channels // self.groups",
     "        kernel_value = torch.zeros((self.in_channels, input_dim, self.kernel_size, self.kernel_size))",
     "        for i in range(self.in_channels):",
     "            kernel_value[i, i % input_dim, self.kernel_size // 2, self.kernel_size // 2] = 1",
     "        return kernel_value", "out = M(4, 3).rep()", "out2 = M(2, 5).rep()"],
    # a list of Python numbers that is itself the result (nothing converts it after the loop)
    ["v = torch.randint(0, 4, (5,))", "out = []", "for i in range(len(v)):", "    out.append((v[i] == 2).item())"],
    ["mask = torch.rand(6, 4) > 0.5", "lengths = []", "for row in mask:", "    lengths.append(int(row.sum()))"],
    # ... its numbers of the kind the conversion makes: `float()` of an int is a float, `int()` of a bool an int
    ["x = torch.randint(-4, 5, (5, 3))", "out = []", "for i in range(len(x)):", "    out.append(float(x[i].sum()))"],
    ["x = torch.randn(5, 3)", "out = []", "for i in range(len(x)):", "    out.append(int(x[i].sum() > 0))"],
    # the index placed at the concat dim, no moving
    ["x = torch.randn(32).unsqueeze(1)", "out = torch.cat([x ** i for i in range(1, 5)], 1)"],
]


@pytest.mark.parametrize("lines", NOW_REWRITTEN, ids=[str(i) for i in range(len(NOW_REWRITTEN))])
def test_now_rewritten(lines):
    counted("formerly refused, now rewritten", program(lines), must_fix=True)


def test_zz_forms_report():
    if not FORMS:
        pytest.skip("run with the generating tests")
    for form, (programs, fixed) in sorted(FORMS.items()):
        print(f"{form:45s} {programs:6d} programs, {fixed:6d} rewritten and checked")
    for form, (programs, fixed) in FORMS.items():
        if not form.startswith("near miss"):
            assert fixed >= programs * 0.15, f"{form}: only {fixed} of {programs} generated loops were rewritten"


# A literal handful of iterations over whole slices is not a per-element loop: no finding without a fix (init code, the
# x and y of a grid), but a proven rewrite is offered (one op per output instead of a few). The same loops over more
# iterations, or a handful of single elements, are rewritten too.
FEW_WHOLE_SLICES = [
    ["x = torch.randn(512, 3, 64)", "m = torch.zeros(3, 64)", "v = torch.zeros(3, 64)", "for i in range(3):",
     "    m[i] = torch.mean(x[:, i], dim=0)", "    v[i] = torch.var(x[:, i], dim=0)"],
    ["p = torch.randn(2, 9, 2)", "outs = []", "for i in range(2):", "    outs.append(p[:, :, i] * 2)",
     "out = torch.stack(outs)"],
    ["X = torch.randn(6, 2)", "s = torch.zeros(2)", "for j in range(0, 2):", "    s[j] = X[:, j].sum()"],
]
STILL_PER_ELEMENT = [
    ["x = torch.randn(512, 4, 64)", "m = torch.zeros(4, 64)", "for i in range(4):", "    m[i] = torch.mean(x[:, i], dim=0)"],
    ["x = torch.randn(3)", "out = torch.zeros(3)", "for i in range(3):", "    out[i] = x[i] * 2"],
]


# ... and where the rewrite is not proven (over more iterations these are flagged without a fix), nothing at all.
FEW_WHOLE_SLICES_UNPROVEN = [
    ["x = torch.randn(512, 3, 64)", "m = torch.zeros(3, 64)", "for i in range(3):", "    m[i] = torch.mean(x[:, i], dim=0)",
     "last = i"],
    ["p = torch.randn(2, 9, 2)", "outs = []", "for i in range(2):", "    outs.append(p[:, :, i] * 2)",
     "out = torch.stack(outs)", "k = i"],
]


@pytest.mark.parametrize("lines", FEW_WHOLE_SLICES, ids=[str(i) for i in range(len(FEW_WHOLE_SLICES))])
def test_few_whole_slices_only_with_a_proven_rewrite(lines):
    counted("a handful of whole slices", program(lines), must_fix=True)


@pytest.mark.parametrize("lines", FEW_WHOLE_SLICES_UNPROVEN, ids=[str(i) for i in range(len(FEW_WHOLE_SLICES_UNPROVEN))])
def test_few_whole_slices_unproven_are_silent(lines):
    from test_vectorize_truth import loop_findings

    assert not loop_findings(program(lines))


@pytest.mark.parametrize("lines", STILL_PER_ELEMENT, ids=[str(i) for i in range(len(STILL_PER_ELEMENT))])
def test_more_iterations_or_elements_still_rewritten(lines):
    counted("formerly refused, now rewritten", program(lines), must_fix=True)


# Loops over tensors that cannot be vectorized as they are walked: a per-element body is flagged with the reason, no fix.
_RAGGED = "caps = [torch.randint(1, 9, (n,)) for n in (5, 3, 2)]"
_UNKNOWN = "import collections\nrets = torch.tensor(collections.deque([0.5, 1.0, 2.0]))"
HALF_KNOWN_FLAGGED = [
    ([_RAGGED, "lengths = [len(c) for c in caps]", "out = torch.zeros(len(caps), max(lengths)).long()",
      "for i, c in enumerate(caps):", "    end = lengths[i]", "    out[i, :end] = c[:end]"], "may differ in shape"),
    ([_UNKNOWN, "lps = [torch.randn(1) for _ in range(3)]", "loss = []", "for lp, r in zip(lps, rets):",
      "    loss.append(-lp * r)", "loss = torch.cat(loss).sum()"], "`zip` of tensors with `rets`"),
    # a mean per class: each class's mask keeps its own number of rows
    (["feats = torch.randn(20, 4)", "labels = torch.randint(0, 3, (20,))", "means = torch.zeros(3, 4)",
      "for c in range(3):", "    means[c] = feats[labels == c].mean(0)"], "a boolean mask per element"),
]
HALF_KNOWN_SILENT = [
    [_RAGGED, "out = []", "for c in caps:", "    out.append(c * torch.rand(1))"],  # a draw per item
    [_RAGGED, "n = 0", "for c in caps:", "    if c.sum() > 9:", "        break", "    n += 1"],  # an early exit
    [_UNKNOWN, "lps = [torch.randn(1) for _ in range(3)]", "def model(x):", "    print(x)", "    return x",
     "loss = []", "for lp, r in zip(lps, rets):", "    loss.append(model(lp) * r)"],  # a call with effects
    [_UNKNOWN, "lps = [torch.randn(1) for _ in range(3)]", "for lp, r in zip(lps, rets):", "    print(lp, r)"],
]


@pytest.mark.parametrize("lines, reason", HALF_KNOWN_FLAGGED, ids=[str(i) for i in range(len(HALF_KNOWN_FLAGGED))])
def test_half_known_walks_are_flagged(lines, reason):
    from test_vectorize_truth import loop_findings

    found = loop_findings(program(lines))
    assert found and not any(f.fixes for f in found), [f.message for f in found]
    assert any(reason in f.message for f in found), [f.message for f in found]


@pytest.mark.parametrize("lines", HALF_KNOWN_SILENT, ids=[str(i) for i in range(len(HALF_KNOWN_SILENT))])
def test_half_known_walks_that_stay_loops_are_silent(lines):
    from test_vectorize_truth import loop_findings

    assert not loop_findings(program(lines))
