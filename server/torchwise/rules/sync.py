"""TW203: host<->device transfers and syncs inside loops."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from torchwise.analysis.scopes import Scope
from torchwise.analysis.values import TensorValue
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span
from torchwise.rules.base import Context, Invalid, Rule, Valid

_TRANSFERS = frozenset({"cpu", "cuda", "to", "item", "numpy", "tolist"})
_MOVES = frozenset({"cpu", "cuda", "to"})
_CONVERSIONS = frozenset({"float", "int", "bool"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _own_nodes(body: list) -> Iterator[ast.AST]:
    """The nodes of a loop body, not those of nested loops (they are checked on their own) or scopes."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, _LOOPS + _SCOPES):
            continue
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _assigned(loop: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") \
                and isinstance(node.func.value, ast.Name):
            names.add(node.func.value.id)  # changed in place
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, (ast.Subscript, ast.Attribute)):
                    root = target.value
                    while isinstance(root, (ast.Subscript, ast.Attribute)):
                        root = root.value
                    if isinstance(root, ast.Name):
                        names.add(root.id)
    return names


def _plain(expr: ast.AST) -> bool:
    """``w`` or ``self.w``: a name, not a computation that could give a new value each time."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


def _names(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def _is_tensor(ctx: Context, node: ast.AST) -> bool:
    return isinstance(ctx.value(node), TensorValue)


def _element_loop(loop: ast.AST, ctx: Context) -> bool:
    """A loop over a tensor's elements or indices: `for x in t`, `for i in range(len(t))`, `t[i]` in the body."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    iterable = loop.iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
            and iterable.args:
        iterable = iterable.args[0]
    if _is_tensor(ctx, iterable):
        return True
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"):
        return False
    for arg in iterable.args:
        for node in ast.walk(arg):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
                    and node.args and _is_tensor(ctx, node.args[0]):
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("size", "numel") and _is_tensor(ctx, node.func.value):
                return True
            if isinstance(node, ast.Attribute) and node.attr == "shape" and _is_tensor(ctx, node.value):
                return True
    if isinstance(loop.target, ast.Name):
        index = loop.target.id
        for node in _own_nodes(loop.body):
            if isinstance(node, ast.Subscript) and _is_tensor(ctx, node.value) and index in _names(node.slice):
                return True
    return False


def _transfer(node: ast.AST, ctx: Context) -> Optional[ast.expr]:
    """The tensor a call moves or reads back to the host, if it is one."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _TRANSFERS and _is_tensor(ctx, func.value):
        if func.attr == "to" and not _moves_device(node, ctx):
            return None
        return func.value
    if isinstance(func, ast.Name) and func.id in _CONVERSIONS and len(node.args) == 1 \
            and _is_tensor(ctx, node.args[0]):
        return node.args[0]
    return None


def _moves_device(call: ast.Call, ctx: Context) -> bool:
    """``.to(device)`` rather than ``.to(torch.float16)``."""
    from torchwise.analysis.values import DeviceValue, ScalarValue

    for value in [ctx.value(a) for a in call.args] + [ctx.value(k.value) for k in call.keywords if k.arg == "device"]:
        if isinstance(value, DeviceValue) or (isinstance(value, ScalarValue) and value.kind == "str"):
            return True
    return any(isinstance(a, ast.Name) and "device" in a.id for a in call.args)


class TransferInLoop(Rule):
    local = True
    code = "TW203"
    name = "transfer-in-loop"
    severity = Severity.WARNING
    summary = ("Flags host<->device transfers and syncs (`.cpu()`, `.cuda()`, `.to(device)`, `.item()`, "
               "`.numpy()`, `.tolist()`, `float(t[i])`) inside a loop over a tensor's elements, and transfers of "
               "a value that does not change in any loop.")
    why = ("Each transfer waits for the device and crosses the PCIe bus: once per element, a loop that should "
           "take microseconds takes seconds. A transfer of a loop-invariant value repeats the same copy on every "
           "iteration. The once-per-step `loss.item()` of a training loop is fine and is not flagged.")
    fix_summary = "For a loop-invariant value: move it once, before the loop. Per-element transfers need a vectorized rewrite (see TW4xx)."
    node_types = (ast.For, ast.AsyncFor, ast.While)
    valid = (
        Valid("import torch\nfrom torch.utils.data import DataLoader\n\n\ndef train(model, loader: DataLoader, opt):\n"
              "    running = 0.0\n    for x, y in loader:\n        loss = model(x).sum()\n        opt.step()\n"
              "        running += loss.item()\n    return running\n"),
        Valid("import torch\nscores = torch.randn(8)\ntotal = scores.sum().item()\n"),
        Valid("import torch\ndevice = torch.device('cuda')\nfor epoch in range(3):\n    batch = torch.randn(4, 3)\n"
              "    batch = batch.to(device)\n"),
        Valid("import torch\nt = torch.randn(5)\nfor i in range(3):\n    t = t * 2\n    print(t.sum().item())\n"),
    )
    invalid = (
        Invalid("import torch\nscores = torch.randn(100)\nbest = []\nfor s in scores:\n    best.append(s.item())\n"),
        Invalid("import torch\nx = torch.randn(50, 3)\nrows = []\nfor i in range(len(x)):\n"
                "    rows.append(x[i].cpu())\n"),
        Invalid("import torch\nvalues = torch.randn(20)\ntotal = 0.0\nfor i in range(values.shape[0]):\n"
                "    total += float(values[i])\n"),
        Invalid("import torch\nw = torch.randn(16, 16)\nfor step in range(100):\n    x = torch.randn(8, 16).cuda()\n"
                "    y = x @ w.cuda()\n",
                "import torch\nw = torch.randn(16, 16)\nw_cuda = w.cuda()\nfor step in range(100):\n"
                "    x = torch.randn(8, 16).cuda()\n    y = x @ w_cuda\n"),
    )

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        per_element = _element_loop(node, ctx)
        assigned = None
        for inner in _own_nodes(node.body):
            moved = _transfer(inner, ctx)
            if moved is None:
                continue
            text = ctx.source.text_of(ctx.source.span(inner))
            if per_element:
                yield self.finding(ctx, inner, f"`{_short(text)}` inside a loop over tensor elements: one host/device "
                                               "sync per element; vectorize the loop")
                continue
            if assigned is None:
                assigned = _assigned(node)
            if not isinstance(inner.func, ast.Attribute) or inner.func.attr not in _MOVES:
                continue
            if not _plain(inner.func.value) or _names(inner) & assigned:
                continue  # the value (or the device) may change in the loop
            yield self.finding(ctx, inner, f"`{_short(text)}` moves the same tensor on every iteration; move it "
                                           "once before the loop", self._hoist(ctx, scope, node, inner))

    def _hoist(self, ctx: Context, scope: Scope, loop: ast.AST, call: ast.Call) -> list[Fix]:
        receiver = call.func.value
        base = receiver.id if isinstance(receiver, ast.Name) else receiver.attr \
            if isinstance(receiver, ast.Attribute) else None
        if base is None:
            return []
        name = f"{base}_{ {'cuda': 'cuda', 'cpu': 'cpu'}.get(call.func.attr, 'moved') }"
        if scope.owner_of(name) is not None or name in ctx.source.text:
            return []
        loop_span = ctx.source.span(loop)
        indent = ctx.source.lines[loop_span.start.line][:loop_span.start.col]
        if indent.strip():
            return []
        text = ctx.source.text_of(ctx.source.span(call))
        at = Position(loop_span.start.line, 0)
        return [Fix(f"Move it once before the loop (`{name} = {_short(text)}`)", lambda: [
            Edit(Span(at, at), f"{indent}{name} = {text}\n"),
            Edit(ctx.source.span(call), name),
        ], preferred=True)]


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


RULES = (TransferInLoop,)
