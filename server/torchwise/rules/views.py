"""TW3xx (views and memory): TW301, a `.view` PyTorch cannot satisfy without a copy."""

from __future__ import annotations

import ast
from typing import Iterator

from torchwise.analysis import layout, shapes
from torchwise.analysis.dims import readable_shape
from torchwise.analysis.scopes import Scope
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span
from torchwise.rules.base import Context, Invalid, Rule, Valid
from torchwise.rules.shapes import _requested_shape, tensor


class ViewNeedsCopy(Rule):
    local = True
    call_names = frozenset({"view"})
    code = "TW301"
    name = "view-needs-copy"
    severity = Severity.ERROR
    runtime_error = True
    summary = "Flags `.view(...)` on a tensor whose memory layout cannot be viewed in the requested shape."
    why = ("`view` never copies: it re-reads the same memory with new strides, which is only possible when "
           "the dimensions it merges are laid out one after the other. After `transpose`, `permute`, `.t()`, "
           "`expand` or a step slice they often are not, and PyTorch raises `view size is not compatible with "
           "input tensor's size and stride`. Non-contiguous is not enough to fail: `x.t().view(4, 3)` works, "
           "`x.transpose(0, 1).view(12)` raises; torchwise decides with PyTorch's own stride rule.")
    fix_summary = ("`.reshape(...)` (views when it can, copies when it must); second action: "
                   "`.contiguous().view(...)` (always copies here).")
    valid = (
        Valid("import torch\nx = torch.randn(3, 4)\ny = x.t().view(4, 3)\n"),
        Valid("import torch\nx = torch.randn(3, 4)\ny = x.transpose(0, 1).view(2, 2, 3)\n"),
        Valid("import torch\nx = torch.randn(3, 4)\ny = x.transpose(0, 1).contiguous().view(12)\n"),
        Valid("import torch\ndef f(x):\n    return x.transpose(0, 1).view(-1)\n"),
        Valid("import torch\nx = torch.randn(4, 6)\ny = x[:, ::2].view(-1)\n"),  # stride 2 throughout: viewable
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(3, 4)\ny = x.transpose(0, 1).view(12)\n",
                "import torch\nx = torch.randn(3, 4)\ny = x.transpose(0, 1).reshape(12)\n"),
        Invalid("import torch\nq = torch.randn(2, 8, 4, 16)\nout = q.permute(0, 2, 1, 3).view(2, 4, -1)\n",
                "import torch\nq = torch.randn(2, 8, 4, 16)\nout = q.permute(0, 2, 1, 3).reshape(2, 4, -1)\n"),
        Invalid("import torch\nx = torch.randn(4, 6)\ny = x[::2].view(-1)\n",
                "import torch\nx = torch.randn(4, 6)\ny = x[::2].reshape(-1)\n"),
        Invalid("import torch\nrow = torch.randn(1, 5)\ngrid = row.expand(3, 5).view(15)\n",
                "import torch\nrow = torch.randn(1, 5)\ngrid = row.expand(3, 5).reshape(15)\n"),
        # The attention bug: heads transposed back, then viewed. Works only for T == 1 (or B == 0).
        Invalid("import torch\n\n\ndef merge_heads(B: int, T: int):\n    y = torch.randn(B, 12, T, 64)\n"
                "    return y.transpose(1, 2).view(B, T, 768)\n\n\nmerge_heads(2, 5)\n",
                "import torch\n\n\ndef merge_heads(B: int, T: int):\n    y = torch.randn(B, 12, T, 64)\n"
                "    return y.transpose(1, 2).reshape(B, T, 768)\n\n\nmerge_heads(2, 5)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "view" and scope.qualname(func) is None):
            return
        value = tensor(ctx, func.value)
        requested = _requested_shape(ctx, node.args)
        if value is None or value.shape is None or value.strides is None or requested is None:
            return
        try:
            target = shapes.reshape(value.shape, requested)
        except shapes.ShapeError:
            return  # a size mismatch is TW503's
        if target is None:
            return
        note = ""
        if layout.view_strides(value.shape, value.strides, target) is not None:
            # Undecided for every size (a batch of 1 would work): decide for sizes above 1, where real data is.
            if layout.view_strides(value.shape, value.strides, target, nondegenerate=True) is not None:
                return  # viewable, or undecided
            note = " whenever its symbolic sizes are above 1"
        strides = ", ".join(str(s) for s in value.strides)
        message = (f"`.view{readable_shape(target) if len(target) != 1 else f'({target[0]})'}` needs a copy{note}: the "
                   f"input {readable_shape(value.shape)} has strides ({strides}); use `.reshape(...)` or "
                   "`.contiguous().view(...)`")
        name_span = _attribute_name_span(ctx, func)
        fixes = [
            Fix("Use `.reshape(...)` (copies only when it must)", lambda: [Edit(name_span, "reshape")],
                preferred=True),
            Fix("Use `.contiguous().view(...)` (copies)", lambda: [Edit(name_span, "contiguous().view")]),
        ]
        yield Finding(self.code, message, self.severity, _call_or_tail(ctx, node), fixes)


def _call_or_tail(ctx: Context, call: ast.Call) -> Span:
    """The call when it fits on its line, else `view(...)` alone (a chain spread over lines is not all wrong)."""
    span = ctx.source.span(call)
    if span.start.line == span.end.line:
        return span
    return Span(_attribute_name_span(ctx, call.func).start, span.end)


def _attribute_name_span(ctx: Context, attribute: ast.Attribute) -> Span:
    """The span of ``attr`` in ``value.attr``: it always ends the attribute node."""
    end = ctx.source.span(attribute).end
    return Span(Position(end.line, end.col - len(attribute.attr)), end)


RULES = (ViewNeedsCopy,)
