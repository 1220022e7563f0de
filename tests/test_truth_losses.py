"""TW509 / TW510 against real torch: generated loss calls with input and target shapes of every kind.

Each program builds an input and a target of random shapes (equal, off by a trailing size-1 dim, transposed,
another rank) and calls one loss, functional or as a module. Run with real torch, it raises, warns that the
target size differs from the input size (the element-wise losses broadcast), or runs clean. torchwise must say:
TW509 only where torch raises; TW510 exactly where an element-wise loss warns and returns; and after a fix,
the program runs with neither.
"""

from __future__ import annotations

import random
import warnings

import pytest

torch = pytest.importorskip("torch")

from torchwise.engine import analyze  # noqa: E402
from torchwise.fixing import apply_edits  # noqa: E402
from torchwise.rules.losses import CLASSES, ELEMENTWISE, SAME_SIZE  # noqa: E402

LOSSES = sorted({**ELEMENTWISE, **SAME_SIZE, **CLASSES}.items())
N_PROGRAMS = 1000


def _shape_text(shape: tuple) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _target_shape(rng: random.Random, x: tuple, classes: bool) -> tuple:
    base = (x[0], *x[2:]) if classes and len(x) >= 2 and rng.random() < 0.5 else x
    kind = rng.choice(["same", "same", "plus one", "minus one", "reversed", "random"])
    if kind == "plus one":
        return (*base, 1)
    if kind == "minus one":
        return base[:-1] if base and base[-1] == 1 else base[:-1] if rng.random() < 0.3 else base
    if kind == "reversed":
        return tuple(reversed(base))
    if kind == "random":
        return tuple(rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(0, 3)))
    return base


def _program(rng: random.Random) -> tuple[str, str]:
    name, module = rng.choice(LOSSES)
    x = tuple(rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(1, 3)))
    target = _target_shape(rng, x, name in CLASSES)
    if name in CLASSES and rng.random() < 0.6:
        make_target = f"torch.zeros({_shape_text(target)}, dtype=torch.long)"  # class 0 is always a class
    else:
        make_target = f"torch.rand({_shape_text(target)})"
    make_input = f"torch.rand({_shape_text(x)})"  # in [0, 1): binary_cross_entropy takes it as probabilities
    call = f"F.{name}(pred, target)" if rng.random() < 0.5 else f"nn.{module}()(pred, target)"
    code = (f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
            f"pred = {make_input}\ntarget = {make_target}\nloss = {call}\n")
    return name, code


def _outcome(code: str) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(code, "<loss>", "exec"), {})
        except (RuntimeError, ValueError, IndexError):
            return "raises"
    return "warns" if any("different to the input size" in str(w.message) for w in caught) else "clean"


def test_loss_rules_agree_with_torch():
    rng = random.Random(509)
    counts = {"raises": 0, "raises flagged": 0, "warns": 0, "warns flagged": 0, "fixed": 0}
    for _ in range(N_PROGRAMS):
        name, code = _program(rng)
        outcome = _outcome(code)
        findings = [f for f in analyze(code).findings if f.code in ("TW509", "TW510")]
        codes = {f.code for f in findings}
        counts[outcome] = counts.get(outcome, 0) + 1
        if "TW509" in codes:
            assert outcome == "raises", f"TW509 where torch {outcome}:\n{code}"
            counts["raises flagged"] += 1
        if name in ELEMENTWISE:
            assert ("TW510" in codes) == (outcome == "warns"), f"TW510 {'fired' if 'TW510' in codes else 'silent'} " \
                                                               f"where torch {outcome}:\n{code}"
        counts["warns flagged"] += "TW510" in codes
        for finding in findings:
            if finding.fixes:
                fixed = apply_edits(code, finding.fixes[0].edits)
                assert _outcome(fixed) == "clean", f"the fix of {finding.code} still {_outcome(fixed)}:\n{fixed}"
                counts["fixed"] += 1
    print(counts)
    assert counts["raises flagged"] > 50 and counts["warns flagged"] > 30 and counts["fixed"] > 30
