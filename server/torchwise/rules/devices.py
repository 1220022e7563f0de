"""TW2xx: devices. TW204, operands known to live on different devices."""

from __future__ import annotations

import ast
from typing import Iterator

from torchwise.analysis.ops import same_device
from torchwise.analysis.scopes import Scope
from torchwise.findings import Finding, Fix, Severity
from torchwise.rules.base import Context, Invalid, Rule, Valid
from torchwise.rules.shapes import _matmul_operands, operands, postfix, rewrite_operand, tensor


class MixedDevices(Rule):
    local = True
    code = "TW204"
    name = "mixed-devices"
    severity = Severity.ERROR
    summary = "Flags an operation whose tensor operands are known to be on different devices."
    why = ("PyTorch never moves data implicitly between devices: `cuda_tensor + cpu_tensor` raises `Expected all "
           "tensors to be on the same device`. The exception is a 0-d CPU tensor (a scalar), which may join any "
           "device. Usually a freshly created tensor was not given `device=`.")
    fix_summary = "Move the CPU operand: `y.to(x.device)`."
    node_types = (ast.BinOp, ast.Compare, ast.Call)
    valid = (
        Valid("import torch\na = torch.randn(3, device='cuda')\nb = torch.randn(3, device='cuda')\nc = a + b\n"),
        Valid("import torch\na = torch.randn(3, device='cuda')\nc = a * torch.tensor(2.0)\n"),
        Valid("import torch\na = torch.randn(3, device='cuda')\nb = torch.randn(3, device='cuda:0')\nc = a + b\n"),
        Valid("import torch\ndef f(x):\n    return x + torch.ones(3)\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(4, 3, device='cuda')\nnoise = torch.randn(4, 3)\ny = x + noise\n",
                "import torch\nx = torch.randn(4, 3, device='cuda')\nnoise = torch.randn(4, 3)\n"
                "y = x + noise.to(x.device)\n"),
        Invalid("import torch\nw = torch.randn(3, 2).cuda()\nx = torch.randn(5, 3)\ny = x @ w\n",
                "import torch\nw = torch.randn(3, 2).cuda()\nx = torch.randn(5, 3)\ny = x.to(w.device) @ w\n"),
    )

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        found = _matmul_operands(node, scope, ctx)
        pair = (found[1], found[2]) if found else operands(node, scope)
        if pair is None:
            return
        left, right = (tensor(ctx, n) for n in pair)
        if left is None or right is None or left.shape is None or right.shape is None:
            return
        if (left.shape == () and left.device == "cpu") or (right.shape == () and right.device == "cpu"):
            if not found:
                return  # a 0-d CPU tensor joins any device in element-wise ops
        if same_device(left.device, right.device) is not False:
            return
        fixes = []
        cpu = 0 if left.device == "cpu" else 1 if right.device == "cpu" else None
        if cpu is not None and isinstance(pair[1 - cpu], (ast.Name, ast.Attribute)):
            other = ctx.source.text_of(ctx.source.span(pair[1 - cpu]))
            suffix = f".to({other}.device)"
            fixes.append(Fix(f"Move it with `{postfix(ctx, pair[cpu], suffix)}`",
                             lambda: [rewrite_operand(ctx, pair[cpu], suffix)], preferred=True))
        yield self.finding(ctx, node, f"operands on different devices: {left.device} and {right.device}", fixes)


RULES = (MixedDevices,)
