"""TW3xx (results): TW306, the result of an out-of-place tensor method thrown away."""

from __future__ import annotations

import ast
import re
import weakref
from typing import Iterator, Optional

from torchwise.analysis.scopes import Scope
from torchwise.analysis.values import TensorValue
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span
from torchwise.rules.base import Context, Invalid, Rule, Valid
from torchwise.rules.transfers import method_tail_span

# Element-wise math whose in-place twin is `<name>_` (each checked against torch.Tensor in the tests).
ARITHMETIC = frozenset({
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "pow", "remainder",
    "fmod", "clamp", "clamp_min", "clamp_max", "clip", "abs", "neg", "exp", "exp2", "expm1", "log", "log1p", "log2",
    "log10", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "floor", "ceil", "round", "trunc", "frac", "sign",
    "reciprocal", "sin", "cos", "square", "lerp", "addcmul", "addcdiv", "masked_fill", "index_fill", "index_add",
    "index_copy", "scatter", "scatter_add", "nan_to_num", "erf", "logit",
})
# Conversions, moves, copies, views and reductions: a new tensor, the receiver untouched. Written back
# by rebinding the name; their in-place twins (`t_`, `unsqueeze_`, `detach_`) change the shape or the
# autograd state of every alias, so they are never offered.
REBIND = frozenset({
    "to", "cuda", "cpu", "float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char",
    "type", "type_as", "contiguous", "clone", "detach", "pin_memory", "view", "view_as", "reshape", "reshape_as",
    "flatten", "unflatten", "squeeze", "unsqueeze", "t", "transpose", "permute", "expand", "expand_as", "repeat",
    "narrow", "flip", "roll", "movedim", "swapaxes", "swapdims", "softmax", "log_softmax", "sum", "mean",
})
OUT_OF_PLACE = ARITHMETIC | REBIND
_CELL_MARKER = re.compile(r"^\s*#\s*(%%|In\[)")
_EXPECTING = frozenset({"raises", "assertRaises", "assertRaisesRegex", "warns", "assertWarns", "assertWarnsRegex",
                        "deprecated_call"})
_CACHE: "weakref.WeakKeyDictionary[Context, dict]" = weakref.WeakKeyDictionary()


class DiscardedResult(Rule):
    code = "TW306"
    name = "discarded-result"
    severity = Severity.WARNING
    local = True  # inside a def or class: no statement is a cell's last, a `with pytest.raises` block is its own
    reads_around_at_module_level = True  # a `# %%` cell marker after the statement: a cell's last expression is shown
    summary = ("Flags a bare statement that calls an out-of-place tensor method and drops its result "
               "(`x.to(device)`, `x.float()`, `x.view(...)`, `x.add(1)`, `x.clamp(0, 1)`).")
    why = ("Tensor methods without a trailing underscore return a *new* tensor and leave the receiver as it was: "
           "`x.to(device)` on its own line does not move `x`, `x.add(1)` does not change it. The code reads as if "
           "it did, and the mistake surfaces later as a device or dtype error, or silently as unchanged values. "
           "(An `nn.Module`'s `.to()`/`.cuda()`/`.float()` do work in place and are never flagged.)")
    fix_summary = ("Assign it back: `x = x.to(device)`. For element-wise math with an in-place twin the first fix "
                   "is `x.add_(1)` when that is known to behave the same (same dtype and shape, no autograd leaf, "
                   "no expanded memory); otherwise assign-back comes first and the in-place form second.")
    node_types = (ast.Expr,)
    valid = (
        Valid("import torch\nx = torch.randn(3)\nx = x.float()\n"),
        Valid("import torch\nx = torch.randn(3)\nx.add_(1)\n"),
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 2)\nmodel.to(torch.float64)\n"),
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(3, 2)\n\n\nnet = Net()\nnet.cuda()\n"),
        Valid("def step(model, batch, device):\n    model.to(device)\n    batch.to(device)\n"),  # unknown receivers
        Valid("import torch\nx = torch.randn(3)\nx.requires_grad_()\n"),
        Valid("# %%\nimport torch\nx = torch.arange(6)\n# %%\nx.view(2, 3)\n"),  # a notebook cell shows its value
        Valid("import numpy as np\na = np.zeros(3)\na.astype(np.float32)\n"),  # not torch's business
        Valid("import torch\nx = torch.zeros(3)\nx.add_(1).clamp_(0, 1)\n"),
        Valid("import pytest\nimport torch\n\n\ndef test_view_of_transpose_raises():\n    x = torch.randn(3, 4).t()\n"
              "    with pytest.raises(RuntimeError):\n        x.view(12)\n"),  # run for its error
    )
    invalid = (
        Invalid("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                "x = torch.randn(4, 3)\nx.to(device)\n",
                "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                "x = torch.randn(4, 3)\nx = x.to(device)\n"),
        Invalid("import torch\n\n\ndef normalize(img: torch.Tensor):\n    img.float()\n    return img / 255\n",
                "import torch\n\n\ndef normalize(img: torch.Tensor):\n    img = img.float()\n    return img / 255\n"),
        Invalid("import torch\ncounts = torch.zeros(10)\nfor step in range(5):\n    counts.add(1)\n",
                "import torch\ncounts = torch.zeros(10)\nfor step in range(5):\n    counts.add_(1)\n"),
        Invalid("import torch\nprobs = torch.linspace(0, 1, 11)\nprobs.clamp(0.05, 0.95)  # keep away from 0 and 1\n",
                "import torch\nprobs = torch.linspace(0, 1, 11)\nprobs.clamp_(0.05, 0.95)  # keep away from 0 and 1\n"),
        Invalid("import torch\nh = torch.randn(2, 5, 16)\nh.view(10, 16)\nout = h @ torch.randn(16, 4)\n",
                "import torch\nh = torch.randn(2, 5, 16)\nh = h.view(10, 16)\nout = h @ torch.randn(16, 4)\n"),
        Invalid("import torch\nw = torch.randn(3, 3, requires_grad=True)\nw.mul(0.5)\n",
                "import torch\nw = torch.randn(3, 3, requires_grad=True)\nw = w.mul(0.5)\n"),
        Invalid("import torch\nlabels = torch.tensor([0, 1, 2])\nlabels.add(0.5)\n",
                "import torch\nlabels = torch.tensor([0, 1, 2])\nlabels = labels.add(0.5)\n"),  # add_ would raise
        Invalid("import torch\nfrom torch import nn\n\n\nclass Head(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.scale = torch.ones(4)\n\n"
                "    def forward(self, x):\n        self.scale.cuda()\n        return x * self.scale\n",
                "import torch\nfrom torch import nn\n\n\nclass Head(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.scale = torch.ones(4)\n\n"
                "    def forward(self, x):\n        self.scale = self.scale.cuda()\n        return x * self.scale\n"),
        Invalid("import torch\nx = torch.randn(2, 3)\nx.t().contiguous()\n",
                "import torch\nx = torch.randn(2, 3)\nx = x.t().contiguous()\n"),
        Invalid("import torch\nrows = [torch.zeros(2), torch.ones(2)]\nfor row in rows:\n    row.mul(2)\n",
                "import torch\nrows = [torch.zeros(2), torch.ones(2)]\nfor row in rows:\n    row.mul_(2)\n"),
        Invalid("import torch\nrows = [torch.zeros(2), torch.ones(2)]\nfor row in rows:\n    row.float()\n"),
        Invalid("import torch\ntorch.randn(3).cuda()\n"),  # nothing to assign back to
    )

    def check(self, node: ast.Expr, scope: Scope, ctx: Context) -> Iterator[Finding]:
        call = node.value
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            return
        method = call.func.attr
        if method not in OUT_OF_PLACE or scope.qualname(call.func) is not None:
            return
        if method == "type" and not (call.args or call.keywords):
            return  # `x.type()` returns the type's name
        receiver = ctx.value(call.func.value)
        if not isinstance(receiver, TensorValue) or _shows_value(node, ctx) or node in _expecting_errors(ctx):
            return
        target = _assignable_root(call)
        target_text = ctx.source.text_of(ctx.source.span(target)) if target is not None else None
        if isinstance(target, ast.Attribute) and _root_value(ctx, target) is not None \
                and _root_value(ctx, target).requires_grad is not False:
            target_text = None  # may be an nn.Parameter: assigning a plain tensor to it raises
        if isinstance(target, ast.Name) and _is_loop_variable(target.id, scope):
            target_text = None  # `for t in batch: t = t.to(device)` would still change nothing
        shown = _short(ctx.source.text_of(ctx.source.span(target if target is not None else call.func.value)))
        message = f"`.{method}()` returns a new tensor and its result is thrown away: `{shown}` is unchanged"
        fixes = []
        if target_text is not None:
            start = ctx.source.span(node).start
            fixes.append(Fix(f"Assign it back: `{target_text} = {target_text}.{method}(...)`",
                             lambda: [Edit(Span(start, start), f"{target_text} = ")]))
        inplace = self._inplace(call, receiver, ctx) if method in ARITHMETIC and call.func.value is target else None
        if inplace is not None:
            name_span = _attribute_name_span(ctx, call.func)
            fix = Fix(f"Do it in place: `.{method}_(...)`", lambda: [Edit(name_span, f"{method}_")])
            if inplace:
                fixes.insert(0, fix)
            else:
                fixes.append(fix)
        if fixes:
            fixes[0].preferred = True
        # Underlined at the method and its call (`to(device)`), where the other placement rules underline it.
        yield Finding(self.code, message, self.severity, method_tail_span(ctx, call), fixes)

    @staticmethod
    def _inplace(call: ast.Call, receiver: TensorValue, ctx: Context) -> Optional[bool]:
        """True: the in-place twin certainly behaves the same; False: unsure; None: it would (or may well) raise."""
        result = ctx.value(call)
        if isinstance(result, TensorValue):
            if result.dtype is not None and receiver.dtype is not None and result.dtype != receiver.dtype:
                return None  # `int_tensor.add_(0.5)` raises: the result type cannot be cast back
            if result.shape is not None and receiver.shape is not None and result.shape != receiver.shape:
                return None  # broadcasting grew the result: the in-place op raises
        if receiver.requires_grad is True and receiver.is_leaf is not False:
            return None  # an in-place op on a leaf that requires grad raises
        certain = (isinstance(result, TensorValue) and result.dtype is not None and result.dtype == receiver.dtype
                   and result.shape is not None and result.shape == receiver.shape
                   and receiver.requires_grad is False and receiver.strides is not None
                   and all(stride != 0 or size == 1 for stride, size in zip(receiver.strides, receiver.shape))
                   and not (receiver.memory or "").startswith("shares"))
        return certain


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _assignable_root(call: ast.Call) -> Optional[ast.expr]:
    """``x`` (or ``self.x``) at the root of ``x.float().cuda()`` when every step is out-of-place; else None."""
    node = call.func.value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in OUT_OF_PLACE:
        node = node.func.value
    if isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return node
    return None


def _is_loop_variable(name: str, scope: Scope) -> bool:
    return any(isinstance(b.node, (ast.For, ast.AsyncFor, ast.comprehension)) for b in scope.bindings_of(name))


def _root_value(ctx: Context, node: ast.AST) -> Optional[TensorValue]:
    value = ctx.value(node)
    return value if isinstance(value, TensorValue) else None


def _attribute_name_span(ctx: Context, attribute: ast.Attribute) -> Span:
    end = ctx.source.span(attribute).end
    return Span(Position(end.line, end.col - len(attribute.attr)), end)


def _file_cache(ctx: Context) -> dict:
    cache = _CACHE.get(ctx)
    if cache is None:
        cache = _CACHE[ctx] = {}
    return cache


def _expecting_errors(ctx: Context) -> set:
    """Statements inside `with pytest.raises(...)` / `self.assertRaises(...)` (or warns): run for their error."""
    cache = _file_cache(ctx)
    if "expecting" not in cache:
        cache["expecting"] = frozenset().union(*ctx.per_statement("results.expecting", _expecting_in))
    return cache["expecting"]


def _expecting_in(top: ast.stmt) -> frozenset:
    inside: set = set()
    for node in ast.walk(top):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                isinstance(item.context_expr, ast.Call) and _callee_name(item.context_expr) in _EXPECTING
                for item in node.items):
            for stmt in node.body:
                inside.update(n for n in ast.walk(stmt) if isinstance(n, ast.Expr))
    return frozenset(inside)


def _callee_name(call: ast.Call) -> Optional[str]:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _shows_value(stmt: ast.Expr, ctx: Context) -> bool:
    """In a notebook-style file (`# %%` cells), a cell's last bare expression is displayed, not thrown away.

    A Jupyter notebook reaches the rules as its cells joined into one module, without their boundaries:
    there, every top-level bare expression may be a cell's last, so none is flagged.
    """
    if ctx.source.path.endswith(".ipynb"):
        return stmt in ctx.tree.body
    lines = ctx.source.lines
    cache = _file_cache(ctx)
    if "markers" not in cache:
        cache["markers"] = [i for i, line in enumerate(lines) if _CELL_MARKER.match(line)]
    markers = cache["markers"]
    if not markers:
        return False
    body = ctx.tree.body
    if stmt not in body:
        return False
    index = body.index(stmt)
    if index + 1 == len(body):
        return True  # the last cell's last expression
    after, next_start = stmt.end_lineno, body[index + 1].lineno - 1  # 0-based lines between the two
    return any(after <= marker < next_start for marker in markers)


RULES = (DiscardedResult,)
