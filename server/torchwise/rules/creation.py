"""TW1xx: how tensors are created."""

from __future__ import annotations

import ast
import weakref
from typing import Iterator

from torchwise.analysis.legacy import LEGACY_CONSTRUCTORS
from torchwise.analysis.scopes import BindingKind, Scope, ScopeKind
from torchwise.analysis.values import NdarrayValue, ScalarValue, SeqValue, SymbolicValue, TensorValue
from torchwise.findings import Edit, Finding, Fix, Severity, Span
from torchwise.rules import edits
from torchwise.rules.base import Context, Invalid, Reach, Rule, Valid
from torchwise.rules.sync import dominating_binding
from torchwise.rules.transfers import moved_at_once, with_device

LEGACY_NAMES = frozenset(qualname.rsplit(".", 1)[1] for qualname in LEGACY_CONSTRUCTORS)
_FILE_CACHE: "weakref.WeakKeyDictionary[Context, dict]" = weakref.WeakKeyDictionary()
_DEFAULT_DTYPE_SETTERS = ("torch.set_default_dtype", "torch.set_default_tensor_type")


def _legacy(call: ast.Call, scope: Scope) -> tuple[str, str | None, str | None] | None:
    """(qualname, dtype, device) of a legacy constructor call with only ``device=`` as keyword."""
    qualname = scope.qualname(call.func)
    if qualname not in LEGACY_CONSTRUCTORS:
        return None
    if any(kw.arg != "device" for kw in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    return (qualname, *LEGACY_CONSTRUCTORS[qualname])


def _is_size(call: ast.Call, scope: Scope, ctx: Context) -> bool:
    """Whether torch reads the arguments of a legacy constructor as a size. Two or more positional arguments
    always are (or raise); none is the empty size; one is a size when it is an int or a `torch.Size`."""
    args = call.args
    if len(args) != 1:
        return True  # `torch.Tensor(a, b, c)` whatever a, b, c are; `torch.Tensor()`
    arg = args[0]
    if isinstance(arg, ast.Call) and scope.qualname(arg.func) == "torch.Size":
        return True
    value = ctx.value(arg)
    # `t.size()`/`t.shape` of a tensor is a torch.Size: a size (an ndarray's `.shape` is a tuple: data).
    if isinstance(value, SeqValue) and value.kind == "size":
        return True
    return is_int(arg, scope, ctx)


def is_int(expr: ast.AST, scope: Scope, ctx: Context, seen: frozenset = frozenset()) -> bool:
    """``expr`` is certainly a Python int: known to the analysis, or made from ints (`len(x)`, `x.size(0)`,
    `x.shape[0]`, `n * 2`), or a local name every binding of which is one (`n = 0` then `n += len(words)`)."""
    value = ctx.facts.values.get(expr)
    if isinstance(value, ScalarValue):
        return value.kind == "int"
    if isinstance(value, SymbolicValue) and value.is_int:
        return True
    if value is not None and not isinstance(value, SymbolicValue):
        return False
    if isinstance(expr, ast.Constant):
        return type(expr.value) is int
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, _INT_OPERATORS):
        return is_int(expr.left, scope, ctx, seen) and is_int(expr.right, scope, ctx, seen)
    if isinstance(expr, ast.Call):
        return _counts(expr, scope)
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape" and \
            isinstance(expr.slice, (ast.Constant, ast.UnaryOp))
    if isinstance(expr, ast.Name) and expr.id not in seen:
        return _int_name(expr.id, scope, ctx, seen | {expr.id})
    return False


_INT_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


_INT_FUNCTIONS = frozenset({"random.randint", "random.randrange", "math.floor", "math.ceil", "math.prod",
                            "operator.index"})


def _counts(call: ast.Call, scope: Scope) -> bool:
    """`len(x)`, `int(...)`, `random.randint(...)`, `x.size(0)`, `x.numel()`, `x.dim()`: calls that give an int."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in ("len", "int") and scope.owner_of(func.id) is None:
        return True
    if scope.qualname(func) in _INT_FUNCTIONS:
        return True
    if isinstance(func, ast.Attribute) and scope.qualname(func) is None:
        return (func.attr == "size" and len(call.args) == 1 and not call.keywords) or \
            (func.attr in ("numel", "dim") and not call.args)
    return False


def _int_name(name: str, scope: Scope, ctx: Context, seen: frozenset) -> bool:
    owner = scope.owner_of(name)
    if owner is None or owner.kind is ScopeKind.CLASS:
        return False
    if name in _sizes_named(owner, ctx):
        return True
    bindings = owner.bindings[name]
    for binding in bindings:
        node = binding.node
        if isinstance(node, ast.AugAssign):
            if not is_int(node.value, owner, ctx, seen):
                return False
        elif binding.value is None or not is_int(binding.value, owner, ctx, seen):
            return False
    return any(not isinstance(b.node, ast.AugAssign) for b in bindings)


def _sizes_named(scope: Scope, ctx: Context) -> frozenset:
    """Names a scope passes where only a size can go (`torch.Tensor(input_dim, output_dim)`, `range(n)`): ints,
    so `torch.Tensor(output_dim)` in the same function is a size too. A function's are in its top-level
    statement; the module's, in any (each statement's share kept with it)."""
    cache = _FILE_CACHE.setdefault(ctx, {})
    key = ("sizes", id(scope))
    if key not in cache:
        if scope.kind is ScopeKind.MODULE:
            shares = ctx.per_statement("creation.module_sizes", lambda stmt: _sizes_in(ctx.index.parts[stmt].nodes,
                                                                                       scope), resolved=True)
            cache[key] = frozenset().union(*shares)
        else:
            top = ctx.top_level_of(scope.node)
            cache[key] = _sizes_in(ctx.index.parts[top].nodes if top is not None else ctx.index.nodes, scope)
    return cache[key]


def _sizes_in(nodes: list, scope: Scope) -> frozenset:
    """The names passed as sizes by the calls among ``nodes`` made in ``scope``."""
    names = set()
    for node, where in nodes:
        if where is not scope or not isinstance(node, ast.Call):
            continue
        qualname = where.qualname(node.func)
        sized = (qualname in LEGACY_CONSTRUCTORS and len(node.args) >= 2) or \
            (isinstance(node.func, ast.Name) and node.func.id == "range" and where.owner_of("range") is None)
        if sized:
            names.update(arg.id for arg in node.args if isinstance(arg, ast.Name))
    return frozenset(names)


# numpy functions that make arrays (never a numpy scalar, which torch would read as a size).
_ARRAY_FUNCTIONS = frozenset({"array", "asarray", "stack", "concatenate", "vstack", "hstack", "zeros", "ones",
                              "empty", "full", "arange", "linspace", "load", "loadtxt", "genfromtxt", "fromfile",
                              "frombuffer", "unique", "eye", "random.rand", "random.randn", "where"})
_DATA_METHODS = frozenset({"astype", "to_numpy", "tolist", "numpy", "copy"})


def _is_data(expr: ast.expr, ctx: Context, scope: Scope | None = None) -> bool:
    """What torch reads as data: a list, tuple or ndarray, known to the analysis or made by a call that only makes
    those (`np.array(...)`, `x.astype(...)`), or a name every binding of which is one (`offsets = []` appended to)."""
    if isinstance(expr, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    value = ctx.value(expr)
    if isinstance(value, NdarrayValue) or (isinstance(value, SeqValue) and value.kind in ("list", "tuple")):
        return True
    if value is not None or scope is None:
        return False
    if isinstance(expr, ast.Call):
        return _makes_data(expr, scope)
    if isinstance(expr, ast.Name):
        reaching = dominating_binding(ctx, expr, scope)  # `labels = torch.LongTensor(labels)` rebinds it after
        bindings = [reaching[0]] if reaching is not None else scope.bindings_of(expr.id)
        return bool(bindings) and all(_binds_data(b, scope, ctx) for b in bindings)
    return False


def _makes_data(call: ast.Call, scope: Scope) -> bool:
    qualname = scope.qualname(call.func) or ""
    if qualname.startswith("numpy."):
        return qualname[len("numpy."):] in _ARRAY_FUNCTIONS
    if isinstance(call.func, ast.Name) and call.func.id == "list" and scope.owner_of("list") is None:
        return True
    return isinstance(call.func, ast.Attribute) and qualname == "" and call.func.attr in _DATA_METHODS


def _binds_data(binding, scope: Scope, ctx: Context) -> bool:
    node = binding.node
    if binding.kind is BindingKind.ASSIGN and binding.value is not None:
        value = binding.value
        return isinstance(value, (ast.List, ast.Tuple, ast.ListComp)) or \
            (isinstance(value, ast.Call) and _makes_data(value, scope))
    # `classes, labels = np.unique(...)`: every part of what a numpy call returns is an array
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
        (scope.qualname(node.value.func) or "").startswith("numpy.") and \
        (scope.qualname(node.value.func) or "")[len("numpy."):] in _ARRAY_FUNCTIONS


# In-place fills that overwrite every element: right after a legacy constructor, its memory is never read.
_FILLS = frozenset({"uniform_", "normal_", "random_", "fill_", "zero_", "bernoulli_", "exponential_",
                    "geometric_", "log_normal_", "cauchy_", "copy_"})


def _meant_a_size(call: ast.Call, scope: Scope, ctx: Context) -> bool:
    """`torch.FloatTensor((B, 1, 1, 1))`: a tuple of ints read as data, where the code meant a shape (it holds a
    dimension read off a tensor, or the result is filled in place at once)."""
    arg = call.args[0] if len(call.args) == 1 else None
    if not isinstance(arg, ast.Tuple) or not arg.elts or any(isinstance(e, ast.Starred) for e in arg.elts):
        return False
    if not all(is_int(e, scope, ctx) or isinstance(e, ast.Name) for e in arg.elts):
        return False
    filled = ctx.index.method_called_on.get(call) in _FILLS
    return filled or any(_reads_a_dimension(e) for e in arg.elts)


def _reads_a_dimension(expr: ast.AST) -> bool:
    return any((isinstance(n, ast.Attribute) and n.attr == "shape") or
               (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "size")
               for n in ast.walk(expr))


def _sets_default_dtype(ctx: Context) -> bool:
    return any(
        isinstance(node, ast.Call) and scope.qualname(node.func) in _DEFAULT_DTYPE_SETTERS
        for node, scope in ctx.index.nodes
    )


def call_span(ctx: Context, call: ast.Call) -> Span:
    """Where a finding about a call is underlined: the whole call when it fits on its line, else its callee (a
    constructor call spread over many lines is not all wrong)."""
    span = ctx.source.span(call)
    return span if span.start.line == span.end.line else ctx.source.span(call.func)


def _at_call(rule: Rule, ctx: Context, call: ast.Call, message: str, fixes=(), severity: Severity | None = None):
    return Finding(rule.code, message, severity or rule.severity, call_span(ctx, call), list(fixes))


def _short(source_text: str, limit: int = 40) -> str:
    text = " ".join(source_text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LegacyConstructorWithSize(Rule):
    call_names = LEGACY_NAMES
    reach = Reach.NAMES  # what the size's names are bound to
    code = "TW101"
    name = "legacy-constructor-with-size"
    severity = Severity.WARNING
    summary = ("Flags legacy constructors given a size (`torch.Tensor(3, 4)`, `torch.FloatTensor(n)`, "
               "`torch.cuda.LongTensor(2, 2)`, `torch.Tensor()`).")
    why = ("They return *uninitialized* memory: whatever bytes were there before, different on every run, "
           "sometimes NaN or 1e38. The call reads like it makes a zero or empty tensor. The legacy types "
           "are also deprecated and hide the dtype and device in the class name.")
    fix_summary = ("`torch.empty(...)` says honestly that the memory is uninitialized (second action: "
                   "`torch.zeros(...)`); the dtype and device of the legacy type are passed as arguments.")
    valid = (
        Valid("import torch\nx = torch.empty(3, 4)\n"),
        Valid("import torch\nx = torch.Tensor([1, 2])\n"),
        Valid("import torch\nx = torch.Tensor(data)\n"),  # unknown: could be data
        Valid("import numpy as np\nimport torch\na = np.zeros(3)\nx = torch.Tensor(a.shape)\n"),  # a tuple: data
        Valid("from torch import *\nx = Tensor(3, 4)\n"),
        Valid("import torch\ndef f(torch):\n    return torch.Tensor(3)\n"),
        Valid("class Tensor:\n    pass\nx = Tensor(3, 4)\n"),
        Valid("import torch\n\n\ndef as_tensor(values):\n    return torch.FloatTensor(values)\n"),  # may be data
        Valid("import numpy as np\nimport torch\nrows = np.zeros((4, 2))\nx = torch.FloatTensor(rows)\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.Tensor(3, 4)\n", "import torch\nx = torch.empty(3, 4)\n"),
        Invalid("import torch\nn = 128\nx = torch.FloatTensor(n)\n",
                "import torch\nn = 128\nx = torch.empty(n, dtype=torch.float32)\n"),
        Invalid("import torch as T\nm = T.cuda.LongTensor(2, 2)  # indices\n",
                "import torch as T\nm = T.empty(2, 2, dtype=T.int64, device=\"cuda\")  # indices\n"),
        Invalid("import torch\nx = torch.Tensor()\n", "import torch\nx = torch.empty(0)\n"),
        Invalid("import torch\ny = torch.zeros(2, 3)\nx = torch.Tensor(y.size())\n",
                "import torch\ny = torch.zeros(2, 3)\nx = torch.empty(y.size())\n"),
        Invalid("from torch import DoubleTensor\n\nbuf = DoubleTensor(\n    16,  # rows\n    8,\n)\n",
                "import torch\nfrom torch import DoubleTensor\n\nbuf = torch.empty(\n    16,  # rows\n    8,\n"
                "    dtype=torch.float64,\n)\n"),
        Invalid("import torch\nx = torch.cuda.FloatTensor(4, device='cuda:1')\n",
                "import torch\nx = torch.empty(4, device='cuda:1', dtype=torch.float32)\n"),
        Invalid("import torch\n\n\ndef batchify(batch, nindices, ntoken):\n"
                "    return torch.LongTensor(batch, nindices) % ntoken\n",  # two arguments: always a size
                "import torch\n\n\ndef batchify(batch, nindices, ntoken):\n"
                "    return torch.empty(batch, nindices, dtype=torch.int64) % ntoken\n"),
        Invalid("import torch\nfrom torch import nn\n\n\nclass GraphConv(nn.Module):\n"
                "    def __init__(self, input_dim, output_dim):\n        super().__init__()\n"
                "        self.weight = nn.Parameter(torch.Tensor(input_dim, output_dim))\n",
                "import torch\nfrom torch import nn\n\n\nclass GraphConv(nn.Module):\n"
                "    def __init__(self, input_dim, output_dim):\n        super().__init__()\n"
                "        self.weight = nn.Parameter(torch.empty(input_dim, output_dim))\n"),
        Invalid("import torch\n\n\ndef token_ids(lines):\n    tokens = 0\n    for line in lines:\n"
                "        tokens += len(line.split())\n    return torch.LongTensor(tokens)\n",  # a local int
                "import torch\n\n\ndef token_ids(lines):\n    tokens = 0\n    for line in lines:\n"
                "        tokens += len(line.split())\n    return torch.empty(tokens, dtype=torch.int64)\n"),
        Invalid("import torch\n\n\ndef bias(n_out):\n    order = list(range(n_out))  # n_out is an int\n"
                "    return torch.Tensor(n_out), order\n",
                "import torch\n\n\ndef bias(n_out):\n    order = list(range(n_out))  # n_out is an int\n"
                "    return torch.empty(n_out), order\n"),
        Invalid("import torch\nbatch_size = 32\nindices = torch.LongTensor(batch_size).random_(0, 10)\n",
                "import torch\nbatch_size = 32\nindices = torch.empty(batch_size, dtype=torch.int64).random_(0, 10)\n"),
    )

    def outside(self, ctx: Context) -> frozenset:
        return _sizes_named(ctx.index.module_scope, ctx)  # sizes passed by module-level code, in any statement

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        legacy = _legacy(node, scope)
        if legacy is None or not _is_size(node, scope, ctx):
            return
        qualname, dtype, device = legacy
        spelled = _short(ctx.source.text_of(ctx.source.span(node.func)))
        filled = ctx.index.method_called_on.get(node)
        if filled in _FILLS:
            message = (f"`{spelled}(...)` with a size is a deprecated constructor (its uninitialized memory is "
                       f"overwritten by `.{filled}()` right after); use `torch.empty(...)`")
        else:
            message = (f"`{spelled}(...)` with a size returns uninitialized memory; "
                       f"use `torch.empty(...)` to say so, or `torch.zeros(...)`")
        fixes = [Fix(f"Replace with `torch.{factory}(...)`" + (" (zero-filled)" if factory == "zeros" else "") +
                     _moves_title(ctx, scope, node),
                     _factory_fix(ctx, node, scope, factory, dtype, device), preferred=factory == "empty")
                 for factory in ("empty", "zeros")]
        yield Finding(self.code, message, self.severity, call_span(ctx, node),
                      fixes if edits.module_name(scope, ctx.tree, "torch") else [])


def _factory_fix(ctx: Context, call: ast.Call, scope: Scope, factory: str, dtype: str | None, device: str | None):
    def build():
        torch, extra = edits.module_name(scope, ctx.tree, "torch")
        # `torch.Tensor()` is a size-0 tensor: the size goes first, before any keyword (`device=dev`).
        size = [edits.positional("0")] if not call.args else []
        append = _dtype_device_args(torch, call, dtype, device)
        rewrite = edits.rewrite_call(ctx.source, call, f"{torch}.{factory}", append, prepend=size)
        return [_folding_the_move(ctx, scope, call, rewrite), *extra]
    return build


def _folding_the_move(ctx: Context, scope: Scope, call: ast.Call, rewrite: Edit) -> Edit:
    """``rewrite`` of a legacy call, stretched over a move that follows at once (`torch.Tensor(3, 4).cuda()`
    becomes `torch.empty(3, 4, device="cuda")`): else the fixed code is create-then-move, for the next pass."""
    moved = moved_at_once(ctx, scope, call)
    if moved is None:
        return rewrite
    span = Span(ctx.source.span(call).start, ctx.source.span(moved[0]).end)
    return Edit(span, with_device(ctx, call, rewrite.new_text, moved))


def _moves_title(ctx: Context, scope: Scope, call: ast.Call) -> str:
    return ", created on its device" if moved_at_once(ctx, scope, call) is not None else ""


def _dtype_device_args(torch: str, call: ast.Call, dtype: str | None, device: str | None):
    args = []
    if dtype is not None:
        args.append(edits.keyword("dtype", f"{torch}.{dtype}"))
    if device is not None and not any(kw.arg == "device" for kw in call.keywords):
        args.append(edits.keyword("device", f'"{device}"'))
    return args


class LegacyConstructorWithData(Rule):
    call_names = LEGACY_NAMES
    reach = Reach.NAMES  # what the data's names are bound to
    code = "TW102"
    name = "legacy-constructor-with-data"
    severity = Severity.WARNING
    summary = "Flags legacy constructors given data (`torch.Tensor([1, 2])`, `torch.LongTensor(labels)`)."
    why = ("The legacy types are deprecated, hide the dtype in the class name (`torch.Tensor` means "
           "\"the default dtype\", float32 unless changed), and the same call means \"uninitialized tensor "
           "of this size\" when the argument happens to be an int. `torch.tensor(data, dtype=...)` always "
           "copies the data and says which dtype you get.")
    fix_summary = "`torch.tensor(data, dtype=<the legacy type's dtype>)` (and `device=\"cuda\"` for `torch.cuda.*`)."
    valid = (
        Valid("import torch\nx = torch.tensor([1, 2], dtype=torch.float32)\n"),
        Valid("import torch\nx = torch.Tensor(3)\n"),
        Valid("import torch\ndef f(t):\n    return torch.Tensor(t)\n"),  # t may be a tensor: shares memory
        Valid("from torch import *\nx = LongTensor([1, 2])\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.Tensor([1, 2])\n",
                "import torch\nx = torch.tensor([1, 2], dtype=torch.float32)\n"),
        Invalid("import torch\nlabels = [0, 1, 1]\ny = torch.LongTensor(labels)\n",
                "import torch\nlabels = [0, 1, 1]\ny = torch.tensor(labels, dtype=torch.int64)\n"),
        Invalid("import torch\nimport numpy as np\nx = torch.cuda.HalfTensor(np.array([0.5]))\n",
                "import torch\nimport numpy as np\nx = torch.tensor(np.array([0.5]), dtype=torch.float16, "
                "device=\"cuda\")\n"),
        Invalid("import torch\ntorch.set_default_dtype(torch.float64)\nx = torch.Tensor([i * 2 for i in range(3)])\n",
                "import torch\ntorch.set_default_dtype(torch.float64)\n"
                "x = torch.tensor([i * 2 for i in range(3)], dtype=torch.get_default_dtype())\n"),
        Invalid("import numpy as np\nimport torch\n\n\ndef encode(raw):\n"
                "    classes, labels = np.unique(raw, return_inverse=True)\n    labels = torch.LongTensor(labels)\n"
                "    return classes, labels\n",
                "import numpy as np\nimport torch\n\n\ndef encode(raw):\n"
                "    classes, labels = np.unique(raw, return_inverse=True)\n"
                "    labels = torch.tensor(labels, dtype=torch.int64)\n    return classes, labels\n"),
        Invalid("import torch\n\n\ndef drop_path(x: torch.Tensor, prob: float):\n"
                "    keep = torch.FloatTensor((x.shape[0], 1, 1, 1), device=x.device).uniform_() > prob\n"
                "    return x * keep\n",  # meant a shape: it holds 4 numbers
                "import torch\n\n\ndef drop_path(x: torch.Tensor, prob: float):\n"
                "    keep = torch.empty((x.shape[0], 1, 1, 1), device=x.device, dtype=torch.float32)"
                ".uniform_() > prob\n    return x * keep\n"),
    )

    def outside(self, ctx: Context) -> frozenset:
        return _sizes_named(ctx.index.module_scope, ctx)  # whether a tuple of names holds ints

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        legacy = _legacy(node, scope)
        if legacy is None or len(node.args) != 1 or not _is_data(node.args[0], ctx, scope):
            return
        qualname, dtype, device = legacy
        spelled = _short(ctx.source.text_of(ctx.source.span(node.func)))
        shown_dtype = f"torch.{dtype}" if dtype else "torch.float32"
        as_data = Fix(f"Replace with `torch.tensor(data, dtype={shown_dtype})`" + _moves_title(ctx, scope, node),
                      _tensor_fix(ctx, node, scope, dtype, device), preferred=True)
        can_spell = edits.module_name(scope, ctx.tree, "torch") is not None
        if _meant_a_size(node, scope, ctx):
            yield self._meant_size(ctx, node, scope, spelled, dtype, device, as_data if can_spell else None)
            return
        message = f"`{spelled}(data)` is a deprecated constructor; use `torch.tensor(data, dtype={shown_dtype})`"
        yield Finding(self.code, message, self.severity, call_span(ctx, node), [as_data] if can_spell else [])

    def _meant_size(self, ctx: Context, node: ast.Call, scope: Scope, spelled: str, dtype, device,
                    as_data: Fix | None) -> Finding:
        shape = _short(ctx.source.text_of(ctx.source.span(node.args[0])))
        count = len(node.args[0].elts)
        message = (f"`{spelled}({shape})` makes a {count}-element tensor holding the numbers {shape}, not a tensor "
                   f"of that shape; for the shape use `torch.empty({shape}, ...)`")
        fixes = []
        if as_data is not None:
            fixes.append(Fix(f"Make a tensor of shape {shape}: `torch.empty({shape}, ...)` (changes the result, "
                             f"which today holds {count} numbers)",
                             _factory_fix(ctx, node, scope, "empty", dtype, device), preferred=True))
            as_data.title += f" (keeps today's result: the {count} numbers)"
            as_data.preferred = False
            fixes.append(as_data)
        return Finding(self.code, message, Severity.WARNING, call_span(ctx, node), fixes)


def _tensor_fix(ctx: Context, node: ast.Call, scope: Scope, dtype: str | None, device: str | None):
    def build():
        torch, extra = edits.module_name(scope, ctx.tree, "torch")
        spelled_dtype = dtype or ("get_default_dtype()" if _sets_default_dtype(ctx) else "float32")
        append = [edits.keyword("dtype", f"{torch}.{spelled_dtype}")]
        append.extend(_dtype_device_args(torch, node, None, device))
        return [_folding_the_move(ctx, scope, node, edits.rewrite_call(ctx.source, node, f"{torch}.tensor", append)),
                *extra]
    return build


class GlobalDefaultDtype(Rule):
    call_names = frozenset({"set_default_dtype", "set_default_tensor_type"})
    local = True
    code = "TW105"
    name = "global-default-dtype"
    severity = Severity.WARNING
    summary = "Flags `torch.set_default_dtype(...)` and `torch.set_default_tensor_type(...)`."
    why = ("Both change the dtype of every floating tensor created afterwards, in every module of the "
           "process, including libraries that did not ask for it; results then depend on import order. "
           "`set_default_tensor_type` is also deprecated (since PyTorch 2.1). Pass `dtype=` (and `device=`) "
           "where tensors are created, or convert the model once with `model.to(dtype)`.")
    valid = (
        Valid("import torch\nx = torch.zeros(3, dtype=torch.float64)\n"),
        Valid("import torch\nprint(torch.get_default_dtype())\n"),
    )
    invalid = (
        Invalid("import torch\ntorch.set_default_dtype(torch.float64)\n"),
        Invalid("from torch import set_default_tensor_type\nset_default_tensor_type('torch.DoubleTensor')\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        qualname = scope.qualname(node.func)
        if qualname == "torch.set_default_dtype":
            yield _at_call(self, ctx, node, "`torch.set_default_dtype(...)` changes the dtype of every float tensor "
                                            "created afterwards, everywhere; pass `dtype=` where tensors are made")
        elif qualname == "torch.set_default_tensor_type":
            yield _at_call(self, ctx, node, "`torch.set_default_tensor_type(...)` is deprecated and changes every "
                                            "tensor created afterwards; pass `dtype=`/`device=` where tensors are "
                                            "made")


class TensorOfTensors(Rule):
    call_names = frozenset({"tensor"})
    local = True
    code = "TW106"
    name = "tensor-of-tensors"
    severity = Severity.ERROR  # 0-d elements lower it to a warning
    summary = "Flags `torch.tensor([t1, t2])` whose elements are tensors."
    why = ("`torch.tensor` converts each element to a Python number. Elements with more than one value "
           "raise `ValueError: only one element tensors can be converted to Python scalars`; one-value "
           "elements work but are copied out of the autograd graph, so no gradient reaches `t1`, `t2`. "
           "`torch.stack` builds the same tensor and keeps the graph.")
    fix_summary = "`torch.stack([t1, t2])` (offered when every element is a 0-d tensor or all have one known shape)."
    valid = (
        Valid("import torch\nx = torch.tensor([1.0, 2.0])\n"),
        Valid("import torch\na = torch.randn(3)\nx = torch.stack([a, a])\n"),
        Valid("import torch\ndef f(a, b):\n    return torch.tensor([a, b])\n"),  # unknown elements
        Valid("import torch\na = torch.randn(3)\nx = torch.tensor([a.sum().item(), 1.0])\n"),
        Valid("import torch\na = torch.randn(3)\na.resize_(1)\nx = torch.tensor([a, a])\n"),
    )
    invalid = (
        Invalid("import torch\na = torch.randn(3)\nb = torch.randn(3)\nx = torch.tensor([a, b])\n",
                "import torch\na = torch.randn(3)\nb = torch.randn(3)\nx = torch.stack([a, b])\n"),
        Invalid("import torch\nx = torch.randn(4, 2)\nl1 = x.sum()\nl2 = x.mean()\nt = torch.tensor([l1, l2])\n",
                "import torch\nx = torch.randn(4, 2)\nl1 = x.sum()\nl2 = x.mean()\nt = torch.stack([l1, l2])\n"),
        Invalid("import torch\nrows = [torch.zeros(2), torch.ones(2)]\nt = torch.tensor(rows)\n",
                "import torch\nrows = [torch.zeros(2), torch.ones(2)]\nt = torch.stack(rows)\n"),
        Invalid("import torch\nx = torch.tensor([torch.randn(1), torch.randn(1)])\n"),  # works, no equal fix
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if scope.qualname(node.func) != "torch.tensor" or len(node.args) != 1:
            return
        data = ctx.value(node.args[0])
        if not isinstance(data, SeqValue) or data.kind not in ("list", "tuple") or not data.items:
            return
        facts = [item if isinstance(item, TensorValue) else None for item in data.items]
        known = [f for f in facts if f is not None and f.shape is not None and _numel(f.shape) is not None]
        big = [f for f in known if _numel(f.shape) != 1]
        all_known = len(known) == len(facts)
        shapes = {f.shape for f in known}
        fix_ok = all_known and len(shapes) == 1 and not node.keywords and (big or shapes == {()})
        fixes = []
        if fix_ok and edits.module_name(scope, ctx.tree, "torch"):
            def build():
                torch, extra = edits.module_name(scope, ctx.tree, "torch")
                return [edits.rewrite_call(ctx.source, node, f"{torch}.stack"), *extra]
            fixes.append(Fix("Replace with `torch.stack(...)`", build, preferred=True))
        if big:
            shape = big[0].shape
            yield _at_call(self, ctx, node, f"`torch.tensor` of tensors with {_numel(shape)} elements (shape "
                                            f"{_shape_text(shape)}) raises ValueError; use `torch.stack(...)`", fixes)
        elif all_known:
            yield _at_call(self, ctx, node, "`torch.tensor` of one-element tensors copies their values and cuts "
                                            "the autograd graph; use `torch.stack(...)`", fixes,
                           severity=Severity.WARNING)


def _numel(shape) -> int | None:
    total = 1
    for dim in shape:
        if not isinstance(dim, int):
            return None
        total *= dim
    return total


def _shape_text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"



class TensorOfTensor(Rule):
    call_names = frozenset({"tensor"})
    local = True
    code = "TW103"
    name = "tensor-copy-construct"
    severity = Severity.WARNING
    summary = "Flags `torch.tensor(t)` where `t` is already a tensor."
    why = ("`torch.tensor` always copies its data and returns a new leaf, so the result is cut from `t`'s "
           "autograd graph; PyTorch itself warns `To copy construct from a tensor, it is recommended to use "
           "sourceTensor.clone().detach()`. Say what you mean: a detached copy, or no copy at all.")
    fix_summary = "`t.clone().detach()` (a copy); second action: `torch.as_tensor(t)` (no copy)."
    valid = (
        Valid("import torch\nx = torch.tensor([1.0, 2.0])\n"),
        Valid("import torch\nt = torch.randn(3)\nx = t.clone().detach()\n"),
        Valid("import torch\nimport numpy as np\nx = torch.tensor(np.zeros(3), dtype=torch.float32)\n"),
        Valid("import torch\ndef f(t):\n    return torch.tensor(t)\n"),
        Valid("import torch\nt = torch.randn(3)\nx = torch.Tensor(t)\n"),
    )
    invalid = (
        Invalid("import torch\nt = torch.randn(3)\nx = torch.tensor(t)\n",
                "import torch\nt = torch.randn(3)\nx = t.clone().detach()\n"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\nx = torch.tensor(w * 2)\n",
                "import torch\nw = torch.randn(3, requires_grad=True)\nx = (w * 2).clone().detach()\n"),
        Invalid("import torch\nt = torch.randn(3)\nx = torch.tensor(t, dtype=torch.float64)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if scope.qualname(node.func) != "torch.tensor" or len(node.args) != 1:
            return
        if not isinstance(ctx.value(node.args[0]), TensorValue):
            return
        data = node.args[0]
        fixes = []
        if not node.keywords:
            fixes.append(Fix("Copy with `t.clone().detach()`",
                             lambda: [edits.replace_node(ctx.source, node, edits.postfix(ctx.source, data,
                                                                                         ".clone().detach()"))],
                             preferred=True))
            if edits.module_name(scope, ctx.tree, "torch"):
                def no_copy():
                    torch, extra = edits.module_name(scope, ctx.tree, "torch")
                    return [edits.rewrite_call(ctx.source, node, f"{torch}.as_tensor"), *extra]
                fixes.append(Fix("Use `torch.as_tensor(t)` (no copy)", no_copy))
        yield _at_call(self, ctx, node, "`torch.tensor(t)` of a tensor copies it and cuts it from autograd; use "
                                        "`t.clone().detach()` (or `torch.as_tensor(t)` to avoid the copy)", fixes)


_NUMPY_CONVERSIONS = ("torch.tensor", "torch.from_numpy", "torch.as_tensor")
_CASTS = frozenset({"float", "half", "bfloat16", "to", "type", "type_as", "long", "int", "double"})


class Float64FromNumpy(Rule):
    call_names = frozenset({"tensor", "from_numpy", "as_tensor"})
    local = True
    code = "TW104"
    name = "float64-from-numpy"
    severity = Severity.INFO
    summary = "Flags tensors made from a float64 ndarray with no dtype given (`torch.from_numpy(np.random.rand(3))`)."
    why = ("numpy's default float is float64 and PyTorch keeps an ndarray's dtype, so the tensor is float64 "
           "while models and most layers are float32: the next `model(x)` raises a dtype mismatch, or everything "
           "silently runs at double precision (2x memory, much slower on GPUs).")
    fix_summary = ("Add `dtype=torch.float32` (`torch.tensor`/`torch.as_tensor`) or append `.float()` "
                   "(`torch.from_numpy`).")
    valid = (
        Valid("import numpy as np\nimport torch\na = np.random.rand(3).astype(np.float32)\nt = torch.from_numpy(a)\n"),
        Valid("import numpy as np\nimport torch\nt = torch.tensor(np.zeros(3), dtype=torch.float32)\n"),
        Valid("import numpy as np\nimport torch\nt = torch.from_numpy(np.arange(3))\n"),
        Valid("import numpy as np\nimport torch\ndef f(a):\n    return torch.from_numpy(a)\n"),
    )
    invalid = (
        Invalid("import numpy as np\nimport torch\nfeatures = np.random.rand(100, 8)\nx = torch.from_numpy(features)\n",
                "import numpy as np\nimport torch\nfeatures = np.random.rand(100, 8)\n"
                "x = torch.from_numpy(features).float()\n"),
        Invalid("import numpy as np\nimport torch\ny = torch.tensor(np.zeros((2, 2)))\n",
                "import numpy as np\nimport torch\ny = torch.tensor(np.zeros((2, 2)), dtype=torch.float32)\n"),
        Invalid("import numpy as np\nimport torch as T\nw = T.as_tensor(np.array([0.5, 1.5]))\n",
                "import numpy as np\nimport torch as T\nw = T.as_tensor(np.array([0.5, 1.5]), dtype=T.float32)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        qualname = scope.qualname(node.func)
        if qualname not in _NUMPY_CONVERSIONS or not node.args or any(k.arg == "dtype" for k in node.keywords):
            return
        array = ctx.value(node.args[0])
        if not isinstance(array, NdarrayValue) or array.dtype is None or array.dtype.short != "float64":
            return
        if ctx.index.method_called_on.get(node) in _CASTS:
            return  # converted right away: `torch.from_numpy(a).float()`
        function = qualname.split(".")[1]
        if function == "from_numpy":
            fix = Fix("Append `.float()`", lambda: [edits.replace_node(
                ctx.source, node, ctx.source.text_of(ctx.source.span(node)) + ".float()")], preferred=True)
        else:
            def build():
                torch, extra = edits.module_name(scope, ctx.tree, "torch")
                return [edits.rewrite_call(ctx.source, node, None, [edits.keyword("dtype", f"{torch}.float32")]),
                        *extra]
            fix = Fix("Add `dtype=torch.float32`" + (" (then it copies)" if function == "as_tensor" else ""), build,
                      preferred=True)
        yield _at_call(self, ctx, node, f"`torch.{function}` of a float64 ndarray makes a float64 tensor; models are "
                                        "float32", [fix] if edits.module_name(scope, ctx.tree, "torch") else [])


RULES = (LegacyConstructorWithSize, LegacyConstructorWithData, TensorOfTensor, Float64FromNumpy, GlobalDefaultDtype,
         TensorOfTensors)
