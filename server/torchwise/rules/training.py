"""TW7xx: training and loading. TW701/TW702 a loss fed what it computes itself (a double softmax, a double
sigmoid), TW703 evaluating a model in training mode, TW704 gradients never cleared, TW705 `torch.load` without
`weights_only=`.

These rules read the structure of the code and what names are bound to (`criterion = nn.CrossEntropyLoss()`,
`model = Net()`), not the shapes: real training code sits in functions whose parameters nobody annotates.
"""

from __future__ import annotations

import ast
import weakref
from typing import Iterator, Optional

from torchwise import incremental
from torchwise.analysis.scopes import Scope, ScopeKind
from torchwise.analysis.values import ModuleValue
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span
from torchwise.rules import edits
from torchwise.rules.base import Context, Invalid, Reach, Rule, Valid
from torchwise.rules.sync import holds, own_code

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_CACHE: "weakref.WeakKeyDictionary[Context, dict]" = weakref.WeakKeyDictionary()
# Methods that hand back the module itself: `Net().to(device)` is still the Net.
_SAME_MODULE = frozenset({"to", "cuda", "cpu", "train", "float", "half", "double", "bfloat16", "requires_grad_"})


def _cache(ctx: Context) -> dict:
    cache = _CACHE.get(ctx)
    if cache is None:
        cache = _CACHE[ctx] = {}
    return cache


def _body(scope: Scope) -> list:
    """The statements of the function (or module, or class) that owns ``scope``."""
    body = getattr(scope.node, "body", [])
    return body if isinstance(body, list) else []


def _around(ctx: Context, node: ast.AST, kinds: tuple) -> list:
    """The statements of ``kinds`` in the code of the def (or class, or module) ``node`` is in that hold it,
    outermost first: a walk up from the node (a search of the scope per node is quadratic at module level)."""
    return [stmt for stmt in ctx.statements_around(node) if isinstance(stmt, kinds)]


def _calls_named(ctx: Context):
    """The last names of everything the file calls (`backward`, `step`, `CrossEntropyLoss`), counted by the index:
    a rule whose calls are absent from the file has nothing to look at."""
    return ctx.index.callee_names.keys()


def _trains(ctx: Context) -> bool:
    names = _calls_named(ctx)
    return "backward" in names and "step" in names


def _own_calls(ctx: Context, scope: Scope) -> list:
    """The calls of a scope's own code, listed once per analysis; the module's, one top-level statement at a time
    (kept with it), in the order of a walk down from the last."""
    cache = _cache(ctx).setdefault("own_calls", {})
    body = _body(scope)
    if id(body) not in cache:
        if scope.kind is ScopeKind.MODULE:
            shares = ctx.per_statement("training.own_calls", lambda stmt: _calls_in([stmt]))
            cache[id(body)] = (body, [call for share in reversed(shares) for call in share])
        else:
            cache[id(body)] = (body, _calls_in(body))
    return cache[id(body)][1]


def _calls_in(body: list) -> list:
    return [n for n in own_code(body) if isinstance(n, ast.Call)]


def _position(node: ast.AST) -> tuple:
    return node.lineno, node.col_offset


def _method(call: ast.AST, *names: str) -> bool:
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in names


def _text(ctx: Context, node: ast.AST) -> str:
    return ctx.source.text_of(ctx.source.span(node))


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- what a name or `self.<attr>` was bound to ----------------------------------------------------------------
def bound_value(ctx: Context, node: ast.AST, scope: Scope) -> Optional[tuple[ast.expr, Scope]]:
    """The one expression ``node`` (a name, or `self.<attr>`) was assigned: a name bound once (`criterion =
    nn.CrossEntropyLoss()`), or an attribute of `self` assigned once in its class."""
    if isinstance(node, ast.Name):
        return scope.single_value(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return _self_attribute(ctx, node.attr, scope)
    return None


def _self_attribute(ctx: Context, attr: str, scope: Scope) -> Optional[tuple[ast.expr, Scope]]:
    owner = scope
    while owner is not None and owner.kind is not ScopeKind.CLASS:
        owner = owner.parent
    if owner is None:
        return None
    assigned = _self_assignments(ctx, owner.node).get(attr, [])
    if len(assigned) != 1 or len(assigned[0][0].targets) != 1:
        return None
    statement, method_scope = assigned[0]
    return (statement.value, method_scope) if method_scope is not None else None


def _self_assignments(ctx: Context, node: ast.ClassDef) -> dict:
    """`self.<attr> = ...` statements in the methods of a class, with the method's scope, by attribute (computed
    once per class)."""
    cache = _cache(ctx).setdefault("self_assignments", {})
    found = cache.get(node)
    if found is None:
        found = cache[node] = {}
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                method_scope = ctx.index.scope_of_node.get(stmt)
                for inner in own_code(stmt.body):
                    if isinstance(inner, ast.Assign):
                        for target in inner.targets:
                            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                                    and target.value.id == "self":
                                found.setdefault(target.attr, []).append((inner, method_scope))
    return found


def root_call(expr: ast.expr) -> Optional[ast.Call]:
    """The call that made a module, past `.to(device)`, `.cuda()`, `.train()`: `Net()` in `Net().to(device)`."""
    while _method(expr, *_SAME_MODULE):
        expr = expr.func.value
    return expr if isinstance(expr, ast.Call) else None


def constructor(ctx: Context, node: ast.AST, scope: Scope) -> Optional[tuple[ast.Call, Scope]]:
    """The call that built what ``node`` names (`nn.CrossEntropyLoss()` for `criterion`), if it is known."""
    bound = bound_value(ctx, node, scope)
    if bound is None:
        return None
    call = root_call(bound[0])
    return (call, bound[1]) if call is not None else None


# -- TW701 / TW702 ---------------------------------------------------------------------------------------------
class _LossSpec:
    def __init__(self, functional: str, module: str, activation: str, layer: str, functions: frozenset):
        self.functional, self.module = functional, module  # F.cross_entropy, nn.CrossEntropyLoss
        self.activation, self.layer = activation, layer  # softmax / nn.Softmax
        self.functions = functions  # the activation's functions: torch.softmax, F.softmax...


_CROSS_ENTROPY = _LossSpec("torch.nn.functional.cross_entropy", "torch.nn.CrossEntropyLoss", "softmax", "Softmax",
                           frozenset({"torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax"}))
_BCE_WITH_LOGITS = _LossSpec("torch.nn.functional.binary_cross_entropy_with_logits", "torch.nn.BCEWithLogitsLoss",
                             "sigmoid", "Sigmoid",
                             frozenset({"torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit"}))


def _loss_input(call: ast.Call, scope: Scope, ctx: Context, spec: _LossSpec) -> Optional[ast.expr]:
    """The prediction a loss call is given (its first argument), when the call is the loss of ``spec``."""
    qualname = scope.qualname(call.func)
    if qualname != spec.functional:
        made = constructor(ctx, call.func, scope) if qualname is None else None
        if made is None or made[1].qualname(made[0].func) != spec.module:
            return None
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "input"), None)


def _activation_call(expr: ast.AST, scope: Scope, ctx: Context, spec: _LossSpec) -> Optional[ast.Call]:
    """`F.softmax(x, dim=1)`, `torch.softmax(x, 1)`, `x.softmax(1)`, `nn.Softmax(dim=1)(x)`: the call when
    ``expr`` is one."""
    if not isinstance(expr, ast.Call):
        return None
    qualname = scope.qualname(expr.func)
    if qualname in spec.functions:
        return expr
    if qualname is None and isinstance(expr.func, ast.Attribute) and expr.func.attr == spec.activation:
        return expr  # a method: only tensors have `.softmax(dim)` / `.sigmoid()`
    if isinstance(expr.func, ast.Call) and scope.qualname(expr.func.func) == f"torch.nn.{spec.layer}":
        return expr
    return None


def _applied_activation(expr: ast.AST, scope: Scope, ctx: Context, spec: _LossSpec) -> Optional[str]:
    """How ``expr`` already holds the activation's output: "inline", "via <name>", "model", or None."""
    if _activation_call(expr, scope, ctx, spec) is not None:
        return "inline"
    if isinstance(expr, ast.Name):
        bound = scope.single_value(expr.id)
        if bound is not None and _activation_call(bound[0], bound[1], ctx, spec) is not None:
            return "name"
        if bound is not None and isinstance(bound[0], ast.Call) and _model_ends_with(bound[0].func, bound[1], ctx,
                                                                                       spec):
            return "model"  # `out = model(xb)`, then `criterion(out, yb)`
    if isinstance(expr, ast.Call) and _model_ends_with(expr.func, scope, ctx, spec):
        return "model"
    return None


def _model_ends_with(func: ast.AST, scope: Scope, ctx: Context, spec: _LossSpec,
                     visiting: frozenset = frozenset()) -> bool:
    """``func`` is a model whose last layer is the activation: `nn.Sequential(..., nn.Softmax(dim=1))`, known
    from the analysis or from the call that built it."""
    value = ctx.value(func)
    if isinstance(value, ModuleValue) and value.kind == "Sequential" and value.children:
        last = value.children[-1]
        return isinstance(last, ModuleValue) and last.kind == spec.layer
    made = constructor(ctx, func, scope)
    if made is None:
        return False
    call, where = made
    if isinstance(call.func, ast.Name) and where.qualname(call.func) is None:
        return _forward_ends_with(call.func.id, ctx, spec, visiting)
    if where.qualname(call.func) != "torch.nn.Sequential" or not call.args:
        return False
    last = call.args[-1]
    return isinstance(last, ast.Call) and where.qualname(last.func) == f"torch.nn.{spec.layer}"


def _forward_ends_with(class_name: str, ctx: Context, spec: _LossSpec, visiting: frozenset = frozenset()) -> bool:
    """A module class of this file whose ``forward`` returns the activation's output on every path (`return
    F.softmax(self.fc2(x), dim=1)`, `return self.softmax(x)` of an `nn.Softmax`, a model ending in it)."""
    if class_name in visiting:
        return False  # (a class built inside its own forward's layers: no answer)
    visiting |= {class_name}
    cls = next((n for n in ctx.tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    forward = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None) \
        if cls is not None else None
    scope = ctx.index.scope_of_node.get(forward) if forward is not None else None
    if scope is None:
        return False
    returns = [n for n in own_code(forward.body) if isinstance(n, ast.Return)]
    return bool(returns) and all(
        isinstance(r.value, ast.Call) and (_activation_call(r.value, scope, ctx, spec) is not None
                                           or _layer_is_activation(r.value.func, scope, ctx, spec, visiting))
        for r in returns)


def _layer_is_activation(func: ast.AST, scope: Scope, ctx: Context, spec: _LossSpec, visiting: frozenset) -> bool:
    """``self.softmax`` (an `nn.Softmax`) or ``self.net`` (a model ending in one), called in ``forward``."""
    value = ctx.value(func)
    if isinstance(value, ModuleValue) and value.kind == spec.layer:
        return True
    made = constructor(ctx, func, scope)
    if made is not None and made[1].qualname(made[0].func) == f"torch.nn.{spec.layer}":
        return True
    return _model_ends_with(func, scope, ctx, spec, visiting)


def _logits_fix(ctx: Context, scope: Scope, prediction: ast.expr, activation: ast.Call) -> list:
    """Pass the activation's input instead (offered when the activation is written inside the loss call)."""
    method = isinstance(activation.func, ast.Attribute) and scope.qualname(activation.func) is None
    inner = activation.func.value if method else activation.args[0] if activation.args else None
    if inner is None or isinstance(inner, ast.Starred):
        return []
    text = _text(ctx, inner)
    return [Fix(f"Pass the logits: `{_short(text)}`", lambda: [Edit(ctx.source.span(prediction), text)],
                preferred=True)]


class _DoubleActivation(Rule):
    """Shared by TW701 and TW702: a loss that applies an activation itself, fed that activation's output."""

    spec: _LossSpec
    call_names = None
    reach = Reach.NAMES  # what the loss and the prediction are bound to (`criterion = nn.CrossEntropyLoss()`)

    def outside(self, ctx: Context) -> bool:
        return self._called(ctx)

    def _called(self, ctx: Context) -> bool:
        """The file calls the loss or builds it."""
        return not _calls_named(ctx).isdisjoint({self.spec.functional.rsplit(".", 1)[1],
                                                 self.spec.module.rsplit(".", 1)[1]})

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if not self._called(ctx):
            return
        prediction = _loss_input(node, scope, ctx, self.spec)
        if prediction is None:
            return
        how = _applied_activation(prediction, scope, ctx, self.spec)
        if how is None:
            return
        fixes = []
        if how == "inline":
            fixes = _logits_fix(ctx, scope, prediction, _activation_call(prediction, scope, ctx, self.spec))
        yield Finding(self.code, self.message(how, _short(_text(ctx, prediction))), self.severity,
                      ctx.source.span(prediction), fixes)

    def message(self, how: str, shown: str) -> str:
        raise NotImplementedError


class SoftmaxIntoCrossEntropy(_DoubleActivation):
    code = "TW701"
    name = "softmax-into-cross-entropy"
    severity = Severity.WARNING
    spec = _CROSS_ENTROPY
    summary = ("Flags the output of `softmax` (or of a model ending in `nn.Softmax`, or whose `forward` returns "
               "`F.softmax(...)`) passed to `F.cross_entropy` / `nn.CrossEntropyLoss`, which applies log-softmax "
               "itself.")
    why = ("Cross-entropy takes logits and computes `log_softmax` of them. Given probabilities, it takes the "
           "softmax of the softmax: the values are squeezed into [0, 1], so the loss can barely move and the "
           "gradients are much flatter than they should be. Training still runs, only worse, and nothing raises. "
           "`log_softmax` into cross-entropy is harmless (log-softmax of log-probabilities is the same), so it is "
           "never flagged. The target (second argument) may be probabilities: soft labels are fine.")
    fix_summary = "Pass the logits: `F.cross_entropy(logits, y)` for `F.cross_entropy(F.softmax(logits, 1), y)`."
    valid = (
        Valid("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3)\n"
              "y = torch.tensor([0, 1, 2, 0])\nloss = F.cross_entropy(logits, y)\n"),
        # log-softmax is idempotent: harmless
        Valid("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3)\n"
              "y = torch.tensor([0, 1, 2, 0])\nloss = F.cross_entropy(F.log_softmax(logits, dim=1), y)\n"),
        Valid("import torch\nimport torch.nn.functional as F\nstudent = torch.randn(4, 3)\n"  # soft labels
              "teacher = torch.randn(4, 3)\nloss = F.cross_entropy(student, F.softmax(teacher, dim=1))\n"),
        Valid("import torch\nimport torch.nn as nn\ncriterion = nn.CrossEntropyLoss()\nmodel = nn.Linear(8, 3)\n"
              "x = torch.randn(4, 8)\ny = torch.tensor([0, 1, 2, 0])\nloss = criterion(model(x), y)\n"),
        Valid("import torch\nimport torch.nn.functional as F\n\n\ndef loss_fn(probs, y):\n"
              "    return F.nll_loss(torch.log(probs), y)\n"),
        # a model of this file whose forward ends in log_softmax: harmless
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Net(nn.Module):\n"
              "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 3)\n\n"
              "    def forward(self, x):\n        return F.log_softmax(self.fc(x), dim=1)\n\n\n"
              "model = Net()\ncriterion = nn.CrossEntropyLoss()\nx = torch.randn(4, 8)\n"
              "y = torch.tensor([0, 1, 2, 0])\nout = model(x)\nloss = criterion(out, y)\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
                "y = torch.tensor([0, 1, 2, 0])\nloss = F.cross_entropy(F.softmax(logits, dim=1), y)\n",
                "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
                "y = torch.tensor([0, 1, 2, 0])\nloss = F.cross_entropy(logits, y)\n"),
        Invalid("import torch\nimport torch.nn as nn\ncriterion = nn.CrossEntropyLoss()\n"
                "logits = torch.randn(4, 3, requires_grad=True)\ny = torch.tensor([0, 1, 2, 0])\n"
                "probs = logits.softmax(dim=-1)\nloss = criterion(probs, y)\n"),
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(8, 3), nn.Softmax(dim=1))\n"
                "criterion = nn.CrossEntropyLoss()\nx = torch.randn(4, 8)\ny = torch.tensor([0, 1, 2, 0])\n"
                "loss = criterion(model(x), y)\n"),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Trainer:\n    def __init__(self, model):\n"
                "        self.model = model\n        self.criterion = nn.CrossEntropyLoss()\n\n"
                "    def loss(self, x, y):\n        return self.criterion(torch.softmax(self.model(x), 1), y)\n",
                "import torch\nimport torch.nn as nn\n\n\nclass Trainer:\n    def __init__(self, model):\n"
                "        self.model = model\n        self.criterion = nn.CrossEntropyLoss()\n\n"
                "    def loss(self, x, y):\n        return self.criterion(self.model(x), y)\n"),
        # a model of this file whose forward returns softmax probabilities
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Net(nn.Module):\n"
              "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 3)\n\n"
              "    def forward(self, x):\n        return F.softmax(self.fc(x), dim=1)\n\n\n"
              "model = Net()\ncriterion = nn.CrossEntropyLoss()\nx = torch.randn(4, 8)\n"
              "y = torch.tensor([0, 1, 2, 0])\nout = model(x)\nloss = criterion(out, y)\n"),
    )

    def message(self, how: str, shown: str) -> str:
        source = {"inline": "softmax probabilities", "name": "softmax probabilities",
                  "model": "the output of a model that ends in softmax"}[how]
        return (f"`{shown}` is {source}, and cross-entropy applies log-softmax itself: a double softmax flattens "
                "the gradients; pass the logits")


class SigmoidIntoBCEWithLogits(_DoubleActivation):
    code = "TW702"
    name = "sigmoid-into-bce-with-logits"
    severity = Severity.WARNING
    spec = _BCE_WITH_LOGITS
    summary = ("Flags the output of `sigmoid` (or of a model ending in `nn.Sigmoid`) passed to "
               "`F.binary_cross_entropy_with_logits` / `nn.BCEWithLogitsLoss`, which applies the sigmoid itself.")
    why = ("`BCEWithLogitsLoss` takes logits and applies the sigmoid inside, in a numerically stable form. Given "
           "probabilities it applies a second sigmoid: every prediction lands in (0.5, 0.73), the loss cannot reach "
           "its minimum and the gradients shrink. Nothing raises. Either pass the logits, or keep the sigmoid and "
           "use `nn.BCELoss` (less stable).")
    fix_summary = "Pass the logits: `F.binary_cross_entropy_with_logits(logits, y)`."
    valid = (
        Valid("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4)\ny = torch.ones(4)\n"
              "loss = F.binary_cross_entropy_with_logits(logits, y)\n"),
        Valid("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4)\ny = torch.ones(4)\n"
              "loss = F.binary_cross_entropy(torch.sigmoid(logits), y)\n"),  # the plain BCE wants probabilities
        Valid("import torch\nimport torch.nn as nn\ncriterion = nn.BCEWithLogitsLoss()\nlogits = torch.randn(4)\n"
              "soft = torch.sigmoid(torch.randn(4))\nloss = criterion(logits, soft)\n"),  # soft targets
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())\n"
              "criterion = nn.BCELoss()\nx = torch.randn(4, 8)\n"
              "loss = criterion(model(x).squeeze(1), torch.ones(4))\n"),
        Valid("import torch\nimport torch.nn as nn\nclass Gate(nn.Module):\n    def forward(self, x):\n"
              "        return torch.sigmoid(x)\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, requires_grad=True)\n"
                "y = torch.ones(4)\nloss = F.binary_cross_entropy_with_logits(torch.sigmoid(logits), y)\n",
                "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, requires_grad=True)\n"
                "y = torch.ones(4)\nloss = F.binary_cross_entropy_with_logits(logits, y)\n"),
        Invalid("import torch\nimport torch.nn as nn\ncriterion = nn.BCEWithLogitsLoss()\n"
                "model = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())\nx = torch.randn(4, 8)\n"
                "loss = criterion(model(x), torch.ones(4, 1))\n"),
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef step(logits, y):\n    loss_fn = nn.BCEWithLogitsLoss()\n"
                "    p = logits.sigmoid()\n    return loss_fn(p, y)\n"),
    )

    def message(self, how: str, shown: str) -> str:
        source = "the output of a model ending in `nn.Sigmoid`" if how == "model" else "sigmoid probabilities"
        return (f"`{shown}` is {source}, and `BCEWithLogitsLoss` applies the sigmoid itself: a double sigmoid "
                "squeezes every prediction into (0.5, 0.73); pass the logits")


# -- training loops --------------------------------------------------------------------------------------------
def is_optimizer(ctx: Context, node: ast.AST, scope: Scope) -> bool:
    """`optimizer`, `opt`, `self.optimizer`, or a name bound to `torch.optim.*(...)`."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    if name is None:
        return False
    if "optim" in name.lower() or name.lower() in ("opt", "opt_g", "opt_d", "optg", "optd"):
        return "scheduler" not in name.lower()
    made = constructor(ctx, node, scope)
    return made is not None and (made[1].qualname(made[0].func) or "").startswith("torch.optim.")


def backward_calls(nodes: Iterator[ast.AST], scope: Scope) -> list:
    """`loss.backward()` and `scaler.scale(loss).backward()`: a method of a tensor, not a function of a module
    (`dist_autograd.backward(context, [loss])` clears its own gradients)."""
    return [n for n in nodes if _method(n, "backward") and scope.qualname(n.func) is None
            and not (isinstance(n.func.value, ast.Name) and scope.import_of(n.func.value.id) is not None)]


def step_calls(nodes: Iterator[ast.AST], scope: Scope, ctx: Context) -> list:
    """`optimizer.step()`, `scaler.step(optimizer)`."""
    found = []
    for n in nodes:
        if not _method(n, "step") or scope.qualname(n.func) is not None:
            continue
        if is_optimizer(ctx, n.func.value, scope) or (n.args and is_optimizer(ctx, n.args[0], scope)):
            found.append(n)
    return found


def training_loops(ctx: Context, scope: Scope, body: list) -> list:
    """The loops of a function (or of the module's own code) whose code calls `backward()` and an optimizer's
    `step()`, outer loops before the loops inside them (once per body: every `with` of a scope asks)."""
    cache = _cache(ctx).setdefault("training_loops", {})
    key = id(body)
    if key not in cache:
        if scope.kind is ScopeKind.MODULE and body is _body(scope):  # one top-level statement at a time, kept
            shares = ctx.per_statement("training.loops", lambda stmt: _training_loops_in(ctx, scope, [stmt]),
                                       resolved=True)
            loops = [loop for share in shares for loop in share]
        else:
            loops = _training_loops_in(ctx, scope, body)
        cache[key] = (body, sorted(loops, key=_position))  # (the body kept alive: its id stays its own)
    return cache[key][1]


def _training_loops_in(ctx: Context, scope: Scope, body: list) -> list:
    loops = []
    for node in own_code(body):
        if isinstance(node, _LOOPS):
            code = list(own_code(node.body))
            if backward_calls(code, scope) and step_calls(code, scope, ctx):
                loops.append(node)
    return loops


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return outer is not inner and outer.lineno <= inner.lineno and inner.end_lineno <= outer.end_lineno and \
        (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset)


# -- TW704 ------------------------------------------------------------------------------------------------------
_CLEARS = frozenset({"zero_grad", "clear_grad", "zero_grads"})


def _clears_gradients(node: ast.AST) -> bool:
    """`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`, `p.grad.zero_()`, `p.grad.data.zero_()`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in _CLEARS:
            return True
        if node.func.attr in ("zero_", "detach_", "fill_") and "grad" in ast.unparse(node.func.value):
            return True
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in targets)
    return False


def _clearing_functions(ctx: Context) -> frozenset:
    """Names of this file's functions and methods that clear gradients somewhere: a loop calling one is fine."""
    cache = _cache(ctx)
    if "clearing" not in cache:
        cache["clearing"] = frozenset().union(*ctx.per_statement("training.clearing", _clearing_in))
    return cache["clearing"]


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MAY_CLEAR = (ast.Call, ast.Assign, ast.AugAssign)  # the only nodes _clears_gradients may say yes to


def _clearing_in(stmt: ast.stmt) -> frozenset:
    """The names of the defs in ``stmt`` (at any depth) whose code (decorators and defaults included: the def's
    whole subtree) clears gradients. One walk, each node with the defs around it (a walk per def read a class's
    methods twice and nested defs once per level: 1.3 s of a 200k-line file's first analysis)."""
    found: set = set()
    stack: list = [(stmt, ())]
    pop, push = stack.pop, stack.append
    while stack:
        node, around = pop()
        node_type = node.__class__
        if node_type in _DEFS:
            around = (*around, node.name)
        elif around and node_type in _MAY_CLEAR and _clears_gradients(node):
            found.update(around)
        for child in incremental.child_nodes(node):
            push((child, around))
    return frozenset(found)


class MissingZeroGrad(Rule):
    code = "TW704"
    name = "missing-zero-grad"
    severity = Severity.WARNING
    node_types = (ast.For, ast.AsyncFor, ast.While)
    reach = Reach.NAMES  # what the optimizer is bound to
    summary = ("Flags a training loop that calls `loss.backward()` and `optimizer.step()` but never clears the "
               "gradients (`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`).")
    why = ("`backward()` adds into `.grad`; it does not overwrite it. Without `zero_grad()` every step uses the "
           "sum of all the gradients computed so far, so the updates grow step after step and training drifts or "
           "diverges, with no error. Gradient accumulation is the deliberate form of this, and it clears the "
           "gradients after each `step()`.")
    fix_summary = "Insert `optimizer.zero_grad()` on its own line before the backward pass."
    valid = (
        Valid("import torch\nmodel = torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "for step in range(3):\n    opt.zero_grad()\n    loss = model(torch.randn(2, 4)).sum()\n"
              "    loss.backward()\n    opt.step()\n"),
        Valid("import torch\nmodel = torch.nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "for i in range(8):\n    loss = model(torch.randn(2, 4)).sum() / 4\n    loss.backward()\n"
              "    if (i + 1) % 4 == 0:\n        optimizer.step()\n        optimizer.zero_grad(set_to_none=True)\n"),
        Valid("import torch\nmodel = torch.nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "for step in range(3):\n    loss = model(torch.randn(2, 4)).sum()\n    loss.backward()\n"
              "    optimizer.step()\n    for p in model.parameters():\n        p.grad = None\n"),
        Valid("import torch\n\n\ndef fit(model, optimizer, batches):\n    for x in batches:\n"
              "        loss = model(x).sum()\n        loss.backward()\n        optimizer.step()\n"
              "        reset(model)\n\n\ndef reset(model):\n    model.zero_grad()\n"),
        Valid("import torch\nimport torch.distributed.autograd as dist_autograd\n\n\ndef run(model, opt, batches):\n"
              "    for x in batches:\n        with dist_autograd.context() as context_id:\n"
              "            loss = model(x).sum()\n            dist_autograd.backward(context_id, [loss])\n"
              "            opt.step(context_id)\n"),  # each context has its own gradients
        Valid("import gym\nenv = gym.make('CartPole-v1')\nfor t in range(10):\n"
              "    state, reward, done, info = env.step(0)\n"),
    )
    invalid = (
        Invalid("import torch\nmodel = torch.nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "for step in range(3):\n    loss = model(torch.randn(2, 4)).sum()\n    loss.backward()\n"
                "    optimizer.step()\n",
                "import torch\nmodel = torch.nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "for step in range(3):\n    loss = model(torch.randn(2, 4)).sum()\n    optimizer.zero_grad()\n"
                "    loss.backward()\n    optimizer.step()\n"),
        Invalid("import torch\n\n\ndef train(model, loader, opt):\n    for epoch in range(10):\n"
                "        for x, y in loader:\n            output = model(x)\n"
                "            torch.nn.functional.mse_loss(output, y).backward()\n            opt.step()\n",
                "import torch\n\n\ndef train(model, loader, opt):\n    for epoch in range(10):\n"
                "        for x, y in loader:\n            output = model(x)\n            opt.zero_grad()\n"
                "            torch.nn.functional.mse_loss(output, y).backward()\n            opt.step()\n"),
        Invalid("import torch\nmodel = torch.nn.Linear(4, 1)\nadam = torch.optim.Adam(model.parameters())\n"
                "for i in range(5):\n    model(torch.randn(3, 4)).sum().backward(); adam.step()\n"),  # no own line
    )

    def outside(self, ctx: Context) -> tuple:
        return _trains(ctx), _clearing_functions(ctx)

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if not _trains(ctx):
            return
        code = list(own_code(node.body))
        backwards, steps = backward_calls(code, scope), step_calls(code, scope, ctx)
        if not backwards or not steps:
            return
        if _around(ctx, node, _LOOPS):
            return  # the outermost loop speaks for the loops in it
        if _scope_clears(ctx, scope):
            return
        clearing = _clearing_functions(ctx)
        if any(isinstance(n, ast.Call) and _callee_name(n) in clearing for n in code):
            return
        optimizer = steps[0].args[0] if not is_optimizer(ctx, steps[0].func.value, scope) else steps[0].func.value
        shown = _text(ctx, optimizer)
        message = (f"this training loop calls `backward()` and `{_short(shown)}.step()` but never "
                   f"`zero_grad()`: gradients add up across steps, so each update uses all of them")
        header = ctx.source.span(node)
        span = Span(header.start, Position(header.start.line, len(ctx.source.lines[header.start.line].rstrip())))
        yield Finding(self.code, message, self.severity, span,
                      _insert_before(ctx, scope, backwards[0], f"{shown}.zero_grad()",
                                     "Insert `{}` before the backward pass"))


def _scope_clears(ctx: Context, scope: Scope) -> bool:
    """The code of a function (its closures too: LBFGS's), or the module's own code, clears gradients somewhere
    (once per scope: every training loop of the module's code asks)."""
    cache = _cache(ctx).setdefault("scope_clears", {})
    function = scope.node
    key = id(function)
    if key not in cache:
        everything = ast.walk(function) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            else own_code(_body(scope))
        cache[key] = (function, any(_clears_gradients(n) for n in everything))  # (the node kept: its id stays)
    return cache[key][1]


def _callee_name(call: ast.Call) -> Optional[str]:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _alone(ctx: Context, stmt: ast.stmt) -> Optional[str]:
    """The indentation of ``stmt`` when it is alone on its lines (a comment may follow), else None."""
    span = ctx.source.span(stmt)
    first, last = ctx.source.lines[span.start.line], ctx.source.lines[span.end.line]
    before, after = first[:span.start.col], last[span.end.col:].strip()
    if before.strip() or (after and not after.startswith("#")):
        return None
    return before


def _insert_before(ctx: Context, scope: Scope, node: ast.AST, line: str, title: str) -> list:
    stmt = ctx.statement_of(node)
    indent = _alone(ctx, stmt) if stmt is not None else None
    if indent is None:
        return []
    at = Position(stmt.lineno - 1, 0)
    return [Fix(title.format(line), lambda: [Edit(Span(at, at), f"{indent}{line}\n")], preferred=True)]


# -- TW703 ------------------------------------------------------------------------------------------------------
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                      "torch.autograd.grad_mode.no_grad"})
_MODE_LAYERS = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
                "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d",
                "LazyBatchNorm3d")
_MODE_QUALNAMES = frozenset(f"torch.nn.{name}" for name in _MODE_LAYERS)
# Methods of a model that leave its mode alone.
_MODE_NEUTRAL = frozenset({"zero_grad", "parameters", "named_parameters", "state_dict", "to", "cuda", "cpu",
                           "forward", "buffers", "named_buffers", "children", "modules", "named_modules", "half",
                           "float", "train"})


def _has_mode_layers(ctx: Context, call: ast.Call, scope: Scope, seen: frozenset = frozenset()) -> bool:
    """The module ``call`` builds has dropout or batch-norm: a layer of that kind, a `torchvision.models` network,
    an `nn.Sequential` holding one, or a class of this file whose code builds one (or such a class)."""
    qualname = scope.qualname(call.func)
    if qualname in _MODE_QUALNAMES or (qualname or "").startswith("torchvision.models."):
        return True
    if qualname == "torch.nn.Sequential":
        return any(isinstance(a, ast.Call) and _has_mode_layers(ctx, a, scope, seen) for a in call.args)
    if isinstance(call.func, ast.Name) and call.func.id not in seen:
        info = ctx.facts.classes.get(call.func.id)
        if info is not None and info.is_module and scope.owner_of(call.func.id) is ctx.index.module_scope:
            return _class_has_mode_layers(ctx, info.node, seen | {call.func.id})
    return False


def _class_has_mode_layers(ctx: Context, node: ast.ClassDef, seen: frozenset) -> bool:
    for inner in ast.walk(node):
        if not isinstance(inner, ast.Call):
            continue
        scope = _scope_at(ctx, inner)
        if scope is None:
            continue
        qualname = scope.qualname(inner.func)
        if qualname in ("torch.nn.functional.dropout", "torch.nn.functional.dropout2d") and any(
                k.arg == "training" and "training" in ast.unparse(k.value) for k in inner.keywords):
            return True
        if _has_mode_layers(ctx, inner, scope, seen):
            return True
    return False


def _scope_at(ctx: Context, call: ast.Call) -> Optional[Scope]:
    """The scope a call is evaluated in (the index lists every call with its scope)."""
    cache = _cache(ctx)
    if "call_scopes" not in cache:
        cache["call_scopes"] = {node: scope for node, scope in ctx.index.nodes if isinstance(node, ast.Call)}
    return cache["call_scopes"].get(call)


class EvalWithoutEvalMode(Rule):
    code = "TW703"
    name = "evaluation-in-training-mode"
    severity = Severity.WARNING
    node_types = (ast.With, ast.AsyncWith)
    reach = Reach.CODE  # what the model is bound to, the code of its class and of the classes that builds
    summary = ("Flags an evaluation pass under `torch.no_grad()` / `torch.inference_mode()` after a training loop, "
               "of a model with dropout or batch-norm, with no `model.eval()` before it.")
    why = ("`no_grad()` only stops recording gradients; it does not change the model's mode. In training mode "
           "dropout still drops activations at random and batch-norm normalizes with the evaluation batch's own "
           "statistics (and updates its running averages with them), so the measured accuracy is lower and noisy, "
           "and the model's state changes while you evaluate. `model.eval()` switches both to inference behaviour; "
           "`model.train()` switches back.")
    fix_summary = ("Insert `model.eval()` before the `with` block; when training resumes after it (the block is inside "
                   "the epoch loop), also `model.train()` after it. Dropout and batch-norm then behave as at "
                   "inference: the evaluation's numbers change, as intended.")
    valid = (
        Valid("import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), "
              "nn.Linear(8, 1))\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(3):\n"
              "    opt.zero_grad()\n    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\nmodel.eval()\n"
              "with torch.no_grad():\n    pred = model(torch.randn(2, 4))\n"),
        Valid("import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
              "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(3):\n    opt.zero_grad()\n"
              "    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\nwith torch.no_grad():\n"
              "    pred = model(torch.randn(2, 4))\n"),  # no dropout or batch-norm: the mode changes nothing
        Valid("import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5))\n"
              "with torch.no_grad():\n    pred = model(torch.randn(2, 4))\n"),  # no training before it
        Valid("import torch\nfrom torch import nn\n\n\ndef fit(model, opt, batches, evaluate):\n    for x in batches:\n"
              "        opt.zero_grad()\n        model(x).sum().backward()\n        opt.step()\n"
              "    evaluate(model)\n    with torch.no_grad():\n        return model(batches[0])\n"),  # unknown model
        Valid("import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8))\n"
              "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(3):\n    opt.zero_grad()\n"
              "    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\ntest(model)\nwith torch.no_grad():\n"
              "    pred = model(torch.randn(2, 4))\n"),  # test() may switch it: unknown
    )
    invalid = (
        Invalid("import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), "
                "nn.Linear(8, 1))\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(3):\n"
                "    opt.zero_grad()\n    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\n"
                "with torch.no_grad():\n    pred = model(torch.randn(2, 4))\n",
                "import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), "
                "nn.Linear(8, 1))\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(3):\n"
                "    opt.zero_grad()\n    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\n"
                "model.eval()\nwith torch.no_grad():\n    pred = model(torch.randn(2, 4))\n"),
        Invalid("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n        self.bn = nn.BatchNorm1d(2)\n\n"
                "    def forward(self, x):\n        return self.bn(self.fc(x))\n\n\n"
                "model = Net()\noptimizer = torch.optim.Adam(model.parameters())\nfor epoch in range(2):\n"
                "    for step in range(3):\n        optimizer.zero_grad()\n"
                "        model(torch.randn(4, 4)).sum().backward()\n        optimizer.step()\n"
                "    with torch.no_grad():\n        val = model(torch.randn(4, 4)).sum()\n",
                "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n        self.bn = nn.BatchNorm1d(2)\n\n"
                "    def forward(self, x):\n        return self.bn(self.fc(x))\n\n\n"
                "model = Net()\noptimizer = torch.optim.Adam(model.parameters())\nfor epoch in range(2):\n"
                "    for step in range(3):\n        optimizer.zero_grad()\n"
                "        model(torch.randn(4, 4)).sum().backward()\n        optimizer.step()\n"
                "    model.eval()\n    with torch.no_grad():\n        val = model(torch.randn(4, 4)).sum()\n"
                "    model.train()\n"),
        Invalid("import torch\nimport torchvision\n\n\ndef main(loader, test_batch):\n"
                "    net = torchvision.models.resnet18(num_classes=10)\n"
                "    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n    for x, y in loader:\n"
                "        opt.zero_grad()\n        torch.nn.functional.cross_entropy(net(x), y).backward()\n"
                "        opt.step()\n    with torch.inference_mode():\n        return net(test_batch).argmax(1)\n",
                "import torch\nimport torchvision\n\n\ndef main(loader, test_batch):\n"
                "    net = torchvision.models.resnet18(num_classes=10)\n"
                "    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n    for x, y in loader:\n"
                "        opt.zero_grad()\n        torch.nn.functional.cross_entropy(net(x), y).backward()\n"
                "        opt.step()\n    net.eval()\n    with torch.inference_mode():\n"
                "        return net(test_batch).argmax(1)\n"),
    )

    def outside(self, ctx: Context) -> bool:
        return _trains(ctx)

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if not _trains(ctx) or not any(isinstance(item.context_expr, ast.Call)
                                       and scope.qualname(item.context_expr.func) in _NO_GRAD for item in node.items):
            return
        body = _body(scope)
        loops = [loop for loop in training_loops(ctx, scope, body) if loop.end_lineno < node.lineno]
        if not loops:
            return
        training = max(loops, key=lambda loop: loop.end_lineno)  # the training just before the evaluation
        for model, call in self._models_evaluated(ctx, node, scope, training):
            made = constructor(ctx, model, scope)
            if made is None or not _has_mode_layers(ctx, made[0], made[1]):
                continue
            if self._mode_may_change(ctx, model, body, call, scope):
                continue
            shown = _text(ctx, model)
            message = (f"`{_short(shown)}` has dropout or batch-norm and is evaluated under "
                       f"`{_short(_text(ctx, node.items[0].context_expr))}` after training, still in training "
                       f"mode; call `{shown}.eval()` first")
            header = ctx.source.span(node)
            span = Span(header.start, Position(header.start.line,
                                               len(ctx.source.lines[header.start.line].rstrip().rstrip(":")) + 1))
            yield Finding(self.code, message, self.severity, span, self._fix(ctx, scope, node, shown, training))
            return

    @staticmethod
    def _models_evaluated(ctx: Context, block: ast.AST, scope: Scope, training: ast.AST):
        """Models called in the `with` block that the training loop called too (by the same name)."""
        trained = {_text(ctx, n.func) for n in own_code(training.body) if isinstance(n, ast.Call)
                   and isinstance(n.func, (ast.Name, ast.Attribute))}
        seen = set()
        for inner in own_code(block.body):
            if isinstance(inner, ast.Call) and isinstance(inner.func, (ast.Name, ast.Attribute)):
                text = _text(ctx, inner.func)
                if text in trained and text not in seen and scope.qualname(inner.func) is None:
                    seen.add(text)
                    yield inner.func, inner

    @staticmethod
    def _mode_may_change(ctx: Context, model: ast.AST, body: list, call: ast.Call, scope: Scope) -> bool:
        """Anything before the evaluated call that may set the mode: `model.eval()`, `model.train(False)`, the model
        handed to a function, or a method of it other than the ones that leave the mode alone."""
        shown = _text(ctx, model)
        for node in _own_calls(ctx, scope) if body is _body(scope) else own_code(body):
            if not isinstance(node, ast.Call) or _position(node) >= _position(call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and _text(ctx, func.value) == shown:
                if func.attr not in _MODE_NEUTRAL or (func.attr == "train" and (node.args or node.keywords)):
                    return True
            if any(_text(ctx, a) == shown for a in [*node.args, *(k.value for k in node.keywords)]) and \
                    not _is_optimizer_constructor(node, scope):
                return True
        return False

    @staticmethod
    def _fix(ctx: Context, scope: Scope, block: ast.AST, shown: str, training: ast.AST) -> list:
        indent = _alone(ctx, block)
        if indent is None:
            return []
        resumes = any(_contains(loop, training) for loop in _around(ctx, block, _LOOPS))
        at = Position(block.lineno - 1, 0)
        end_line = block.end_lineno
        last_line = ctx.source.lines[end_line - 1]
        title = f"Insert `{shown}.eval()` before the evaluation" + (
            f" and `{shown}.train()` after it" if resumes else "") + \
            " (dropout off, batch-norm on its running statistics: the evaluation's numbers change)"

        def build():
            changes = [Edit(Span(at, at), f"{indent}{shown}.eval()\n")]
            if resumes:
                after = Position(end_line, 0)
                text = f"{indent}{shown}.train()\n"
                if not last_line.endswith(("\n", "\r")):
                    after, text = Position(end_line - 1, len(last_line)), f"\n{indent}{shown}.train()"
                changes.append(Edit(Span(after, after), text))
            return changes
        return [Fix(title, build, preferred=True)]


def _is_optimizer_constructor(call: ast.Call, scope: Scope) -> bool:
    return (scope.qualname(call.func) or "").startswith("torch.optim.")


# -- TW705 ------------------------------------------------------------------------------------------------------
class LoadWithoutWeightsOnly(Rule):
    code = "TW705"
    name = "load-without-weights-only"
    severity = Severity.INFO
    call_names = frozenset({"load"})
    local = True
    summary = "Flags `torch.load(...)` without `weights_only=` (TorchFix's TOR102)."
    why = ("Before PyTorch 2.6, `torch.load` unpickles whatever the file holds, running its code: loading a "
           "checkpoint from anywhere else runs that code. From 2.6 it defaults to `weights_only=True` and refuses "
           "anything but tensors and plain containers, so code that saved a whole model (`torch.save(model, ...)`) "
           "or custom objects breaks there. Without the argument the same line does different things on different "
           "versions; say which one you mean.")
    fix_summary = ("`weights_only=True` (it refuses pickled objects: what torch ≥ 2.6 does anyway); where the loaded "
                   "value is used as a whole model, `weights_only=False` comes first (it keeps loading it, running "
                   "pickled code: only for files you trust).")
    valid = (
        Valid("import torch\nstate = torch.load('ckpt.pt', weights_only=True)\n"),
        Valid("import torch\nmodel = torch.load('model.pt', weights_only=False)\n"),
        Valid("import pickle\ndata = pickle.load(open('x.pkl', 'rb'))\n"),
        Valid("import torch\n\n\ndef load(path):\n    try:\n        return torch.load(path, weights_only=True)\n"
              "    except TypeError:  # torch before 1.13 has no weights_only\n        return torch.load(path)\n"),
        Valid("import json\nconfig = json.load(open('c.json'))\n"),
    )
    invalid = (
        Invalid("import torch\nfrom torch import nn\nnet = nn.Linear(2, 2)\n"
                "net.load_state_dict(torch.load('ckpt.pt'))\n",
                "import torch\nfrom torch import nn\nnet = nn.Linear(2, 2)\n"
                "net.load_state_dict(torch.load('ckpt.pt', weights_only=True))\n"),
        Invalid("import torch\ncheckpoint = torch.load('ckpt.pt', map_location='cpu')\nstep = checkpoint['step']\n",
                "import torch\ncheckpoint = torch.load('ckpt.pt', map_location='cpu', weights_only=True)\n"
                "step = checkpoint['step']\n"),
        Invalid("import torch\nwith open('model.pt', 'rb') as f:\n    model = torch.load(f)\nmodel.eval()\n",
                "import torch\nwith open('model.pt', 'rb') as f:\n    model = torch.load(f, weights_only=False)\n"
                "model.eval()\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if scope.qualname(node.func) != "torch.load":
            return
        if any(k.arg == "weights_only" or k.arg is None for k in node.keywords) or len(node.args) >= 4:
            return
        if self._fallback(ctx, node, scope):
            return
        # Inside `torch.serialization.safe_globals(...)` the code means the weights-only loader, whole model or not.
        whole_model = self._used_as_model(ctx, node, scope) and not self._under_safe_globals(ctx, node, scope)
        safe = self._keyword_fix(ctx, node, "True", "Pass `weights_only=True` (refuses pickled objects other than "
                                                   "tensors and plain containers, as torch ≥ 2.6 does)")
        trusting = self._keyword_fix(ctx, node, "False", "Pass `weights_only=False` (keeps unpickling anything, "
                                                         "running its code: only for files you trust)")
        fixes = [trusting, safe] if whole_model else [safe, trusting]
        fixes[0].preferred = True
        message = ("`torch.load` without `weights_only=`: before torch 2.6 it unpickles anything (running its code), "
                   "from 2.6 it refuses all but tensors and plain containers" +
                   (", so this whole-model load breaks there" if whole_model else "") + "; say which you mean")
        yield Finding(self.code, message, self.severity, ctx.source.span(node.func), fixes)

    @staticmethod
    def _keyword_fix(ctx: Context, node: ast.Call, value: str, title: str) -> Fix:
        return Fix(title, lambda: [edits.rewrite_call(ctx.source, node, None, [edits.keyword("weights_only", value)])])

    @staticmethod
    def _under_safe_globals(ctx: Context, node: ast.Call, scope: Scope) -> bool:
        return any(isinstance(item.context_expr, ast.Call)
                   and (scope.qualname(item.context_expr.func) or "").endswith("serialization.safe_globals")
                   for block in _around(ctx, node, (ast.With, ast.AsyncWith)) for item in block.items)

    @staticmethod
    def _fallback(ctx: Context, node: ast.Call, scope: Scope) -> bool:
        """The old-torch fallback: inside an `except` of a `try` that passes `weights_only=`."""
        for try_stmt in _around(ctx, node, (ast.Try,)):
            if any(holds(handler, node) for handler in try_stmt.handlers):
                return any(isinstance(n, ast.keyword) and n.arg == "weights_only"
                           for stmt in try_stmt.body for n in ast.walk(stmt))
        return False

    @staticmethod
    def _used_as_model(ctx: Context, node: ast.Call, scope: Scope) -> bool:
        """`model = torch.load(f)` then `model.eval()` / `model(x)`: a whole pickled module."""
        assigned = [stmt for stmt in _around(ctx, node, (ast.Assign,)) if stmt.value is node]
        if not assigned or len(assigned[0].targets) != 1 or not isinstance(assigned[0].targets[0], ast.Name):
            return False
        name = assigned[0].targets[0].id
        for other in _calls_on(ctx, scope).get(name, ()):
            if _position(other) > _position(node):
                func = other.func
                if isinstance(func, ast.Name):
                    return True
                if func.attr in ("eval", "train", "parameters", "forward", "state_dict", "to", "cuda"):
                    return True
        return False


def _calls_on(ctx: Context, scope: Scope) -> dict:
    """The calls of a scope's own code by the name they call (`f(...)`) or call a method of (`f.eval()`), once per
    analysis (each `torch.load` of the module's code read all of its calls)."""
    cache = _cache(ctx).setdefault("calls_on", {})
    body = _body(scope)
    if id(body) not in cache:
        found: dict = {}
        for call in _own_calls(ctx, scope):
            func = call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                found.setdefault(func.value.id, []).append(call)
            elif isinstance(func, ast.Name):
                found.setdefault(func.id, []).append(call)
        cache[id(body)] = (body, found)  # (the body kept: its id stays)
    return cache[id(body)][1]


RULES = (SoftmaxIntoCrossEntropy, SigmoidIntoBCEWithLogits, EvalWithoutEvalMode, MissingZeroGrad,
         LoadWithoutWeightsOnly)
