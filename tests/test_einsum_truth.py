"""torch.einsum's shape rules (``shapes.einsum``, which TW507 and the facts engine use) and its sublist form
(``einops_shapes.sublist_equation``), checked against real torch.einsum on generated equations.

Equations mix upper- and lower-case labels, ellipses (one per term, of different ranks that broadcast),
repeated labels (diagonals), size-1 dims that broadcast against a label's size, implicit outputs
(no ``->``) and mutations that must fail (unknown output labels, repeated output labels, wrong ranks, bad
characters, operand counts). With every size an int, ours must raise exactly when torch raises and give
its shape otherwise; with symbols (``s3`` = 3), what ours says must hold for the values.
"""

from __future__ import annotations

import os
import random
import warnings
from collections import Counter

import pytest

torch = pytest.importorskip("torch")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from torchwise.analysis import einops_shapes as E  # noqa: E402
from torchwise.analysis import shapes as S  # noqa: E402
from torchwise.analysis.dims import Sym  # noqa: E402
from torchwise.engine import analyze  # noqa: E402
from torchwise.rules.patterns import EinopsPatternMismatch  # noqa: E402

EXAMPLES = int(os.environ.get("TORCHWISE_EINOPS_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
LABELS = "abcijkAB"
STATS: Counter = Counter()


def case(rng: random.Random):
    """(equation, operand shapes) with labels' sizes mostly consistent."""
    sizes = {label: rng.choice([1, 2, 3]) for label in LABELS}
    ellipsis = [rng.choice([1, 2, 3]) for _ in range(rng.randint(0, 2))]
    terms, shapes = [], []
    for _ in range(rng.randint(1, 3)):
        labels = [rng.choice(LABELS) for _ in range(rng.randint(0, 3))]
        shape = [sizes[label] if rng.random() < 0.85 else rng.choice([1, 1, 2, 3]) for label in labels]
        if rng.random() < 0.3:
            at = rng.randint(0, len(labels))
            labels.insert(at, "...")
            cut = rng.randint(0, len(ellipsis))
            part = [d if rng.random() < 0.9 else 1 for d in ellipsis[cut:]]
            shape[at:at] = part
        terms.append(labels)
        shapes.append(tuple(shape))
    equation = ",".join("".join(labels) for labels in terms)
    if rng.random() < 0.7:
        seen = sorted({label for labels in terms for label in labels if label != "..."})
        out = rng.sample(seen, rng.randint(0, len(seen)))
        if any("..." in labels for labels in terms) and rng.random() < 0.7:
            out.insert(rng.randint(0, len(out)), "...")
        equation += "->" + "".join(out)
    return mutate(rng, equation, shapes)


def mutate(rng, equation, shapes):
    kind = rng.randint(0, 14)
    if kind == 0:
        equation += rng.choice(["z", "a", "->", "...", "1"])
    elif kind == 1 and shapes[0]:
        shapes[0] = shapes[0] + (2,)
    elif kind == 2:
        shapes = shapes + [(2,)]
    elif kind == 3 and len(shapes) > 1:
        shapes = shapes[:-1]
    elif kind == 4:
        at = rng.randint(0, len(equation))
        equation = equation[:at] + rng.choice(",.- ") + equation[at:]
    return equation, shapes


def symbolic(rng, shape, env):
    out = []
    for d in shape:
        if rng.random() < 0.5:
            name = f"s{len(env)}"
            env[name] = d
            out.append(Sym.var(name))
        else:
            out.append(d)
    return tuple(out)


def concrete(shape, env):
    return tuple(d.subs(env) if isinstance(d, Sym) else d for d in shape)


def fresh_free(dim) -> bool:
    return not (isinstance(dim, Sym) and any("#" in n for n in dim.symbols))


def compare(equation, ours_shapes, real_shapes, env=None):
    env = env or {}
    full = not env
    try:
        mine, mine_error = S.einsum(equation, ours_shapes), None
    except S.ShapeError as err:
        mine, mine_error = None, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            real, real_error = tuple(torch.einsum(equation, *[torch.zeros(s) for s in real_shapes]).shape), None
        except (RuntimeError, ValueError) as err:
            real, real_error = None, err
    mode = "int" if full else "sym"
    if mine_error is not None:
        STATS[f"{mode} error"] += 1
        assert real_error is not None, f"we raise {mine_error.message!r}, torch gives {real}"
        return
    if mine is None:
        STATS[f"{mode} unknown"] += 1
        assert not full, f"unknown with int shapes; torch: {real or real_error}"
        return
    STATS[f"{mode} shape"] += 1
    if real_error is not None:
        assert not full, f"we say {mine}, torch raises {real_error}"
        return
    got = concrete(mine, env)
    assert len(got) == len(real) and all(not fresh_free(m) or m == r for m, r in zip(got, real)), (mine, got, real)


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_einsum_equations_match_torch(rng):
    equation, shapes = case(rng)
    compare(equation, shapes, shapes)
    env = {}
    compare(equation, [symbolic(rng, s, env) for s in shapes], shapes, env)


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_sublist_form_matches_torch(rng):
    """``torch.einsum(a, [0, 1], b, [1, 2], [0, 2])``: the equation we build gives torch's result."""
    equation, shapes = case(rng)
    if "->" in equation and equation.count("->") == 1:
        lhs, rhs = equation.split("->")
    else:
        lhs, rhs = equation, None
    if any(ch not in LABELS + ".," for ch in lhs) or (rhs is not None and any(ch not in LABELS + "." for ch in rhs)):
        return
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        return

    def sublist(term):
        out, i = [], 0
        while i < len(term):
            if term.startswith("...", i):
                out.append(Ellipsis)
                i += 3
            elif term[i] == ".":
                return None
            else:
                ch = term[i]
                out.append(ord(ch) - ord("A") if ch.isupper() else ord(ch) - ord("a") + 26)
                i += 1
        return out

    sublists = [sublist(t) for t in terms]
    output = sublist(rhs) if rhs is not None else None
    if any(s is None for s in sublists) or (rhs is not None and output is None):
        return
    built = E.sublist_equation(sublists, output)
    args = []
    for s, sub in zip(shapes, sublists):
        args += [torch.zeros(s), sub]
    if output is not None:
        args.append(output)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            real, real_error = tuple(torch.einsum(*args).shape), None
        except (RuntimeError, ValueError) as err:
            real, real_error = None, err
    try:
        mine, mine_error = S.einsum(built, shapes), None
    except S.ShapeError as err:
        mine, mine_error = None, err
    STATS["sublist"] += 1
    assert (mine_error is None) == (real_error is None), (built, shapes, mine_error, real_error)
    assert mine == real


SPACED = [("k.. .Bc", [(2, 3, 2)]), ("c.. .,A->cA...", [(1, 3), (1,)]), ("...ak,- >...ka", [(2, 1, 1), ()]),
          ("...,jA,->. ..j", [(), (1, 1), ()])]


@pytest.mark.parametrize(("equation", "operand_shapes"), SPACED)
def test_spaces_split_ellipsis_and_arrow(equation, operand_shapes):
    with pytest.raises(RuntimeError):
        torch.einsum(equation, *[torch.zeros(s) for s in operand_shapes])
    with pytest.raises(S.ShapeError):
        S.einsum(equation, operand_shapes)


def test_sublist_subscript_out_of_range_is_torch_error():
    with pytest.raises(ValueError, match="valid range"):
        torch.einsum(torch.zeros(2), [52])
    with pytest.raises(S.ShapeError, match="valid range"):
        E.sublist_equation([[52]])


def test_rule_reads_the_sublist_form():
    code = ("import torch\na = torch.randn(2, 3)\nb = torch.randn(4, 5)\n"
            "c = torch.einsum(a, [0, 1], b, [1, 2], [0, 2])\n")
    findings = [f for f in analyze(code, rules=[EinopsPatternMismatch()]).findings if f.code == "TW507"]
    assert len(findings) == 1 and "operands do not broadcast" in findings[0].message
    with pytest.raises(RuntimeError):
        exec(compile(code, "<sublist>", "exec"), {})
    fine = code.replace("torch.randn(4, 5)", "torch.randn(3, 5)")
    assert not [f for f in analyze(fine, rules=[EinopsPatternMismatch()]).findings if f.code == "TW507"]


def _sublist_hook_installed() -> bool:
    analysis = analyze("import torch\nc = torch.einsum(torch.randn(2, 3), [0, 1], [1, 0])\n")
    target = analysis.source.tree.body[1].targets[0]
    return analysis.facts.values.get(target) is not None


@pytest.mark.skipif(not _sublist_hook_installed(),
                    reason="needs the sublist hook in ops_tensor._einsum (ops_einops.sublist_as_equation)")
def test_engine_reads_the_sublist_form():
    analysis = analyze("import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 5)\n"
                       "c = torch.einsum(a, [0, 1], b, [1, 2], [0, 2])\n"
                       "d = torch.einsum(a, [Ellipsis, 1], b, [1, 2])\n")
    values = {stmt.targets[0].id: analysis.facts.values.get(stmt.targets[0]) for stmt in analysis.source.tree.body[1:]}
    assert values["c"].shape == (2, 5)
    assert values["d"].shape == (2, 5)


def test_report():
    print("\ntorch.einsum differential cases:", dict(sorted(STATS.items())))


def test_a_size_made_up_for_an_unknown_reads_as_a_question_mark():
    # The message named the symbol the analysis made for `len(items)`: "does not fit the input (n#1, 3)"; on
    # vit-pytorch it read "(n#622119851324, n#133982147101, ...)". Hover already showed `?`.
    code = ("import torch\nfrom einops import rearrange\n\n\ndef f(items):\n    x = torch.randn(len(items), 3)\n"
            "    return rearrange(x, 'a b c -> a (b c)')\n")
    findings = [f for f in analyze(code, rules=[EinopsPatternMismatch()]).findings if f.code == "TW507"]
    assert len(findings) == 1 and "the input (?, 3)" in findings[0].message and "#" not in findings[0].message, \
        findings[0].message
