"""Accumulations against real PyTorch: conditional sums and their starting values, generated with near-misses.

A sum under an ``if`` may add nothing even when the loop runs: ``total = 0`` then ``if c: total += v.item()``
stays the int ``0`` where no element passes, while one masked sum is the float ``0.0``. Where the first
update changes the accumulator's type (Python number to tensor, int to float, float32 to float64) the rewrite
is refused with that reason; where it does not (``0.0`` plus ``.item()`` of floats, a tensor start added in
place) the masked sum is the loop. The differential check of ``test_vectorize_truth`` compares Python types.
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_vectorize_forms import _with_params, counter  # noqa: E402,I001
from test_vectorize_truth import FLOATS, INTS, MANY, loop_findings, program, seed, tensor  # noqa: E402

FORMS: dict = {}  # this file's forms, reported by its own test_zz report
counted = counter(FORMS)

STARTS = ["0", "0.0", "1", "-2.5", "torch.zeros(())", "torch.tensor(0.0)", "torch.zeros((), dtype=torch.float64)"]
TESTS = ["{v} > 0", "{v} > 100", "{v} < -100", "{v} != {v}", "{v} >= 0", "{v} * 0 > 1", "abs({v}) > 0.5"]


@MANY
@given(st.randoms(use_true_random=False))
def test_conditional_sum_keeps_its_starting_type(r):
    """``if c: out += value`` (``+=`` / ``-=``, with an ``else`` that adds too, or none) on data where no element,
    some or all pass, inputs at module level or parameters of a function."""
    n = r.choice([0, 1, 5])
    dtype = r.choice(FLOATS + INTS)
    data = r.choice([tensor(r, (n,), dtype), f"torch.full(({n},), -1, dtype={dtype})",
                     f"torch.full(({n},), 3, dtype={dtype})"])
    header, v = r.choice([("for i in range(len(x)):", "x[i]"), ("for v in x:", "v"),
                          ("for v, w in zip(x, y):", "v")])
    value = r.choice([f"{v}.item()", f"float({v})", v, f"{v} * 2", f"int({v})", f"({v} - 1).item()"])
    test = r.choice(TESTS).format(v=v)
    op = r.choice(["+=", "-="])
    body = [f"out = {r.choice(STARTS)}", header, f"    if {test}:", f"        out {op} {value}"]
    if r.random() < 0.3:
        body += ["    else:", f"        out {op} {r.choice(['0', '1', value])}"]
    params = {"x": data, "y": tensor(r, (n,), dtype)}
    counted("conditional sums (starting type)", program([seed(r)] + _with_params(r, body, params)))


# (the loop, a word of the reason): where no element passes, the loop keeps the starting value's type
NOTHING_PASSES = [
    (["scores = torch.full((8,), 5.0)", "y = torch.ones(8)", "total = 0", "for s, t in zip(scores, y):",
      "    margin = 1 - t * s", "    if margin > 0:", "        total += margin.item()"], "`int`"),
    (["x = torch.randn(6)", "total = 0.0", "for v in x:", "    if v > 100:", "        total += v"], "Python number"),
    (["x = torch.randn(6, dtype=torch.float64)", "total = torch.zeros(())", "for v in x:", "    if v > 0:",
      "        total = total + v"], "dtype and shape"),
]


@pytest.mark.parametrize("lines, word", NOTHING_PASSES, ids=[str(i) for i in range(len(NOTHING_PASSES))])
def test_a_sum_that_may_add_nothing_is_flagged_with_the_reason(lines, word):
    found = loop_findings(program(lines))
    assert found and not any(f.fixes for f in found), [f.message for f in found]
    assert any("no element may pass the `if`" in f.message and word in f.message for f in found), \
        [f.message for f in found]


TUPLE_STARTS = ["a, b = 0.0, 0.0", "a, b = 0, 0", "(a, b) = (0.0, 1.0)", "[a, b] = [0, 0.0]", "a, b = 0.0, torch.zeros(())",
                "a, b = torch.zeros(()), torch.zeros(())",
                # near-misses: a swap, a value read from the other name, a tensor unpacked, a starred target
                "a, b = 0.0, 0.0\na, b = b, a", "a = 1.0\na, b = 0.0, a", "a, b = torch.zeros(2)", "a, *b = 0.0, 0.0"]


@MANY
@given(st.randoms(use_true_random=False))
def test_accumulations_from_tuple_starting_values(r):
    """``a, b = 0.0, 0.0`` then ``a += f(x[i])``, ``b += g(x[i])`` (one of them under an ``if``, or a count): each name's
    part of the tuple is its starting value; the tuple statement is kept (it binds the other name too)."""
    n = r.choice([0, 1, 6])
    dtype = r.choice(FLOATS + INTS)
    start = r.choice(TUPLE_STARTS)
    first = r.choice(["x[i]", "x[i].item()", "x[i] * 2", "x[i].abs()", "float(x[i])"])
    second = r.choice(["x[i] ** 2", "y[i]", "x[i].clamp(min=0)" if dtype in FLOATS else "x[i] - y[i]", "1"])
    op = r.choice(["+=", "-="])
    body = start.split("\n") + ["for i in range(len(x)):", f"    a {op} {first}"]
    if r.random() < 0.3:
        body += [f"    if {r.choice(['x[i] > 0', 'y[i] < 0', 'i % 2 == 0'])}:", f"        b += {second}"]
    else:
        body += [f"    b += {second}"]
    params = {"x": tensor(r, (n,), dtype), "y": tensor(r, (n,), dtype)}
    lines = [seed(r)] + [f"{name} = {value}" for name, value in params.items()] + body
    if r.random() < 0.5:  # in a function
        lines = [seed(r)] + [f"{name}_arg = {value}" for name, value in params.items()] + ["def f(x, y):"] + \
            ["    " + line for line in body] + ["    return a, b", "result_a, result_b = f(x_arg, y_arg)"]
    counted("tuple starting values", program(lines))


@MANY
@given(st.randoms(use_true_random=False))
def test_running_max_and_min_per_step(r):
    """``best = torch.maximum(best, v[i])`` recorded per step: ``torch.maximum(start, torch.cummax(v, dim=0).values)``
    (``minimum`` / ``cummin``, two-tensor ``torch.max`` / ``min``); NaN anywhere, ints, empty walks. Near-misses: a
    Python-number start (the loop raises), a start of another dtype or shape (promotes, broadcasts), an update under
    an ``if``, a start not right before the loop, the value read after the loop, rows instead of numbers."""
    n = r.choice([0, 1, 2, 7])
    dtype = r.choice(FLOATS + INTS)
    nan = [f"v[{r.randrange(n)}] = float('nan')"] if n and dtype in FLOATS and r.random() < 0.3 else []
    fn = r.choice(["torch.maximum", "torch.minimum", "torch.max", "torch.min"])
    start = r.choice(["v[0]" if n else "torch.zeros((), dtype=v.dtype)", "torch.zeros((), dtype=v.dtype)",
                      f"torch.tensor({r.choice(['-1', '3'])}, dtype=v.dtype)", "v.mean()" if dtype in FLOATS else "v[0]",
                      "0.0", "torch.zeros(1, dtype=v.dtype)", "torch.zeros((), dtype=torch.float64)"])
    element = r.choice(["v[i]", "v[i] * 2", "v[i].abs()" if dtype in FLOATS else "v[i] - 1", "m[i].sum()", "m[i]"])
    update = r.choice([f"best = {fn}(best, {element})", f"best = {fn}({element}, best)"])
    between = ["w = v * 1"] if r.random() < 0.1 else []
    lines = [f"v = {tensor(r, (n,), dtype)}", f"m = {tensor(r, (n, 3), dtype)}"] + nan
    if r.random() < 0.5:
        lines += [f"out = torch.zeros({n}, dtype={dtype})", f"best = {start}"] + between + ["for i in range(len(v)):",
                                                                                          f"    {update}"]
        if r.random() < 0.15:
            lines += ["    if i % 2 == 0:", "        out[i] = best"]
        else:
            lines += ["    out[i] = best"]
    else:
        lines += ["out = []", f"best = {start}"] + between + [f"for i in range({n}):", f"    {update}",
                                                             "    out.append(best)", "out = torch.stack(out)"]
    if r.random() < 0.1:
        lines.append("final = best")
    counted("running max / min per step", program([seed(r)] + lines))


# Recurrences that must stay loops: a running value updated twice per iteration from its own new value (a Kalman
# filter's predict and update). Main flagged the first one TW401 "a running value of something that is not a tensor
# per element": the first update read alone as a running sum. No finding: no scan gives these.
RECURRENCES = [
    ["z = torch.randn(100)", "x, p = 0.0, 1.0", "q, r = 1e-3, 0.1", "est = torch.zeros(100)", "for t in range(100):",
     "    p = p + q", "    k = p / (p + r)", "    x = x + k * (z[t] - x)", "    p = (1 - k) * p", "    est[t] = x"],
    ["z = torch.randn(50)", "x = torch.zeros(())", "p = torch.ones(())", "out = []", "for zt in z:", "    p += 0.01",
     "    k = p / (p + 0.5)", "    x = x + k * (zt - x)", "    p = (1 - k) * p", "    out.append(x)",
     "out = torch.stack(out)"],
    ["v = torch.randn(20)", "s = 0.0", "hist = torch.zeros(20)", "for i in range(20):", "    s += v[i]",
     "    hist[i] = s", "    s *= 0.5"],
]


@pytest.mark.parametrize("lines", RECURRENCES, ids=[str(i) for i in range(len(RECURRENCES))])
def test_a_value_updated_twice_per_iteration_stays_a_loop(lines):
    found = loop_findings(program(lines))
    assert not found, [f.message for f in found]


def test_a_slot_updated_from_itself_is_flagged_as_a_recurrence():
    """``memory[labels[i]] = 0.9 * memory[labels[i]] + 0.1 * feats[i]`` (labels repeat): main's reason, "the loop keeps
    the last", named the wrong thing; each update reads what the previous update of that slot wrote."""
    found = loop_findings(program(["memory = torch.zeros(5, 16)", "feats = torch.randn(64, 16)",
                                   "labels = torch.randint(0, 5, (64,))", "for i in range(feats.shape[0]):",
                                   "    memory[labels[i]] = 0.9 * memory[labels[i]] + 0.1 * feats[i]"]))
    assert found and not any(f.fixes for f in found), [f.message for f in found]
    assert "a recurrence per slot" in found[0].message, found[0].message


# statements between a starting value and its loop that change what the value's text means there
BETWEEN = ["init = init * 2", "init += 1", "init.mul_(3)", "init = x.sum()", "y = x + 1", "w = torch.zeros(3)",
           "torch.manual_seed(7)", "noise = torch.randn(3)", "init[...] = 5", "print(init)"]


@MANY
@given(st.randoms(use_true_random=False))
def test_a_moved_starting_value_means_what_it_meant(r):
    """``acc = <start reading init>``, a statement, then a running sum or scan from ``acc``: a rewrite evaluates the
    start's text where the loop was, so a statement in between that rebinds, mutates or draws before it would start
    the rewrite from another value (main started ``acc = init; init = init * 2`` from the doubled ``init``)."""
    n = r.choice([0, 1, 5])
    dtype = r.choice(FLOATS)
    start = r.choice(["init", "init * 1", "init.clone()", "init + 0", "torch.randn(()) + init",
                      f"torch.zeros((), dtype={dtype}) + init"])
    between = r.sample(BETWEEN, r.choice([0, 1, 1, 2]))
    body = [f"init = {tensor(r, (), dtype)}", f"acc = {start}", *between]
    if r.random() < 0.5:
        body += [f"out = torch.empty({n}, dtype={dtype})", "for i in range(len(x)):", "    acc = acc + x[i]",
                 "    out[i] = acc"]
    else:
        body += ["for v in x:", r.choice(["    acc = acc + v", "    acc += v"])]
    params = {"x": tensor(r, (n,), dtype)}
    counted("moved starting values", program([seed(r)] + _with_params(r, body, params)))


def test_zz_accumulations_report():
    print({form: FORMS[form] for form in FORMS})
