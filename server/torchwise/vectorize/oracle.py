"""What the facts engine says an op gives, asked twice: per element and on the whole tensors.

The vectorizer's dtype and shape proofs do not re-implement PyTorch's rules: for every op in a loop
body it asks the engine's own transfer functions (``analysis.ops``, which read the one op table)
once with the facts of one slice and once with the facts of the whole batched tensors, and compares
the answers. The engine's rules are checked against real torch (``tests/test_optable_truth.py``),
so a rewrite whose every op gives the same dtype and the batched shape is right by construction.

This module is the only place that calls into the engine's op functions; they read a few fields of
the inference state (the default dtype, whether grad is recorded), given here as a small frozen view.
"""

from __future__ import annotations

import ast
from typing import Optional

from torchwise.analysis import ops
from torchwise.analysis.tensors import Call


class _State:
    """The fields of the inference state that op transfer functions read, fixed for one loop."""

    def __init__(self, inference, grad_enabled: Optional[bool]):
        self._inference = inference
        self.default_float = inference.default_float
        self.default_float_why = getattr(inference, "default_float_why", None)
        self.default_device = getattr(inference, "default_device", "cpu")
        self.grad_enabled = grad_enabled
        self.values = inference.values

    def set_default_dtype(self, *args, **kwargs) -> None:  # a factory in a loop body is never asked
        raise RuntimeError("the vectorizer never evaluates set_default_dtype")

    def call_instance(self, *args, **kwargs):
        return None  # user modules are not batched by the engine (vmap handles user functions)


class Oracle:
    def __init__(self, ctx, loop: ast.AST):
        grad = None if loop in getattr(ctx.facts, "grad_not_on", ()) else True
        self.state = _State(ctx.facts, grad)

    @property
    def default_float(self):
        return self.state.default_float

    def binary(self, node: ast.BinOp, left, right):
        return _safe(lambda: ops.binary(self.state, node, node.op, left, right))

    def compare(self, node: ast.Compare, left, right):
        return _safe(lambda: ops.compare(self.state, node, [left, right]))

    def unary(self, node: ast.UnaryOp, value):
        return _safe(lambda: ops.unary(self.state, node, value))

    def function(self, node: ast.Call, qualname: str, args: list, kwargs: dict):
        return _safe(lambda: ops.call_qualified(self.state, qualname, Call(node, args, kwargs, False, None)))

    def method(self, node: ast.Call, name: str, receiver, args: list, kwargs: dict):
        return _safe(lambda: ops.call_method(self.state, name, receiver, Call(node, args, kwargs, False, None)))

    def module(self, node: ast.Call, module, args: list):
        return _safe(lambda: ops.call_value(self.state, module, Call(node, args, {}, False, None)))

    def attribute(self, node: ast.Attribute, receiver):
        return _safe(lambda: ops.attribute(self.state, node, receiver))


def _safe(compute):
    """An engine function that fails on an input it was not written for knows nothing about it."""
    try:
        return compute()
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, ZeroDivisionError, RuntimeError):
        return None
