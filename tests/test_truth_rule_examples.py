"""Each rule's verdict on its own examples agrees with real PyTorch (CPU).

For rules about code that raises (TW301, TW5xx): every invalid example raises when run, every
valid example runs, and every fixed example runs. Examples that need CUDA are skipped here.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from torchwise.rules import ALL_RULES  # noqa: E402

RAISING = [rule for rule in ALL_RULES if rule.runtime_error]


def run(code: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "<example>", "exec"), {})


def cases(kind):
    for rule in RAISING:
        for i, example in enumerate(getattr(rule, kind)):
            if "cuda" not in example.code:
                yield pytest.param(rule.code, example, id=f"{rule.code}-{i}")


@pytest.mark.parametrize(("code", "example"), list(cases("invalid")))
def test_invalid_examples_raise(code, example):
    with pytest.raises((RuntimeError, IndexError, ValueError, TypeError)):
        run(example.code)
    if example.fixed:
        run(example.fixed)


@pytest.mark.parametrize(("code", "example"), list(cases("valid")))
def test_valid_examples_run(code, example):
    run(example.code)


def test_there_are_runtime_checked_rules():
    assert {r.code for r in RAISING} >= {"TW301", "TW501", "TW502", "TW503", "TW504", "TW505"}
