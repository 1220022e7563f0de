"""Calls whose result is a Python value (a bool, a float, ``None``), checked against real torch: the engine's
kind of value for each must be the type torch returns (``torch.finfo(dots.dtype).max`` is a float that fills
a mask, ``loss.backward()`` returns None, ``torch.equal(a, b)`` a bool)."""

from __future__ import annotations

import ast

import pytest

torch = pytest.importorskip("torch")

from torchwise.analysis.values import ScalarValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

SETUP = """\
import torch
x = torch.randn(3, 4, requires_grad=True)
i = torch.arange(6)
loss = (x * 2).sum()
"""

EXPRESSIONS = [
    "loss.backward()",
    "torch.equal(x, x)",
    "torch.equal(i, i + 1)",
    "torch.allclose(x, x, atol=1e-3)",
    "x.allclose(x)",
    "x.equal(x)",
    "torch.is_tensor(x)",
    "torch.is_tensor(3)",
    "x.is_contiguous()",
    "x.t().is_contiguous()",
    "x.is_floating_point()",
    "i.is_floating_point()",
    "x.is_complex()",
    "torch.finfo(x.dtype).max",
    "-torch.finfo(x.dtype).max",
    "torch.finfo(torch.float16).eps",
    "torch.finfo().tiny",
    "torch.finfo(x.dtype).bits",
    "torch.iinfo(i.dtype).max",
    "torch.iinfo(torch.uint8).min",
]

_KINDS = {bool: "bool", int: "int", float: "float", type(None): "none"}


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_the_engine_says_the_python_type_torch_returns(expression):
    source = SETUP + f"result = {expression}\n"
    scope: dict = {}
    exec(compile(source, "<truth>", "exec"), scope)
    analysis = analyze(source, "truth.py")
    target = next(n for n in ast.walk(analysis.source.tree) if isinstance(n, ast.Name) and n.id == "result")
    fact = analysis.facts.values.get(target)
    if isinstance(fact, ScalarValue) and fact.kind == "int" and fact.value is not None:
        fact = ScalarValue("int")  # (an int the frame names after its target: still an int)
    assert isinstance(fact, ScalarValue), f"{expression}: {fact!r}"
    assert fact.kind == _KINDS[type(scope["result"])], f"{expression}: engine {fact.kind}, torch {scope['result']!r}"
