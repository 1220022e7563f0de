"""TW203: host<->device transfers and syncs inside loops.

A loop over a tensor's elements is found from what the code says, not only from inferred facts: real loops sit
in functions whose parameters nobody annotates. A name is a tensor when the analysis knows it is, when it is
bound to something that makes one (`torch.tensor(...)`, `x.cpu()`, `t[i]` of a tensor), or when the function
calls a method on it that only tensors have (`y.clone()`, `y.size(0)`: numpy's `size` is not callable).
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from torchwise.analysis.scopes import BindingKind, Scope, ScopeKind
from torchwise.analysis.values import DeviceValue, ScalarValue, TensorValue
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span
from torchwise.rules.base import Context, Invalid, Reach, Rule, Valid
from torchwise.rules.transfers import method_tail_span

_TRANSFERS = frozenset({"cpu", "cuda", "to", "item", "numpy", "tolist"})
_MOVES = frozenset({"cpu", "cuda", "to"})
_CONVERSIONS = frozenset({"float", "int", "bool"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

# Methods only a torch tensor has (numpy: `.copy()`, `.ndim`, a `.size` that is not callable; lists: none).
TENSOR_ONLY_METHODS = frozenset({
    "clone", "detach", "cpu", "cuda", "numel", "unsqueeze", "contiguous", "masked_fill", "masked_fill_",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "type_as", "view_as", "expand_as", "permute",
    "size", "dim", "float", "long", "half", "double", "bfloat16", "requires_grad_", "backward", "softmax",
    "log_softmax", "unbind",
})
# Methods whose result is a tensor whatever their receiver was (a module's `.cuda()` is never iterated).
_TENSOR_RESULTS = frozenset({"detach", "contiguous", "cpu", "cuda", "clone"})
# Tensor methods that give something else: Python values, sizes, tuples of tensors.
_NOT_TENSOR_RESULTS = frozenset({
    "item", "tolist", "numpy", "size", "dim", "numel", "stride", "data_ptr", "element_size", "max", "min", "sort",
    "topk", "split", "chunk", "unbind", "kthvalue", "median", "mode", "unique", "aminmax", "nonzero", "tensor_split",
    "is_contiguous", "is_floating_point", "get_device", "storage",
})
# torch functions that return one tensor.
_TENSOR_FUNCTIONS = frozenset({
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
    "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "randint_like", "stack", "cat", "where", "argmax", "argmin", "argsort", "multinomial",
    "bernoulli", "sigmoid", "softmax", "log_softmax", "exp", "log", "abs", "sqrt", "matmul", "mm", "bmm", "einsum",
    "flatten", "clamp", "round", "floor", "ceil", "sum", "mean", "cumsum", "flip", "roll", "gather", "masked_select",
    "bucketize", "searchsorted", "diag", "tril", "triu", "outer", "cdist",
})
_TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.nn.Parameter"})

def _cache(ctx: Context) -> dict:
    """This analysis's caches, kept with its context: they hold a ``Tensors`` that holds the context, which a
    weak-keyed table would keep alive for good (every analysis of a session stayed in memory)."""
    return ctx.memo.setdefault("sync", {})


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


# -- what is a tensor -------------------------------------------------------------------------------------------
class Tensors:
    """Which expressions of a file are torch tensors, from the inferred facts and from what names are bound to."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self._names: dict = {}  # (owner scope id, name) -> bool; False while being decided (cycles)
        self._methods: dict = {}  # scope id -> {name: methods called on it in that scope's own code}

    @classmethod
    def of(cls, ctx: Context) -> "Tensors":
        cache = _cache(ctx)
        if "tensors" not in cache:
            cache["tensors"] = cls(ctx)
        return cache["tensors"]

    def is_tensor(self, expr: ast.AST, scope: Scope) -> bool:
        if isinstance(self.ctx.value(expr), TensorValue):
            return True
        if isinstance(expr, ast.Subscript):
            return self.is_tensor(expr.value, scope)  # an element or a slice of a tensor is a tensor
        if isinstance(expr, ast.Attribute):
            return expr.attr in ("data", "grad", "T", "mT") and self.is_tensor(expr.value, scope)
        if isinstance(expr, ast.BinOp):
            return self.is_tensor(expr.left, scope) or self.is_tensor(expr.right, scope)
        if isinstance(expr, ast.Compare):
            return len(expr.ops) == 1 and (self.is_tensor(expr.left, scope) or
                                           self.is_tensor(expr.comparators[0], scope))
        if isinstance(expr, ast.Call):
            return self._makes_tensor(expr, scope)
        if isinstance(expr, ast.Name):
            return self._name_is_tensor(expr.id, scope) or self._reaches_as_tensor(expr, scope)
        return False

    def _reaches_as_tensor(self, use: ast.Name, scope: Scope) -> bool:
        """`returns = []` ... `returns = torch.tensor(returns)` then `zip(saved, returns)`: the binding that reaches
        the use on every path makes a tensor."""
        found = dominating_binding(self.ctx, use, scope)
        if found is None:
            return False
        binding, owner = found
        return binding.kind is BindingKind.ASSIGN and binding.value is not None and self.is_tensor(binding.value, owner)

    def _makes_tensor(self, call: ast.Call, scope: Scope) -> bool:
        qualname = scope.qualname(call.func)
        if qualname is not None:
            module, _, function = qualname.rpartition(".")
            return module == "torch" and function in _TENSOR_FUNCTIONS
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr in _NOT_TENSOR_RESULTS:
            return False
        return func.attr in _TENSOR_RESULTS or self.is_tensor(func.value, scope)

    def _name_is_tensor(self, name: str, scope: Scope) -> bool:
        owner = scope.owner_of(name)
        if owner is None:
            return False
        key = (id(owner), name)
        if key in self._names:
            return self._names[key]
        self._names[key] = False  # a cycle (`x = x[1:]`) proves nothing
        bindings = [b for b in owner.bindings[name] if not isinstance(b.node, ast.AugAssign)]
        found = bool(bindings) and all(self._binds_tensor(b, name, owner) for b in bindings)
        self._names[key] = found
        return found

    def _binds_tensor(self, binding, name: str, owner: Scope) -> bool:
        node = binding.node
        if binding.kind is BindingKind.ASSIGN and binding.value is not None:
            return self.is_tensor(binding.value, owner)
        if isinstance(node, ast.arg):
            annotation = node.annotation
            if annotation is not None and owner.parent is not None and \
                    owner.parent.qualname(annotation) in _TENSOR_ANNOTATIONS:
                return True
            return bool(self.methods_called(owner).get(name, set()) & TENSOR_ONLY_METHODS)
        if isinstance(node, (ast.For, ast.AsyncFor)):
            iterated = element_source(node, name)
            return iterated is not None and self.is_tensor(iterated, owner)
        return False

    def methods_called(self, scope: Scope) -> dict:
        """Name -> the methods called on it in the scope's own code (`y.clone()`: {"y": {"clone"}})."""
        found = self._methods.get(id(scope))
        if found is None:
            found = self._methods[id(scope)] = {}
            body = getattr(scope.node, "body", [])
            for node in own_code(body if isinstance(body, list) else [body]):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and isinstance(node.func.value, ast.Name):
                    found.setdefault(node.func.value.id, set()).add(node.func.attr)
        return found


def dominating_binding(ctx: Context, use: ast.Name, scope: Scope):
    """(binding, its scope) of ``use``'s name that reaches the use on every path: the last one before it, in a
    block that holds the use, with no later binding in a loop around both (it would flow back). None if unsure.
    Decided from positions and the statements of the owning function: no map of the whole file is built."""
    owner = scope.owner_of(use.id)
    if owner is None or owner.kind is ScopeKind.CLASS:
        return None
    bindings = owner.bindings[use.id]
    before = [b for b in bindings if _binds_before(b.node, use)]
    if not before:
        return None
    last = max(before, key=lambda b: _position(_positioned(b.node)))
    body = _body_of(owner)
    if isinstance(last.node, ast.arg):
        return (last, owner) if len(before) == 1 else None  # a parameter holds until something rebinds it
    if body is None or not _dominates(ctx, owner, last.node, use):
        return None
    loops = [loop for loop in _loops_of(ctx, owner) if holds(loop, use)]
    later = [b for b in bindings if _position(_positioned(b.node)) > _position(use)]
    if any(holds(loop, _positioned(b.node)) for b in later for loop in loops):
        return None
    return last, owner


def _body_of(scope: Scope) -> Optional[list]:
    body = getattr(scope.node, "body", None)
    return body if isinstance(body, list) else None


def statements(body: list) -> Iterator[ast.stmt]:
    """Every statement of a function's own code, nested blocks included (not nested functions or classes)."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, field, ()))
        for handler in getattr(stmt, "handlers", ()):
            stack.extend(handler.body)
        for case in getattr(stmt, "cases", ()):
            stack.extend(case.body)


def _statements_of(ctx: Context, scope: Scope) -> list:
    cache = _cache(ctx).setdefault("statements", {})
    if id(scope) not in cache:
        cache[id(scope)] = list(statements(_body_of(scope) or []))
    return cache[id(scope)]


def _loops_of(ctx: Context, scope: Scope) -> list:
    cache = _cache(ctx).setdefault("loops", {})
    if id(scope) not in cache:
        cache[id(scope)] = [stmt for stmt in _statements_of(ctx, scope) if isinstance(stmt, _LOOPS)]
    return cache[id(scope)]


def _dominates(ctx: Context, scope: Scope, binding: ast.AST, use: ast.AST) -> bool:
    """``binding`` (a statement, or the `with ... as` item of one) runs before ``use`` on every path: the use
    sits in (or under) a later statement of the block that holds the binding."""
    place = _places(ctx, scope).get(binding)
    if place is None:
        return False
    block, i = place
    stmt = block[i]
    inside = stmt is not binding and holds(stmt, use)  # `with open(p) as f:` binds for its body
    return inside or any(holds(later, use) for later in block[i + 1:])


def _places(ctx: Context, scope: Scope) -> dict:
    """Each statement of a scope's blocks, and each `with ... as` item, -> (the block, its place in it): where a
    binding sits, found once per scope (each binding searched the blocks)."""
    cache = _cache(ctx).setdefault("places", {})
    if id(scope) not in cache:
        places: dict = {}
        for block in _blocks(_body_of(scope), _statements_of(ctx, scope)):
            for i, stmt in enumerate(block):
                places.setdefault(stmt, (block, i))
                if isinstance(stmt, (ast.With, ast.AsyncWith)):
                    for item in stmt.items:
                        places.setdefault(item, (block, i))
        cache[id(scope)] = places
    return cache[id(scope)]


def _blocks(body: list, stmts: list) -> Iterator[list]:
    yield body
    for stmt in stmts:
        if isinstance(stmt, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if block:
                yield block
        for handler in getattr(stmt, "handlers", ()):
            yield handler.body


def holds(outer: ast.AST, inner: ast.AST) -> bool:
    """``inner`` lies within ``outer``'s source range."""
    return (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset) and \
        (inner.end_lineno, inner.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def _binds_before(binding: ast.AST, use: ast.AST) -> bool:
    """The binding has run when ``use`` is evaluated: it ends before it, or it is a loop (or `with ... as`)
    whose body holds the use."""
    binding = _positioned(binding)
    if holds(binding, use):
        return isinstance(binding, (ast.For, ast.AsyncFor))
    return (binding.end_lineno, binding.end_col_offset) <= _position(use)


def _position(node: ast.AST) -> tuple:
    return node.lineno, node.col_offset


def _positioned(node: ast.AST) -> ast.AST:
    """A node with a position standing for ``node`` (`with ... as f` binds at `f`)."""
    if isinstance(node, ast.withitem):
        return node.optional_vars or node.context_expr
    if isinstance(node, ast.comprehension):
        return node.target
    return node


def own_code(body: list) -> Iterator[ast.AST]:
    """Every node under ``body``, not inside the functions, classes and lambdas it defines."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def element_source(loop: ast.AST, name: str) -> Optional[ast.expr]:
    """What the loop variable ``name`` takes its values from: `t` in `for v in t`, `for i, v in enumerate(t)`,
    `for a, v in zip(xs, t)` (None when it is an index, or not known)."""
    target, iterable = loop.target, loop.iter
    if isinstance(target, ast.Name):
        return iterable if target.id == name else None
    if not isinstance(target, ast.Tuple) or not _is_builtin_call(iterable, ("enumerate", "zip")):
        return None
    for position, element in enumerate(target.elts):
        if isinstance(element, ast.Name) and element.id == name:
            if iterable.func.id == "enumerate":
                return iterable.args[0] if position == 1 and iterable.args else None
            return iterable.args[position] if position < len(iterable.args) else None
    return None


def _is_builtin_call(node: ast.AST, names: tuple) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


# -- which loops walk a tensor's elements -----------------------------------------------------------------------
def iterated_tensor(loop: ast.AST, scope: Scope, tensors: Tensors) -> Optional[ast.expr]:
    """The tensor whose elements or indices a loop walks (`for x in t`, `enumerate(t)`, `zip(.., t)`,
    `range(len(t))`, `range(t.size(0))`, `for i in range(n): ... t[i]`), or None."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return None
    iterable = loop.iter
    candidates = iterable.args if _is_builtin_call(iterable, ("enumerate", "zip")) else [iterable]
    for candidate in candidates[:1] if _is_builtin_call(iterable, ("enumerate",)) else candidates:
        if tensors.is_tensor(candidate, scope):
            return candidate
    if not _is_builtin_call(iterable, ("range",)) or _steps_over_chunks(iterable):
        return None
    for arg in iterable.args:
        for node in ast.walk(arg):
            measured = _measured(node, scope, tensors)
            if measured is not None:
                return measured
    read = indexed_read(loop, scope, tensors)
    return read.value if read is not None else None


def _steps_over_chunks(call: ast.Call) -> bool:
    """`range(0, n, batch_size)`: a loop over batches, each a slice, not over elements."""
    if len(call.args) != 3:
        return False
    step = call.args[2]
    return not (isinstance(step, ast.Constant) and step.value in (1, -1))


def indexed_read(loop: ast.AST, scope: Scope, tensors: Tensors) -> Optional[ast.Subscript]:
    """`t[i]` read in the body of `for i in range(n)`, ``t`` a tensor: the loop walks t's indices."""
    if not isinstance(loop.target, ast.Name):
        return None
    index = loop.target.id
    for node in _own_nodes(loop.body):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _indexes_with(node, index) \
                and tensors.is_tensor(node.value, scope):
            return node
    return None


def _measured(node: ast.AST, scope: Scope, tensors: Tensors) -> Optional[ast.expr]:
    """``t`` in `len(t)`, `t.size(0)`, `t.numel()`, `t.shape[0]` when ``t`` is a tensor (a called `.size(k)` is
    one whatever ``t`` is: numpy's `size` is a number)."""
    if _is_builtin_call(node, ("len",)) and node.args and tensors.is_tensor(node.args[0], scope):
        return node.args[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "size" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
                and type(node.args[0].value) is int:
            return node.func.value
        if node.func.attr == "numel" and tensors.is_tensor(node.func.value, scope):
            return node.func.value
    if isinstance(node, ast.Attribute) and node.attr == "shape" and tensors.is_tensor(node.value, scope):
        return node.value
    return None


def _indexes_with(subscript: ast.Subscript, index: str) -> bool:
    """`t[i]`, `t[i, j]`, `t[:, i]`: ``index`` picks an element (not a bound of a slice, `t[i:i + 8]`)."""
    parts = subscript.slice.elts if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]
    return any(not isinstance(part, ast.Slice) and index in _names(part) for part in parts)


def _reads_an_element(call: ast.Call, index_names: set, scope: Scope, tensors: Tensors) -> bool:
    return any(isinstance(node, ast.Subscript) and any(_indexes_with(node, name) for name in index_names)
               and tensors.is_tensor(node.value, scope) for node in ast.walk(call))


def _loop_names(loop: ast.AST) -> set:
    return _names(loop.target) if isinstance(loop, (ast.For, ast.AsyncFor)) else set()


def _per_element_transfer(node: ast.AST, loop_names: set, scope: Scope, tensors: Tensors, ctx: Context) -> bool:
    """A read-back or move of one element: `.item()` of anything (only tensors and numpy scalars have it, and
    the loop walks a tensor), `.cpu()`/`.tolist()`/`.to(device)` of a tensor or of something made from the
    loop variable, `float(t[i])`."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _TRANSFERS and scope.qualname(func) is None:
        if func.attr == "item":
            return not node.args and not node.keywords
        if func.attr == "to" and not _moves_device(node, ctx):
            return False
        return tensors.is_tensor(func.value, scope) or bool(_names(func.value) & loop_names)
    if isinstance(func, ast.Name) and func.id in _CONVERSIONS and len(node.args) == 1 and scope.owner_of(func.id) \
            is None:
        return tensors.is_tensor(node.args[0], scope)
    return False


def _invariant_transfer(node: ast.AST, ctx: Context) -> bool:
    """A move of a known tensor (the loop-invariant check follows)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MOVES):
        return False
    if not isinstance(ctx.value(node.func.value), TensorValue):
        return False
    return node.func.attr != "to" or _moves_device(node, ctx)


def _moves_device(call: ast.Call, ctx: Context) -> bool:
    """``.to(device)`` rather than ``.to(torch.float16)``."""
    for value in [ctx.value(a) for a in call.args] + [ctx.value(k.value) for k in call.keywords if k.arg == "device"]:
        if isinstance(value, DeviceValue) or (isinstance(value, ScalarValue) and value.kind == "str"):
            return True
    return any(isinstance(a, ast.Name) and "device" in a.id for a in call.args) or \
        any(k.arg == "device" for k in call.keywords)


class TransferInLoop(Rule):
    code = "TW203"
    name = "transfer-in-loop"
    severity = Severity.WARNING
    summary = ("Flags host<->device transfers and syncs (`.cpu()`, `.cuda()`, `.to(device)`, `.item()`, "
               "`.numpy()`, `.tolist()`, `float(t[i])`) inside a loop over a tensor's elements or indices, and "
               "transfers of a value that does not change in any loop.")
    why = ("Each transfer waits for the device and crosses the PCIe bus: once per element, a loop that should "
           "take microseconds takes seconds. A transfer of a loop-invariant value repeats the same copy on every "
           "iteration. The once-per-step `loss.item()` of a training loop over a DataLoader is fine and is not "
           "flagged. The loop is recognised from the code itself: it walks a tensor (`for y in labels`, "
           "`enumerate(t)`, `zip(xs, t)`, `range(len(t))`, `range(x.size(0))`, `t[i]` in the body), where a name "
           "is a tensor when it is bound to one or the function calls a tensor-only method on it (`y.clone()`).")
    fix_summary = ("For a loop-invariant value: move it once, before the loop. Per-element transfers need a "
                   "vectorized rewrite (see TW4xx), or one `.tolist()` / `.cpu()` of the whole tensor before the loop.")
    node_types = (ast.For, ast.AsyncFor, ast.While)
    reach = Reach.NAMES  # what the names of the loop are bound to: tensors or not
    valid = (
        Valid("import torch\nfrom torch.utils.data import DataLoader\n\n\ndef train(model, loader: DataLoader, opt):\n"
              "    running = 0.0\n    for x, y in loader:\n        loss = model(x).sum()\n        opt.step()\n"
              "        running += loss.item()\n    return running\n"),
        Valid("import torch\nscores = torch.randn(8)\ntotal = scores.sum().item()\n"),
        Valid("import torch\ndevice = torch.device('cuda')\nfor epoch in range(3):\n    batch = torch.randn(4, 3)\n"
              "    batch = batch.to(device)\n"),
        Valid("import torch\nt = torch.randn(5)\nfor i in range(3):\n    t = t * 2\n    print(t.sum().item())\n"),
        Valid("import numpy as np\n\n\ndef total(values):\n    s = 0.0\n    for v in values:\n"
              "        s += v.item()\n    return s\n"),  # `values` may be an ndarray: no device involved
        Valid("def widths(boxes):\n    out = []\n    for i in range(len(boxes)):\n"
              "        out.append(float(boxes[i][2]))\n    return out\n"),  # nothing says `boxes` is a tensor
        Valid("import torch\n\n\ndef summary(y):\n    values = y.tolist()\n    for v in values:\n"
              "        print(v)\n"),  # converted once, before the loop
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
        Invalid("import torch\n\n\ndef negatives(y):\n    y_neg = y.clone()\n    for idx, y_samp in enumerate(y):\n"
                "        allowed = [c for c in range(10) if c != y_samp.item()]\n        y_neg[idx] = allowed[0]\n"
                "    return y_neg\n"),
        Invalid("import torch\n\n\ndef accuracy(model, x, targets):\n"
                "    correct = (model(x).argmax(1) == targets).cpu()\n    results = []\n"
                "    for i in range(x.size(0)):\n        results.append(int(correct[i]))\n    return results\n"),
        Invalid("import torch\n\n\ndef advantages(saved, rewards):\n    returns = torch.tensor(rewards)\n"
                "    out = []\n    for (log_prob, value), r in zip(saved, returns):\n"
                "        out.append(r - value.item())\n    return out\n"),
    )

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        tensors = Tensors.of(ctx)
        walked = iterated_tensor(node, scope, tensors)
        if walked is not None:
            yield from self._per_element(node, walked, scope, tensors, ctx)
            return
        assigned = None
        for inner in _own_nodes(node.body):
            if not _invariant_transfer(inner, ctx):
                continue
            if assigned is None:
                assigned = _assigned(node)
            if not _plain(inner.func.value) or _names(inner) & assigned:
                continue  # the value (or the device) may change in the loop
            text = ctx.source.text_of(ctx.source.span(inner))
            yield Finding(self.code, f"`{_short(text)}` moves the same tensor on every iteration; move it once "
                                     "before the loop", self.severity, method_tail_span(ctx, inner),
                          self._hoist(ctx, scope, node, inner))

    def _per_element(self, loop: ast.AST, walked: ast.expr, scope: Scope, tensors: Tensors,
                     ctx: Context) -> Iterator[Finding]:
        """One finding per loop, at its first per-element transfer: the loop is the thing to change."""
        names = _loop_names(loop)
        found = [inner for inner in _own_nodes(loop.body) if _per_element_transfer(inner, names, scope, tensors, ctx)]
        if _is_builtin_call(loop.iter, ("range",)) and not any(_measured(n, scope, tensors) for arg in loop.iter.args
                                                               for n in ast.walk(arg)):
            # Known only from `t[i]` in the body: the transfers of elements count, not a once-per-step
            # `loss.item()` stored into `losses[k]`.
            found = [inner for inner in found if _reads_an_element(inner, names, scope, tensors)]
        if not found:
            return
        first = found[0]
        text = _short(ctx.source.text_of(ctx.source.span(first)))
        source = _short(ctx.source.text_of(ctx.source.span(walked)), 24)
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        carried = _carried(loop)
        if isinstance(first.func, ast.Attribute) and first.func.attr in ("cuda", "to"):
            advice = "move the whole tensor once before the loop, or vectorize it"
        elif carried is not None:
            # a recurrence has no vectorized form: reading the values back once is the whole fix
            advice = (f"`{carried}` carries over from one step to the next (a recurrence, which stays a loop): read "
                      "the tensor back once before the loop (`.tolist()`)")
        else:
            advice = "vectorize the loop, or read the tensor back once before it (`.tolist()`)"
        message = (f"`{text}`{more} runs once per element of `{source}`: on a GPU each one waits for the device "
                   f"and copies a single value; {advice}")
        span = method_tail_span(ctx, first) if isinstance(first.func, ast.Attribute) else ctx.source.span(first)
        yield Finding(self.code, message, self.severity, span)

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


def _carried(loop: ast.AST) -> Optional[str]:
    """A name the loop updates from its own value other than by adding to it (`x = x + k * (z - x)`,
    `s = 0.9 * s + v`): the first one, else None. A running sum (`total = total + v`) is not one."""
    for node in _own_nodes(loop.body):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        terms, stack = [], [node.value]
        while stack:  # the terms of the top-level sum
            term = stack.pop()
            if isinstance(term, ast.BinOp) and isinstance(term.op, (ast.Add, ast.Sub)):
                stack += [term.left, term.right]
            else:
                terms.append(term)
        if any(not (isinstance(t, ast.Name) and t.id == name) and name in _names(t) for t in terms):
            return name
    return None


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


RULES = (TransferInLoop,)
