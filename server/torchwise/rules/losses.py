"""TW509, TW510: a loss given a target of another shape than its input.

A loss compares each prediction with its target, so the two must line up. Where they do not, PyTorch either
raises (class indices of the wrong shape, `binary_cross_entropy` of another size) or, for the element-wise
losses, broadcasts with only a warning: `mse_loss` of a `(N, 1)` output and a `(N,)` target compares every
prediction with every target, and the loss is silently wrong. Both rules decide on known shapes only, with the
checks PyTorch makes (`torch/nn/functional.py`); tests/test_truth_losses.py compares them with real torch.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from torchwise.analysis import dims, dtypes, shapes
from torchwise.analysis.dims import readable_shape
from torchwise.analysis.dtypes import DType
from torchwise.analysis.scopes import Scope
from torchwise.analysis.values import ModuleValue, TensorValue
from torchwise.findings import Finding, Fix, Severity
from torchwise.rules import edits
from torchwise.rules.base import Context, Invalid, Rule, Valid

# The functional losses these rules know, and the module class of each.
ELEMENTWISE = {"mse_loss": "MSELoss", "l1_loss": "L1Loss", "smooth_l1_loss": "SmoothL1Loss", "huber_loss": "HuberLoss"}
SAME_SIZE = {"binary_cross_entropy": "BCELoss", "binary_cross_entropy_with_logits": "BCEWithLogitsLoss"}
CLASSES = {"cross_entropy": "CrossEntropyLoss", "nll_loss": "NLLLoss"}
_BY_MODULE = {module: name for table in (ELEMENTWISE, SAME_SIZE, CLASSES) for name, module in table.items()}
_FUNCTIONAL = "torch.nn.functional."
_CALL_NAMES = frozenset(ELEMENTWISE) | frozenset(SAME_SIZE) | frozenset(CLASSES)

_IMPORTS = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def loss_call(node: ast.Call, scope: Scope, ctx: Context) -> Optional[tuple[str, ast.AST, ast.AST]]:
    """``(functional name, input, target)`` of a call of a known loss (``F.mse_loss(a, b)``, a loss module's
    call ``criterion(a, b)``), its arguments as written; None for anything else."""
    qualname = scope.qualname(node.func)
    if qualname is not None and qualname.startswith(_FUNCTIONAL) and qualname[len(_FUNCTIONAL):] in _CALL_NAMES:
        name = qualname[len(_FUNCTIONAL):]
    else:
        module = ctx.value(node.func)
        if not isinstance(module, ModuleValue) or module.kind not in _BY_MODULE:
            return None
        name = _BY_MODULE[module.kind]
    keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    args = list(node.args[:2]) + [keywords.get(k) for k in ("input", "target")[len(node.args[:2]):]]
    return (name, args[0], args[1]) if len(args) == 2 and None not in args else None


def _same_shape(a: tuple, b: tuple) -> Optional[bool]:
    """True: certainly the same shape; False: certainly not; None: it depends on sizes not known."""
    if len(a) != len(b):
        return False
    verdicts = [dims.dim_eq(x, y) for x, y in zip(a, b)]
    return False if False in verdicts else True if all(verdicts) else None


def _class_target_shape(x: tuple) -> tuple:
    """The shape of class indices ``cross_entropy`` / ``nll_loss`` take for an input of shape ``x``."""
    return (x[0], *x[2:]) if len(x) >= 2 else ()


def _trailing_one_fix(ctx: Context, target_node: ast.AST, target: tuple, wanted: tuple) -> list[Fix]:
    """``target.squeeze(-1)`` / ``target.unsqueeze(-1)`` where the two shapes differ by one trailing 1 only."""
    if len(target) == len(wanted) + 1 and dims.dim_eq(target[-1], 1) is True \
            and _same_shape(target[:-1], wanted) is True:
        suffix, what = ".squeeze(-1)", "Drop the target's trailing size-1 dim: `.squeeze(-1)`"
    elif len(wanted) == len(target) + 1 and dims.dim_eq(wanted[-1], 1) is True \
            and _same_shape(wanted[:-1], target) is True:
        suffix, what = ".unsqueeze(-1)", "Give the target the input's trailing size-1 dim: `.unsqueeze(-1)`"
    else:
        return []
    return [Fix(what, lambda: [edits.replace_node(ctx.source, target_node,
                                                  edits.postfix(ctx.source, target_node, suffix))], preferred=True)]


def _shapes(ctx: Context, input_node: ast.AST, target_node: ast.AST):
    x, target = ctx.value(input_node), ctx.value(target_node)
    if not isinstance(x, TensorValue) or not isinstance(target, TensorValue) or x.shape is None \
            or target.shape is None:
        return None
    return x, target


class LossTargetMismatch(Rule):
    local = True
    code = "TW509"
    name = "loss-target-mismatch"
    severity = Severity.ERROR
    runtime_error = True
    summary = ("Flags a loss whose target cannot fit its input: class indices for `cross_entropy` / `nll_loss` "
               "(`nn.CrossEntropyLoss`, `nn.NLLLoss`) not of shape `(N, d1, ...)` for an input `(N, C, d1, ...)`, "
               "a `binary_cross_entropy` (`_with_logits`) target of another size, or an element-wise loss "
               "(`mse_loss`, `l1_loss`, `smooth_l1_loss`, `huber_loss`) of shapes that do not broadcast.")
    why = ("Class indices have one number per sample, not a column: a `(N, 1)` target from `labels.view(-1, 1)` or "
           "a dataset that returns `[label]` makes `cross_entropy` raise `0D or 1D target tensor expected, "
           "multi-target not supported`. `binary_cross_entropy` raises `Target size (...) must be the same as input "
           "size (...)`.")
    fix_summary = "Where the shapes differ by one trailing size-1 dim: `target.squeeze(-1)` / `target.unsqueeze(-1)`."
    valid = (
        Valid(_IMPORTS + "logits = torch.randn(8, 10)\nlabels = torch.randint(0, 10, (8,))\n"
              "loss = F.cross_entropy(logits, labels)\n"),
        Valid(_IMPORTS + "logits = torch.randn(4, 5, 7)\nlabels = torch.randint(0, 5, (4, 7))\n"
              "loss = nn.CrossEntropyLoss()(logits, labels)\n"),
        # Probabilities as the target: the input's own shape.
        Valid(_IMPORTS + "logits = torch.randn(8, 10)\nprobs = torch.softmax(torch.randn(8, 10), dim=1)\n"
              "loss = F.cross_entropy(logits, probs)\n"),
        Valid(_IMPORTS + "out = torch.randn(8, 1)\ny = torch.rand(8, 1)\nloss = nn.BCEWithLogitsLoss()(out, y)\n"),
    )
    invalid = (
        Invalid(_IMPORTS + "logits = torch.randn(8, 10)\nlabels = torch.randint(0, 10, (8, 1))\n"
                "loss = F.cross_entropy(logits, labels)\n",
                _IMPORTS + "logits = torch.randn(8, 10)\nlabels = torch.randint(0, 10, (8, 1))\n"
                "loss = F.cross_entropy(logits, labels.squeeze(-1))\n"),
        Invalid(_IMPORTS + "criterion = nn.NLLLoss()\nlog_probs = torch.log_softmax(torch.randn(8, 10), dim=1)\n"
                "loss = criterion(log_probs, torch.randint(0, 10, (4,)))\n"),
        Invalid(_IMPORTS + "out = torch.randn(8)\ny = torch.rand(8, 1)\nloss = nn.BCEWithLogitsLoss()(out, y)\n",
                _IMPORTS + "out = torch.randn(8)\ny = torch.rand(8, 1)\n"
                "loss = nn.BCEWithLogitsLoss()(out, y.squeeze(-1))\n"),
        Invalid(_IMPORTS + "pred = torch.randn(8, 3)\ntarget = torch.randn(8, 4)\nloss = F.mse_loss(pred, target)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        found = loss_call(node, scope, ctx)
        known = found and _shapes(ctx, found[1], found[2])
        if not known:
            return
        name, _, target_node = found
        x, target = known
        message, wanted = _misfit(name, x, target)
        if message is not None:
            yield self.finding(ctx, node, message, _trailing_one_fix(ctx, target_node, target.shape, wanted))


def _misfit(name: str, x: TensorValue, target: TensorValue) -> tuple[Optional[str], tuple]:
    """Where PyTorch certainly raises on this input and target: (its complaint, the target shape it wanted)."""
    if name in CLASSES:
        if target.dtype in (DType.int64, DType.uint8):
            wanted = _class_target_shape(x.shape)
            # (an unbatched input, of one dim, takes a target of shape () or (1,): not decided here)
            if len(x.shape) >= 2 and _same_shape(target.shape, wanted) is False:
                return (f"`{name}` takes class indices of shape {readable_shape(wanted)} for input {readable_shape(x.shape)} "
                        f"(one per sample), but the target is {readable_shape(target.shape)}"), wanted
        elif name == "cross_entropy" and target.dtype is not None and dtypes.is_floating(target.dtype) \
                and _same_shape(target.shape, x.shape) is False:
            return (f"`{name}` with probabilities as the target needs the input's shape {readable_shape(x.shape)}, "
                    f"but the target is {readable_shape(target.shape)}"), x.shape
        return None, ()
    if name in SAME_SIZE:
        if _same_shape(target.shape, x.shape) is False:
            return (f"`{name}` needs a target of the input's size {readable_shape(x.shape)}, but the target is "
                    f"{readable_shape(target.shape)}"), x.shape
        return None, ()
    try:
        shapes.broadcast(x.shape, target.shape)
    except shapes.ShapeError as err:
        return f"`{name}` of input {readable_shape(x.shape)} and target {readable_shape(target.shape)}: {err.message}", x.shape
    return None, ()


class LossTargetBroadcast(Rule):
    local = True
    code = "TW510"
    name = "loss-target-broadcast"
    severity = Severity.WARNING
    summary = ("Flags an element-wise loss (`mse_loss`, `l1_loss`, `smooth_l1_loss`, `huber_loss`, their `nn` "
               "modules) whose input and target have different shapes that broadcast: the loss is computed over "
               "the broadcast shape, not element by element.")
    why = ("`F.mse_loss(model(x), y)` with an output of shape `(N, 1)` and a target of shape `(N,)` broadcasts them "
           "to `(N, N)`: every prediction is compared with every target, the loss is silently wrong and training "
           "stalls. PyTorch only warns (`Using a target size ... that is different to the input size`), and the "
           "warning is easy to miss in a training log.")
    fix_summary = "Where the shapes differ by one trailing size-1 dim: `target.unsqueeze(-1)` / `target.squeeze(-1)`."
    valid = (
        Valid(_IMPORTS + "pred = torch.randn(8, 1)\ny = torch.randn(8, 1)\nloss = F.mse_loss(pred, y)\n"),
        Valid(_IMPORTS + "pred = torch.randn(8)\ny = torch.randn(8)\nloss = nn.L1Loss()(pred, y)\n"),
    )
    invalid = (
        Invalid(_IMPORTS + "pred = torch.randn(8, 1)\ny = torch.randn(8)\nloss = F.mse_loss(pred, y)\n",
                _IMPORTS + "pred = torch.randn(8, 1)\ny = torch.randn(8)\nloss = F.mse_loss(pred, y.unsqueeze(-1))\n"),
        Invalid(_IMPORTS + "criterion = nn.MSELoss()\nout = torch.randn(16)\ntarget = torch.randn(16, 1)\n"
                "loss = criterion(out, target)\n",
                _IMPORTS + "criterion = nn.MSELoss()\nout = torch.randn(16)\ntarget = torch.randn(16, 1)\n"
                "loss = criterion(out, target.squeeze(-1))\n"),
        Invalid(_IMPORTS + "pred = torch.randn(4, 3)\nscale = torch.randn(3)\nloss = F.smooth_l1_loss(pred, scale)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        found = loss_call(node, scope, ctx)
        if not found or found[0] not in ELEMENTWISE:
            return
        known = _shapes(ctx, found[1], found[2])
        if not known:
            return
        name, _, target_node = found
        x, target = known
        if _same_shape(x.shape, target.shape) is not False:
            return
        try:
            both = shapes.broadcast(x.shape, target.shape)
        except shapes.ShapeError:
            return  # it raises: TW509's
        yield self.finding(ctx, node, (
            f"`{name}` of input {readable_shape(x.shape)} and target {readable_shape(target.shape)} broadcasts them to "
            f"{readable_shape(both)}: the loss is not taken element by element; give them one shape"),
            _trailing_one_fix(ctx, target_node, target.shape, x.shape))


RULES = (LossTargetMismatch, LossTargetBroadcast)
