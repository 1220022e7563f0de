"""TW302-TW305: in-place changes that autograd or shared memory turn into bugs."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from torchwise.analysis.scopes import BindingKind, Scope
from torchwise.analysis.values import NdarrayValue, TensorValue
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span
from torchwise.rules import edits
from torchwise.rules.base import Context, Invalid, Reach, Rule, Valid

# Methods ending in "_" that do not write into the tensor's data.
_NOT_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "register_hook_", "record_stream_"})
_VIEW_METHODS = frozenset({"view", "view_as", "transpose", "permute", "t", "unsqueeze", "squeeze", "expand",
                           "expand_as", "narrow", "diagonal", "select", "unfold", "swapaxes", "swapdims", "flatten",
                           "movedim", "T", "mT", "real", "imag"})


def inplace_target(stmt: ast.stmt) -> Optional[tuple[ast.expr, str]]:
    """The tensor expression a statement changes in place, and how: ``w.add_(1)``, ``w += 1``, ``w[0] = 1``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_") \
                and func.attr not in _NOT_WRITES:
            return func.value, f".{func.attr}()"
    if isinstance(stmt, ast.AugAssign):
        return stmt.target, f"`{_OPERATOR.get(type(stmt.op), '?')}=`"
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        return stmt.targets[0].value, "item assignment"
    return None


_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_OPERATOR = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Pow: "**",
             ast.Mod: "%", ast.MatMult: "@"}


def value_before(ctx: Context, stmt: ast.stmt, target: ast.expr):
    """The target's value just before the statement changes it."""
    return ctx.value(stmt) if isinstance(stmt, ast.AugAssign) else ctx.value(target)


def changed_tensor(ctx: Context, stmt: ast.stmt) -> Optional[tuple[ast.expr, str, TensorValue]]:
    """(target, how, its value before) when ``stmt`` changes a known tensor in place."""
    found = inplace_target(stmt)
    if found is None:
        return None
    value = value_before(ctx, stmt, found[0])
    return (*found, value) if isinstance(value, TensorValue) else None


def _text(ctx: Context, node: ast.AST) -> str:
    return ctx.source.text_of(ctx.source.span(node))


def _whole_lines(ctx: Context, stmt: ast.stmt) -> Optional[tuple[str, Span]]:
    """(indentation, span of the statement's full lines) when the statement stands alone on its lines."""
    span = ctx.source.span(stmt)
    first = ctx.source.lines[span.start.line]
    last = ctx.source.lines[span.end.line]
    indent = first[:span.start.col]
    rest = last[span.end.col:].strip()
    if indent.strip() or (rest and not rest.startswith("#")):
        return None  # shares its line with other code (`a; b`)
    for node in ast.walk(stmt):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.lineno != node.end_lineno:
            return None  # re-indenting would change a multi-line string
    return indent, Span(Position(span.start.line, span.start.col), span.end)


class InplaceOnLeaf(Rule):
    local = True
    code = "TW302"
    name = "inplace-on-leaf-requiring-grad"
    severity = Severity.ERROR
    runtime_error = True
    summary = ("Flags in-place changes (`w.add_()`, `w -= ...`, `w[i] = ...`) of a leaf tensor that requires grad, "
               "outside `torch.no_grad()`.")
    why = ("Autograd records how every tensor was computed from the leaves it differentiates; changing a leaf in "
           "place would rewrite history, so PyTorch raises `a leaf Variable that requires grad is being used in "
           "an in-place operation`. Parameter updates belong under `torch.no_grad()` (which is what optimizers "
           "do).")
    fix_summary = "Wrap the statement in `with torch.no_grad():`."
    node_types = (ast.Expr, ast.AugAssign, ast.Assign)
    valid = (
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    w -= 0.1\n"),
        Valid("import torch\nw = torch.randn(3)\nw.add_(1)\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\ny = w * 2\ny.add_(1)\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\nw.data.add_(1)\nw.requires_grad_(False)\n"),
        Valid("import torch\n\n\n@torch.no_grad()\ndef step(w: torch.Tensor, lr: float):\n    w.sub_(lr)\n\n\n"
              "step(torch.randn(3, requires_grad=True), 0.1)\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.inference_mode():\n    w.zero_()\n"),
    )
    invalid = (
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\nw -= 0.1\n",
                "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    w -= 0.1\n"),
        Invalid("import torch\nw = torch.zeros(4, requires_grad=True)\nfor step in range(3):\n    w.add_(1.0)  # update\n",
                "import torch\nw = torch.zeros(4, requires_grad=True)\nfor step in range(3):\n"
                "    with torch.no_grad():\n        w.add_(1.0)  # update\n"),
        Invalid("import torch\nimport torch.nn as nn\nbias = nn.Parameter(torch.zeros(5))\nbias[0] = 1.0\n",
                "import torch\nimport torch.nn as nn\nbias = nn.Parameter(torch.zeros(5))\nwith torch.no_grad():\n"
                "    bias[0] = 1.0\n"),
    )

    def check(self, node: ast.stmt, scope: Scope, ctx: Context) -> Iterator[Finding]:
        changed = changed_tensor(ctx, node)
        if changed is None:
            return
        target, how, value = changed
        if not (value.requires_grad is True and value.is_leaf is True):
            return
        if node in ctx.facts.grad_not_on:
            return
        fixes = []
        lines = _whole_lines(ctx, node)
        torch = edits.module_name(scope, ctx.tree, "torch")
        if lines is not None and torch is not None:
            indent, span = lines

            def build():
                name, extra = edits.module_name(scope, ctx.tree, "torch")
                body = ctx.source.text_of(span).replace("\n", "\n    ")
                body = "\n".join(line.rstrip() if not line.strip() else line for line in body.split("\n"))
                return [Edit(span, f"with {name}.no_grad():\n{indent}    {body}"), *extra]
            fixes.append(Fix("Wrap in `with torch.no_grad():`", build, preferred=True))
        yield self.finding(ctx, node, f"in-place change ({how}) of `{_text(ctx, target)}`, a leaf that requires "
                                      "grad, raises outside `torch.no_grad()`", fixes)


class InplaceOnSavedOutput(Rule):
    local = True
    code = "TW303"
    name = "inplace-on-saved-output"
    severity = Severity.WARNING
    runtime_error = True  # its examples call backward(), which raises
    summary = ("Flags in-place changes of a tensor that its producing op (`exp`, `sigmoid`, `tanh`, `softmax`, "
               "`relu`, `sqrt`, `torch.pow(scalar, x)`...) saved for backward, while its input requires grad.")
    why = ("Some ops compute their gradient from their own output (the derivative of `exp(x)` is `exp(x)`), so "
           "autograd keeps that output. Changing it in place makes `backward()` raise `one of the variables needed "
           "for gradient computation has been modified by an inplace operation`, far from the line at fault. "
           "`x.pow(2)` and `a * 2` keep their inputs instead, so changing their output is fine.")
    fix_summary = "Use the out-of-place op: `y = y.add(1)` for `y.add_(1)`, `y = y + 1` for `y += 1`."
    node_types = (ast.Expr, ast.AugAssign, ast.Assign)
    valid = (
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x.pow(2)\ny.add_(1)\ny.sum().backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.add_(1)\ny.sum().backward()\n"),
        Valid("import torch\nx = torch.randn(3)\ny = x.exp()\ny.add_(1)\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = x.sigmoid()\n"
              "y.mul_(2)\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.add_(1)\ny.sum().backward()\n",
                "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny = y.add(1)\ny.sum().backward()\n"),
        Invalid("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
                "p = F.softmax(logits, dim=1)\np *= 2\np.sum().backward()\n",
                "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
                "p = F.softmax(logits, dim=1)\np = p * 2\np.sum().backward()\n"),
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\nh = torch.tanh(x)\nh[0] = 0.0\nh.sum().backward()\n"),
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ng = torch.pow(2.0, x)\ng.clamp_(max=4.0)\n"
                "g.sum().backward()\n",
                "import torch\nx = torch.randn(3, requires_grad=True)\ng = torch.pow(2.0, x)\ng = g.clamp(max=4.0)\n"
                "g.sum().backward()\n"),
    )

    def check(self, node: ast.stmt, scope: Scope, ctx: Context) -> Iterator[Finding]:
        changed = changed_tensor(ctx, node)
        if changed is None:
            return
        target, how, value = changed
        if not (value.saved_by and value.requires_grad):
            return
        name = _text(ctx, target)
        fixes = []
        if isinstance(target, ast.Name):
            replacement = _out_of_place(ctx, node, name)
            if replacement is not None:
                fixes.append(Fix("Use the out-of-place op", lambda: [Edit(ctx.source.span(node), replacement)],
                                 preferred=True))
        yield self.finding(ctx, node, f"`{name}` is the output of `{value.saved_by}`, whose backward reads it; "
                                      f"changing it in place ({how}) makes `backward()` raise", fixes)


def _out_of_place(ctx: Context, stmt: ast.stmt, name: str) -> Optional[str]:
    if isinstance(stmt, ast.Expr):
        call = stmt.value
        text = _text(ctx, call)
        method_end = ctx.source.span(call.func).end
        call_start = ctx.source.span(call).start
        if method_end.line != call_start.line:
            return None
        offset = method_end.col - call_start.col
        return f"{name} = {text[:offset - 1]}{text[offset:]}"  # drop the trailing "_" of the method
    if isinstance(stmt, ast.AugAssign) and type(stmt.op) in _OPERATOR:
        return f"{name} = {name} {_OPERATOR[type(stmt.op)]} {_text(ctx, stmt.value)}"
    return None


class WriteThroughView(Rule):
    code = "TW304"
    name = "write-through-view"
    severity = Severity.HINT
    reach = Reach.NAMES  # a view bound at module level, of a tensor read by module-level code after the write
    summary = "Flags an in-place write to a view (`b = a.view(...)`, `b[0] = 1`) when the base `a` is read afterwards."
    why = ("A view shares its base's memory: writing into `b` changes `a` too. That is sometimes the point, and "
           "often a surprise (`row = x[0]; row += 1` changes `x`). If the base should stay as it was, copy the "
           "view first.")
    fix_summary = "`.clone()` the view where it is made."
    node_types = (ast.Expr, ast.AugAssign, ast.Assign)
    valid = (
        Valid("import torch\na = torch.zeros(2, 3)\nb = a.view(6)\nb[0] = 1.0\n"),
        Valid("import torch\na = torch.zeros(2, 3)\nb = a.view(6).clone()\nb[0] = 1.0\nprint(a)\n"),
        Valid("import torch\na = torch.zeros(2, 3)\nb = a.reshape(3, 2) + 1\nb[0] = 1.0\nprint(a)\n"),
    )
    invalid = (
        Invalid("import torch\na = torch.zeros(2, 3)\nb = a.view(6)\nb[0] = 1.0\nprint(a.sum())\n",
                "import torch\na = torch.zeros(2, 3)\nb = a.view(6).clone()\nb[0] = 1.0\nprint(a.sum())\n"),
        Invalid("import torch\nx = torch.ones(4, 4)\nrow = x[0]\nrow += 1\ntotal = x.sum()\n",
                "import torch\nx = torch.ones(4, 4)\nrow = x[0].clone()\nrow += 1\ntotal = x.sum()\n"),
        Invalid("import torch\nm = torch.zeros(3, 2)\nmt = m.t()\nmt.fill_(5.0)\nprint(m)\n",
                "import torch\nm = torch.zeros(3, 2)\nmt = m.t().clone()\nmt.fill_(5.0)\nprint(m)\n"),
    )

    def outside(self, ctx: Context) -> tuple:
        """The module's own code (its statements, not defs and classes): which names it reads after a write."""
        return tuple(stmt for stmt in ctx.tree.body if not isinstance(stmt, _UNITS))

    def check(self, node: ast.stmt, scope: Scope, ctx: Context) -> Iterator[Finding]:
        changed = changed_tensor(ctx, node)
        if changed is None or not isinstance(changed[0], ast.Name):
            return
        view_name, value = changed[0].id, changed[2]
        if not (value.memory or "").startswith("a view"):
            return
        # Bound once by `b = <view>`; `b += ...` rebinds the same tensor, which is fine.
        owner = scope.owner_of(view_name)
        bindings = owner.bindings[view_name] if owner is not None else []
        assigns = [b for b in bindings if b.kind is BindingKind.ASSIGN]
        if len(assigns) != 1 or any(b.kind is not BindingKind.ASSIGN and not isinstance(b.node, ast.AugAssign)
                                    for b in bindings):
            return
        made = assigns[0].value
        base = _view_base(made)
        if base is None or not isinstance(ctx.value(base), TensorValue) or scope.owner_of(base.id) is not owner:
            return
        if not _read_after(owner.node, base.id, ctx.source.span(node).end.line):
            return
        fix = Fix("`.clone()` the view", lambda: [Edit(ctx.source.span(made), edits.postfix(
            ctx.source, made, ".clone()"))], preferred=True)
        yield self.finding(ctx, node, f"writing into `{view_name}` also changes `{base.id}` (it is a view of it), "
                                      f"and `{base.id}` is read afterwards", [fix])


def _view_base(expr: ast.expr) -> Optional[ast.Name]:
    """``a`` in ``a.view(6)``, ``a[0]``, ``a.t()``, ``a.T``: the tensor a view expression looks into."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _VIEW_METHODS:
        inner = expr.func.value
    elif isinstance(expr, ast.Subscript):
        inner = expr.value
    elif isinstance(expr, ast.Attribute) and expr.attr in _VIEW_METHODS:
        inner = expr.value
    else:
        return None
    return inner if isinstance(inner, ast.Name) else _view_base(inner)


def _read_after(scope_node: ast.AST, name: str, line: int) -> bool:
    """Whether ``name`` is read on a line after ``line`` in this scope's own code."""
    body = scope_node.body if hasattr(scope_node, "body") else []
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                and node.lineno - 1 > line:
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


_NDARRAY_INPLACE = frozenset({"fill", "sort", "resize", "put", "itemset", "partition", "setfield"})


class SharedNumpyMemory(Rule):
    code = "TW305"
    name = "shared-numpy-memory"
    severity = Severity.INFO
    local = True
    reads_around_at_module_level = True  # the later module-level statements that change the array or tensor in place
    summary = "Flags `t = torch.from_numpy(arr)` when `t` or `arr` is changed in place afterwards."
    why = ("`torch.from_numpy` does not copy: the tensor and the array are one piece of memory. Changing either "
           "in place (`arr[0] = 1`, `arr *= 2`, `t.add_(1)`) changes both, which is easy to miss when the array "
           "is reused for the next batch.")
    fix_summary = "`torch.tensor(arr)` makes a copy."
    node_types = (ast.Assign,)
    valid = (
        Valid("import numpy as np\nimport torch\narr = np.zeros(3)\nt = torch.from_numpy(arr)\nprint(t)\n"),
        Valid("import numpy as np\nimport torch\narr = np.zeros(3)\nt = torch.tensor(arr)\narr[0] = 1.0\n"),
        Valid("import numpy as np\nimport torch\narr = np.zeros(3)\narr[0] = 1.0\nt = torch.from_numpy(arr)\n"),
    )
    invalid = (
        Invalid("import numpy as np\nimport torch\narr = np.zeros(3)\nt = torch.from_numpy(arr)\narr[0] = 1.0\n",
                "import numpy as np\nimport torch\narr = np.zeros(3)\nt = torch.tensor(arr)\narr[0] = 1.0\n"),
        Invalid("import numpy as np\nimport torch\nbuf = np.ones(4, dtype=np.float32)\nx = torch.from_numpy(buf)\n"
                "x.mul_(2)\nprint(buf)\n",
                "import numpy as np\nimport torch\nbuf = np.ones(4, dtype=np.float32)\nx = torch.tensor(buf)\n"
                "x.mul_(2)\nprint(buf)\n"),
        Invalid("import numpy as np\nimport torch\nbatch = np.random.rand(8, 2)\ninputs = torch.from_numpy(batch)\n"
                "batch *= 0.5\n",
                "import numpy as np\nimport torch\nbatch = np.random.rand(8, 2)\ninputs = torch.tensor(batch)\n"
                "batch *= 0.5\n"),
    )

    def check(self, node: ast.Assign, scope: Scope, ctx: Context) -> Iterator[Finding]:
        call = node.value
        if not (isinstance(call, ast.Call) and scope.qualname(call.func) == "torch.from_numpy" and len(call.args) == 1
                and isinstance(call.args[0], ast.Name) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            return
        array, tensor = call.args[0].id, node.targets[0].id
        if not isinstance(ctx.value(call.args[0]), NdarrayValue):
            return
        changed = _changed_in_place_after(ctx, scope.node, {array, tensor}, ctx.source.span(node).end.line)
        if changed is None:
            return

        def build():
            torch, extra = edits.module_name(scope, ctx.tree, "torch")
            return [edits.rewrite_call(ctx.source, call, f"{torch}.tensor"), *extra]
        fixes = [Fix("Copy with `torch.tensor(arr)`", build, preferred=True)] \
            if edits.module_name(scope, ctx.tree, "torch") else []
        yield self.finding(ctx, call, f"`{tensor}` and `{array}` share memory, and `{changed}` is changed in place "
                                      "later: both change", fixes)


def _changed_in_place_after(ctx: Context, scope_node: ast.AST, names: set, line: int) -> Optional[str]:
    """The first of ``names`` changed in place by a statement after ``line`` in the scope's own code (in the order
    of a walk down from its last statement)."""
    for stmt, name in _changes_in_place(ctx, scope_node):
        if stmt.lineno - 1 > line and name in names:
            return name
    return None


def _changes_in_place(ctx: Context, scope_node: ast.AST) -> list:
    """(statement, name) for each statement of a scope's own code that changes a name in place, listed once per
    analysis (every `torch.from_numpy` of the scope asks); the module's, one top-level statement at a time (kept
    with it)."""
    cache = ctx.memo.setdefault("autograd.changes", {})
    key = id(scope_node)
    if key not in cache:
        body = scope_node.body if hasattr(scope_node, "body") else []
        if isinstance(scope_node, ast.Module):
            shares = ctx.per_statement("autograd.changes", lambda stmt: _changes_under([stmt]))
            found = [change for share in reversed(shares) for change in share]
        else:
            found = _changes_under(body)
        cache[key] = (scope_node, found)  # (the node kept: its id stays)
    return cache[key][1]


def _changes_under(body: list) -> list:
    found = []
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if not isinstance(node, ast.stmt):
            continue
        target = inplace_target(node)
        if target is not None and isinstance(target[0], ast.Name):
            found.append((node, target[0].id))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr in _NDARRAY_INPLACE and isinstance(func.value, ast.Name):
                found.append((node, func.value.id))
    return found


RULES = (InplaceOnLeaf, InplaceOnSavedOutput, WriteThroughView, SharedNumpyMemory)
