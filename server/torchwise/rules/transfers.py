"""TW2xx: where tensors are put. TW201 `.cuda()`/`.cpu()`, TW202 create-then-move, TW205 hard-coded "cuda"."""

from __future__ import annotations

import ast
import weakref
from typing import Iterator, Optional

from torchwise.analysis.ops import normalize_device
from torchwise.analysis.scopes import BindingKind, Scope, ScopeKind
from torchwise.analysis.values import DeviceValue, DtypeValue, InstanceValue, ModuleValue, ScalarValue, \
    TensorValue
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span
from torchwise.rules import edits
from torchwise.rules.base import Context, Invalid, Reach, Rule, Valid
from torchwise.source import SourceFile

# Factories that take `device=`: `torch.<name>(..., device=d)` makes the tensor where it will live.
FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace", "logspace",
    "eye", "tensor", "as_tensor", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like",
})
# A file that calls one of these chooses (or deliberately commits to) CUDA: TW205 stays silent in it.
_CUDA_CHOICE = frozenset({
    "torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.set_device",
    "torch.accelerator.is_available", "torch.accelerator.current_accelerator",
})


# -- shared helpers -------------------------------------------------------------------------------------------
def is_placeable(value, ctx: Context) -> bool:
    """A tensor or an `nn.Module` (a known layer, or `self`/an instance of an `nn.Module` subclass of this file)."""
    if isinstance(value, InstanceValue):
        info = ctx.facts.classes.get(value.class_name)
        return info is not None and info.is_module  # `self` of any other class may define its own `.cuda()`
    return isinstance(value, (TensorValue, ModuleValue))


def is_cuda(device: Optional[str]) -> bool:
    return device is not None and device.split(":")[0] == "cuda"


def string_constant(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def cuda_literal(node: ast.AST) -> Optional[str]:
    """The text of a string constant naming a CUDA device ("cuda", "cuda:1"), else None."""
    text = string_constant(node)
    return text if text is not None and is_cuda(normalize_device(text)) else None


def method_call(node: ast.AST, *names: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


def attribute_name_span(ctx: Context, attribute: ast.Attribute) -> Span:
    """The span of ``attr`` in ``value.attr`` (it always ends the attribute node)."""
    end = ctx.source.span(attribute).end
    return Span(Position(end.line, end.col - len(attribute.attr)), end)


def method_tail_span(ctx: Context, call: ast.Call) -> Span:
    """``cuda(non_blocking=True)`` in ``x.cuda(non_blocking=True)``: the method name through the call's end."""
    return Span(attribute_name_span(ctx, call.func).start, ctx.source.span(call).end)


def device_variable(scope: Scope, ctx: Context, use: ast.AST) -> Optional[str]:
    """A name visible at ``use`` that holds a device that may be CUDA, to write ``.to(name)``.

    A name bound (every time, before ``use`` when in the same scope) to a device value
    (``device = torch.device(...)``, or a device string in a variable whose name says device),
    or a parameter called ``device``. A device known to be the CPU (or MPS) does not qualify: the
    rewrite of ``.cuda()`` must not move things somewhere else.
    """
    found: list[tuple[int, str]] = []
    seen: set[str] = set()  # the names of the scopes inside: they hide the same names further out
    current: Optional[Scope] = scope
    depth = 0
    while current is not None:
        if current.kind is not ScopeKind.CLASS or current is scope:
            if current is scope:  # bound before the use, in its own scope
                names = [name for name, bindings in current.bindings.items()
                         if _holds_device(name, bindings, current, True, ctx, use)]
            else:
                names = _device_names(ctx, current)
            found.extend((0 if name == "device" else 1 + depth, name) for name in names
                         if name not in seen and scope.owner_of(name) is current)
            if current.parent is not None:
                seen.update(current.bindings)
        current = current.parent
        depth += 1
    return min(found)[1] if found else None


def _device_names(ctx: Context, scope: Scope) -> list:
    """The names an enclosing scope (the module's: thousands) binds to a device, found once per analysis."""
    cache = file_facts(ctx).setdefault("device_names", {})
    if id(scope) not in cache:
        cache[id(scope)] = [name for name, bindings in scope.bindings.items()
                            if _holds_device(name, bindings, scope, False, ctx, None)]
    return cache[id(scope)]


def _holds_device(name: str, bindings, owner: Scope, same_scope: bool, ctx: Context, use: ast.AST) -> bool:
    if len(bindings) == 1 and bindings[0].kind is BindingKind.OTHER and isinstance(bindings[0].node, ast.arg):
        default = _default_of(bindings[0].node, owner)
        # `device=None` may mean "leave it where it is": `.to(None)` would not move anything.
        return name == "device" and not (isinstance(default, ast.Constant) and default.value is None)
    for binding in bindings:
        if binding.kind is not BindingKind.ASSIGN or binding.value is None:
            return False
        if same_scope and binding.node.lineno >= use.lineno:
            return False  # not bound yet where it is used
        value = ctx.value(binding.value)
        if isinstance(value, DeviceValue):
            if value.device is not None and not is_cuda(value.device):
                return False
        elif isinstance(value, ScalarValue) and value.kind == "str" and "device" in name.lower():
            if not is_cuda(normalize_device(value.value)):
                return False
        else:
            return False
    return True


def _default_of(arg: ast.arg, owner: Scope) -> Optional[ast.expr]:
    """The default value of parameter ``arg`` of the function ``owner`` belongs to (None: no default)."""
    args = getattr(owner.node, "args", None)
    if not isinstance(args, ast.arguments):
        return None
    positional = [*args.posonlyargs, *args.args]
    if arg in positional:
        offset = positional.index(arg) - (len(positional) - len(args.defaults))
        return args.defaults[offset] if offset >= 0 else None
    if arg in args.kwonlyargs:
        return args.kw_defaults[args.kwonlyargs.index(arg)]
    return None


def _libcst():
    import libcst  # only when a fix is built: its import costs ~0.5 s

    return libcst


def _rewrite_method(ctx: Context, call: ast.Call, method: str, first: Optional[str], drop_first: bool) -> Edit:
    """``cuda(0, non_blocking=True)`` -> ``to("cuda:0", non_blocking=True)``: libcst keeps the rest as written."""
    cst = _libcst()
    span = method_tail_span(ctx, call)
    tree = cst.parse_expression(ctx.source.text_of(span))
    args = list(tree.args)
    if drop_first:
        args = args[1:]
    if first is not None:
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if args else cst.MaybeSentinel.DEFAULT
        args.insert(0, cst.Arg(cst.parse_expression(first), comma=comma))
    tree = tree.with_changes(func=cst.Name(method), args=args)
    return Edit(span, cst.Module([]).code_for_node(tree))


# -- TW201 ------------------------------------------------------------------------------------------------------
_CPU_MESSAGE = "`.cpu()` is a placement method of its own; prefer `.to(\"cpu\")` like every other placement"
_CUDA_MESSAGE = ("`.cuda()` ties this code to NVIDIA GPUs; choose the device once (`device = torch.device(\"cuda\" if "
                 "torch.cuda.is_available() else \"cpu\")`) and move with `.to(device)`")


class CudaCpuMethod(Rule):
    call_names = frozenset({"cuda", "cpu"})
    reach = Reach.NAMES  # the class of an instance moved (an nn.Module or not)
    code = "TW201"
    name = "cuda-cpu-method"
    severity = Severity.HINT
    summary = ("Flags `.cuda()` on tensors and `nn.Module`s (and `.cpu()` placing a model); suggests "
               "`.to(device)`.")
    why = ("`.cuda()` pins the code to NVIDIA GPUs: the same script cannot run on a laptop, on Apple's `mps`, or "
           "on a CPU-only CI machine without edits in many places. Choosing the device once "
           "(`device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")`) and writing "
           "`.to(device)` everywhere makes it a one-line decision. A tensor's `.cpu()` is the idiomatic read-back "
           "of a result to the host (to save, plot or convert it) and is not flagged; a model's `.cpu()` is a "
           "placement like `.cuda()`.")
    fix_summary = ("`.cuda()` -> `.to(device)` when a device variable is in scope (a name bound to "
                   "`torch.device(...)`, or a `device` parameter); with none, no fix: `.to(\"cuda\")` would pin the "
                   "code to CUDA all the same, so choose the device once first. `.cuda(1)` has no fix either. "
                   "`.cpu()` -> `.to(\"cpu\")` (never a device variable: that would move the result elsewhere). "
                   "Other arguments (`non_blocking=True`) are kept.")
    valid = (
        Valid("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "x = torch.randn(3).to(device)\n"),
        Valid("def f(batch):\n    return batch.cuda()\n"),  # unknown object
        Valid("import torch\nx = torch.randn(3, device='cuda')\nvalues = x.cpu().numpy()\n"),
        Valid("import torch\nloss = torch.randn(()).sum()\nprint(loss.cpu().item())\n"),
        Valid("import torch\nw = torch.zeros(3, 3, device='cuda')\ntorch.save(w.cpu(), 'w.pt')\n"),  # a read-back
        Valid("import torch\nx = torch.randn(3)\ny = torch.cuda.device_count()\n"),
        Valid("class Batch:\n    def cuda(self):\n        return self\nb = Batch().cuda()\n"),
        Valid("import torch\n\n\nclass Pair:\n    def __init__(self, a: torch.Tensor, b: torch.Tensor):\n"
              "        self.a, self.b = a, b\n\n    def cuda(self):\n"
              "        return Pair(self.a.to('cuda'), self.b.to('cuda'))\n\n"
              "    def prepare(self):\n        return self.cuda()\n"),  # not an nn.Module: its own `.cuda()`
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(8, 3)\nif torch.cuda.is_available():\n"
                "    x = x.cuda()\n"),  # no device chosen: nothing to write
        Invalid("import torch\nimport torch.nn as nn\n\n"
                "device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
                "model = nn.Linear(16, 4).cuda()\n",
                "import torch\nimport torch.nn as nn\n\n"
                "device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
                "model = nn.Linear(16, 4).to(device)\n"),
        Invalid("import torch\n\nUSE_CUDA = torch.cuda.is_available()\n\n"
                "def train_step(model, batch: torch.Tensor, device):\n"
                "    batch = batch.cuda(non_blocking=True)\n"
                "    return model(batch)\n",
                "import torch\n\nUSE_CUDA = torch.cuda.is_available()\n\n"
                "def train_step(model, batch: torch.Tensor, device):\n"
                "    batch = batch.to(device, non_blocking=True)\n"
                "    return model(batch)\n"),
        Invalid("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n\n"
                "if torch.cuda.device_count() > 1:\n    net = Net().cuda(1)\n"),
        Invalid("import torch as T\nfrom torch import nn\nnet = nn.Linear(3, 3, device='cuda')\nnet = net.cpu()\n",
                "import torch as T\nfrom torch import nn\nnet = nn.Linear(3, 3, device='cuda')\n"
                "net = net.to(\"cpu\")\n"),
        Invalid("import torch\n\n\ndef upload(t: torch.Tensor, device=None):\n"
                "    return t.cuda() if torch.cuda.is_available() else t\n"),  # `.to(None)` would not move it
        Invalid("import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else "
                "'cpu')\nmodel = nn.Linear(4, 2).to(device)\nmodel.cpu()\n",
                "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else "
                "'cpu')\nmodel = nn.Linear(4, 2).to(device)\nmodel.to(\"cpu\")\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        func = node.func
        if not method_call(node, "cuda", "cpu") or scope.qualname(func) is not None:
            return
        if not is_placeable(ctx.value(func.value), ctx):
            return
        span = method_tail_span(ctx, node)
        if func.attr == "cpu":
            if isinstance(ctx.value(func.value), TensorValue):
                return  # reading a result back to the host is what a tensor's `.cpu()` is for
            fixes = []
            if not node.args and not any(k.arg is None for k in node.keywords):
                fixes.append(Fix("Use `.to(\"cpu\")`", lambda: [_rewrite_method(ctx, node, "to", '"cpu"', False)],
                                 preferred=True))
            yield Finding(self.code, _CPU_MESSAGE, self.severity, span, fixes)
            return
        target = self._device_variable(node, scope, ctx)
        if target is None:
            # No device chosen in scope: `.to("cuda")` would be the same pinning under another name.
            yield Finding(self.code, _CUDA_MESSAGE, self.severity, span)
            return
        fix = Fix(f"Use `.to({target})`", lambda: [_rewrite_method(ctx, node, "to", target, False)], preferred=True)
        yield Finding(self.code, f"`.cuda()` ties this code to NVIDIA GPUs; use `.to({target})`, the device this "
                                 "code already chose", self.severity, span, [fix])

    @staticmethod
    def _device_variable(node: ast.Call, scope: Scope, ctx: Context) -> Optional[str]:
        """The device variable ``.cuda()`` can become ``.to(name)`` with; None where that would change where
        the tensor goes (`.cuda(1)`) or what else the call does (an unknown keyword)."""
        if node.args or any(k.arg not in ("non_blocking", "memory_format") for k in node.keywords):
            return None
        return device_variable(scope, ctx, node)


# -- TW202 ------------------------------------------------------------------------------------------------------
def factory_name(call: ast.AST, scope: Scope) -> Optional[str]:
    if not isinstance(call, ast.Call):
        return None
    qualname = scope.qualname(call.func)
    if qualname is None or not qualname.startswith("torch.") or qualname[len("torch."):] not in FACTORIES:
        return None
    return qualname[len("torch."):]


_RANDOM_FACTORIES = frozenset({"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like"})
# Their values do not depend on the dtype they are made in: `dtype=` can move into them exactly.
_EXACT_IN_ANY_DTYPE = frozenset({"zeros", "ones", "empty", "eye", "zeros_like", "ones_like", "empty_like"})
# Between the factory and the move the tensor stays fresh: casts and in-place fills run on the CPU copy.
_CASTS = frozenset({"float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "type"})
_RANDOM_FILLS = frozenset({"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_",
                           "log_normal_", "cauchy_"})
_FILLS = _RANDOM_FILLS | {"fill_", "zero_"}
# Names that hold a device index (`.to(rank)`): a dtype or a tensor is never called that.
_INDEX_NAMES = frozenset({"rank", "local_rank", "gpu", "gpu_id", "device_id", "device_index", "gpu_index"})
_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed",
                    "torch.cuda.manual_seed_all", "lightning.seed_everything", "pytorch_lightning.seed_everything",
                    "transformers.set_seed", "accelerate.utils.set_seed"})


def _fresh_chain(expr: ast.AST, scope: Scope, ctx: Context) -> Optional[tuple[ast.Call, str, bool]]:
    """(the factory call, its name, whether a random fill follows it) when ``expr`` is a factory call, or one
    followed only by casts and in-place fills (`torch.ones(n).fill_(v)`, `torch.zeros(n).type(torch.long)`)."""
    random_fill = False
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and scope.qualname(expr.func) is None:
        method = expr.func.attr
        if method not in _CASTS | _FILLS or (method == "type" and not _dtype_argument(expr, ctx)):
            return None
        random_fill = random_fill or method in _RANDOM_FILLS
        expr = expr.func.value
    name = factory_name(expr, scope)
    return (expr, name, random_fill) if name is not None else None


def _dtype_argument(call: ast.Call, ctx: Context) -> bool:
    """`.type(torch.long)`: a dtype; `.type("torch.cuda.FloatTensor")` would move the tensor itself."""
    return len(call.args) == 1 and not call.keywords and isinstance(ctx.value(call.args[0]), DtypeValue)


def _certain_device(node: ast.AST, ctx: Context) -> bool:
    """A `.to(...)` argument that is certainly a device, never a dtype or another tensor."""
    value = ctx.value(node)
    if isinstance(value, DeviceValue):
        return True
    text = string_constant(node)
    if text is not None:
        return normalize_device(text) is not None
    if isinstance(value, ScalarValue) and value.kind == "str" and value.value is not None:
        return normalize_device(value.value) is not None
    if isinstance(value, ScalarValue) and value.kind == "int" and not isinstance(value.value, bool):
        return True  # `.to(rank)`: an int is a CUDA device index
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return True
    if value is not None and not isinstance(value, ScalarValue):
        return False  # a tensor (`.to(other)` takes its dtype too), a dtype, a module...
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    # `device`, `DEVICE`, `torch_device`, `self.device`: nobody names a dtype or a tensor so.
    return name is not None and (name.lower().endswith("device") or name.lower() in _INDEX_NAMES)


class _Move:
    """Where a `.to(...)` / `.cuda(...)` puts a fresh tensor: the `device=` text (None: a device, but no
    spelling that is safe to repeat in the factory) and the dtype it casts to on the way, if any."""

    def __init__(self, device: Optional[str], dtype: Optional[str] = None):
        self.device, self.dtype = device, dtype


def _move_of(node: ast.Call, ctx: Context) -> Optional[_Move]:
    if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if node.func.attr == "cuda":
        return _cuda_move(node, ctx)
    keywords = {k.arg: k.value for k in node.keywords}
    if set(keywords) - {"device", "dtype", "non_blocking"} or len(node.args) > 2:
        return None
    given = [*node.args[:1], *([keywords["device"]] if "device" in keywords else [])]
    dtype = keywords.get("dtype", node.args[1] if len(node.args) == 2 else None)
    if len(given) != 1:
        return None
    target = given[0]
    text = ctx.source.text_of(ctx.source.span(target))
    if isinstance(ctx.value(target), TensorValue) and dtype is None and "device" not in keywords:
        # `.to(other)` takes other's device and dtype.
        return _Move(f"{text}.device", f"{text}.dtype") if isinstance(target, (ast.Name, ast.Attribute)) \
            else _Move(None)
    if not _certain_device(target, ctx):
        return None
    if dtype is not None and "dtype" not in keywords and not isinstance(ctx.value(dtype), DtypeValue):
        return None  # a second positional argument is a dtype only when known to be one (`dtype=` always is)
    return _Move(text, ctx.source.text_of(ctx.source.span(dtype)) if dtype is not None else None)


def _cuda_move(node: ast.Call, ctx: Context) -> Optional[_Move]:
    if any(k.arg != "non_blocking" for k in node.keywords) or len(node.args) > 1:
        return None
    if not node.args:
        return _Move('"cuda"')
    index = node.args[0]
    if isinstance(index, ast.Constant) and type(index.value) is int:
        return _Move(f'"cuda:{index.value}"')
    value = ctx.value(index)
    if isinstance(value, ScalarValue) and value.kind == "int" and isinstance(index, ast.Name):
        return _Move(index.id)  # an int is a CUDA index for `device=` too (None would mean the CPU there)
    return _Move(None)


def seeds_torch(ctx: Context) -> bool:
    facts = file_facts(ctx)
    if "seeds_torch" not in facts:
        facts["seeds_torch"] = any(isinstance(node, ast.Call) and scope.qualname(node.func) in _SEEDS
                                   for node, scope in ctx.index.nodes)
    return facts["seeds_torch"]


class CreateThenMove(Rule):
    call_names = frozenset({"to", "cuda"})
    local = True
    code = "TW202"
    name = "create-then-move"
    # the fix's title and preference read the whole file (whether it ever checks CUDA, whether it seeds torch)
    findings_kept = False
    severity = Severity.WARNING
    summary = ("Flags a tensor created by a factory and moved at once (`torch.randn(3, 4).to(device)`, "
               "`torch.zeros(n).cuda()`, `torch.ones(n).fill_(v).to(rank)`, `torch.zeros(n).to(other)`); "
               "suggests `device=` in the factory.")
    why = ("The factory first allocates and fills the tensor in CPU memory, then `.to(device)` allocates it "
           "again on the GPU and copies it over (a synchronous host-to-device transfer for pageable memory): two "
           "allocations, a copy, and for random factories the CPU's generator does the work. With "
           "`requires_grad=True` it is also a bug: the moved copy is not a leaf, so its `.grad` stays `None`. "
           "`device=` makes the tensor where it will live. (Random factories then draw from that device's "
           "generator, so the numbers differ from the CPU's for the same seed.)")
    fix_summary = ("Pass the target device to the factory (`torch.randn(3, 4, device=device)`), every other argument "
                   "kept as written; a `device=` already given is replaced, casts and fills in between stay where "
                   "they are. `.to(other)` becomes `device=other.device` and its dtype. `non_blocking=` is dropped "
                   "(nothing is copied any more). For random draws the title says that a GPU then draws other "
                   "numbers for the same seed, and in a file that seeds torch the fix is not the preferred one.")
    valid = (
        Valid("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "x = torch.randn(3, 4, device=device)\n"),
        Valid("import torch\nx = torch.randn(3, 4).to(torch.float16)\n"),  # a dtype, not a device
        Valid("import torch\n\ndef f(target):\n    return torch.zeros(3).to(target)\n"),  # maybe a dtype
        Valid("import torch\nbuf = torch.empty(1024, pin_memory=True).to('cuda', non_blocking=True)\n"),
        Valid("import torch\nx = torch.randn(3, 4)\ny = x.to('cuda')\n"),  # not fresh from a factory
        Valid("import torch\nx = torch.zeros(4).type('torch.cuda.FloatTensor').to('cuda')\n"),
        Valid("import torch\n\ndef f(ref):\n    return torch.zeros(3).to(ref)\n"),  # ref may be a dtype
    )
    invalid = (
        Invalid("import torch\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
                "x = torch.randn(3, 4).to(device)\n",
                "import torch\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
                "x = torch.randn(3, 4, device=device)\n"),
        Invalid("import torch\nn = 16\nmask = torch.zeros(n, dtype=torch.bool).cuda()\n",
                "import torch\nn = 16\n"  # the file never checks for CUDA: the fix falls back, as TW205 would
                "mask = torch.zeros(n, dtype=torch.bool, device=\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"),
        Invalid("import torch\n\n\ndef positions(seq_len: int, device):\n"
                "    return torch.arange(seq_len).to(device, non_blocking=True)\n",
                "import torch\n\n\ndef positions(seq_len: int, device):\n"
                "    return torch.arange(seq_len, device=device)\n"),
        Invalid("import torch as th\nw = th.randn(\n    128,\n    64,\n    requires_grad=True,\n).to(\"cuda:0\")\n"
                "assert th.cuda.is_available()\n",
                "import torch as th\nw = th.randn(\n    128,\n    64,\n    requires_grad=True,\n"
                "    device=\"cuda:0\",\n)\nassert th.cuda.is_available()\n"),
        Invalid("import torch\nx = torch.ones(5, device='cpu').to(device='cuda')\nprint(torch.cuda.device_count())\n",
                "import torch\nx = torch.ones(5, device='cuda')\nprint(torch.cuda.device_count())\n"),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Embed(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.device = 'cpu'\n\n"
                "    def forward(self, ids: torch.Tensor):\n"
                "        return ids + torch.ones_like(ids).to(self.device)\n",
                "import torch\nimport torch.nn as nn\n\n\nclass Embed(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.device = 'cpu'\n\n"
                "    def forward(self, ids: torch.Tensor):\n"
                "        return ids + torch.ones_like(ids, device=self.device)\n"),
        Invalid("import torch\n\n\ndef run(rank, world_size):\n    bias = torch.ones(8).fill_(0.5).to(rank)\n",
                "import torch\n\n\ndef run(rank, world_size):\n    bias = torch.ones(8, device=rank).fill_(0.5)\n"),
        Invalid("import torch\nref = torch.ones(2, dtype=torch.float64)\nx = torch.zeros(2).to(ref)\n",
                "import torch\nref = torch.ones(2, dtype=torch.float64)\nx = torch.zeros(2, dtype=ref.dtype, "
                "device=ref.device)\n"),
        Invalid("import torch\n\n\ndef make(n: int, device):\n"
                "    return torch.full((n,), 0.1).to(device=device, dtype=torch.float16)\n",
                "import torch\n\n\ndef make(n: int, device):\n"
                "    return torch.full((n,), 0.1, device=device).to(dtype=torch.float16)\n"),
        Invalid("import torch\n\n\ndef labels(n: int, device):\n"
                "    return torch.zeros(n).type(torch.long).to(device)\n",
                "import torch\n\n\ndef labels(n: int, device):\n"
                "    return torch.zeros(n, device=device).type(torch.long)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if not method_call(node, "to", "cuda") or scope.qualname(node.func) is not None:
            return
        chain = _fresh_chain(node.func.value, scope, ctx)
        if chain is None:
            return
        factory, name, random_fill = chain
        if any(k.arg in ("pin_memory", "out") or k.arg is None for k in factory.keywords):
            return
        move = _move_of(node, ctx)
        if move is None:
            return
        grad = any(k.arg == "requires_grad" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                   for k in factory.keywords)
        message = (f"`torch.{name}(...)` is made on the CPU, then copied to the device; pass `device=` to create "
                   "it there")
        if grad:
            message += " (the moved copy is not a leaf: its `.grad` stays None)"
        span = method_tail_span(ctx, node)
        if move.device is None:
            yield Finding(self.code, message, self.severity, span)
            return
        random = name in _RANDOM_FACTORIES or random_fill
        fallback = _with_fallback(ctx, node, move.device) is not None
        title = f"Create it there: `torch.{name}(..., device={_short(move.device)})`" + (
            " (on a GPU this draws other random numbers: the device's generator)" if random else "") + (
            ", falling back to the CPU without CUDA (this file never checks)" if fallback else "")
        fix = Fix(title, lambda: [Edit(ctx.source.span(node), _created_there(ctx, node, factory, name, move))],
                  preferred=not (random and seeds_torch(ctx)))
        yield Finding(self.code, message, self.severity, span, [fix])


def _created_there(ctx: Context, move_call: ast.Call, factory: ast.Call, name: str, move: _Move,
                   factory_text: Optional[str] = None) -> str:
    """The moved expression rewritten: the factory with `device=` (and `dtype=` where that is exact), the casts
    and fills between kept as written, and a cast left where the dtype cannot move in. ``factory_text`` is the
    factory as another fix already rewrote it (a legacy constructor become `torch.empty(...)`)."""
    text = factory_text if factory_text is not None else ctx.source.text_of(ctx.source.span(factory))
    given = {k.arg for k in ast.parse(text.strip(), mode="eval").body.keywords}
    settings = {}
    cast = None
    if move.dtype is not None:
        if name in _EXACT_IN_ANY_DTYPE and "dtype" not in given and move_call.func.value is factory:
            settings["dtype"] = move.dtype
        else:
            cast = move.dtype
    settings["device"] = _with_fallback(ctx, move_call, move.device) or move.device
    text = _with_keywords(text, settings)
    source = ctx.source
    text += source.text_of(Span(source.span(factory).end, source.span(move_call.func.value).end))
    if cast is not None:
        text += f".to(dtype={cast})" if any(k.arg == "dtype" for k in move_call.keywords) else f".to({cast})"
    return text


def _with_fallback(ctx: Context, node: ast.AST, device: str) -> Optional[str]:
    """`"cuda"` where TW205 would flag it at once (the file never checks for CUDA): written with its fallback,
    `"cuda" if torch.cuda.is_available() else "cpu"`, as TW205's fix would, so that one pass of fixes is final.
    None when that is not the case, or torch has no spelling here that needs no new import."""
    literal = device.strip()
    if cuda_literal(ast.parse(literal, mode="eval").body) is None or not imports_torch(ctx) or chooses_cuda(ctx):
        return None
    scope = _scope_of(ctx, node)
    spelled = edits.module_name(scope, ctx.tree, "torch") if scope is not None else None
    if spelled is None or spelled[1]:
        return None
    quote = literal[-1]
    return f"{literal} if {spelled[0]}.cuda.is_available() else {quote}cpu{quote}"


def _scope_of(ctx: Context, node: ast.AST) -> Optional[Scope]:
    facts = file_facts(ctx)
    if "call_scopes" not in facts:
        facts["call_scopes"] = {n: scope for n, scope in ctx.index.nodes if isinstance(n, ast.Call)}
    return facts["call_scopes"].get(node)


def _with_keywords(text: str, settings: dict) -> str:
    """The call ``text`` with each keyword of ``settings`` set (replacing one already given, else appended)."""
    given = {k.arg for k in ast.parse(text.strip(), mode="eval").body.keywords}
    replaced = {name: value for name, value in settings.items() if name in given}
    if replaced:
        cst = _libcst()
        tree = cst.parse_expression(text)
        args = [arg.with_changes(value=cst.parse_expression(replaced[arg.keyword.value]))
                if arg.keyword is not None and arg.keyword.value in replaced else arg for arg in tree.args]
        text = cst.Module([]).code_for_node(tree.with_changes(args=args))
    appended = [edits.keyword(name, value) for name, value in settings.items() if name not in given]
    if not appended:
        return text
    return edits.rewrite_call(SourceFile(text), ast.parse(text, mode="eval").body, None, appended).new_text


def moved_at_once(ctx: Context, scope: Scope, call: ast.Call) -> Optional[tuple[ast.Call, _Move]]:
    """The move that takes ``call``'s fresh result straight to a device (`torch.Tensor(3).cuda()`,
    `torch.LongTensor(n).random_(8).to(rank)`), with where it goes; None when there is none, or no safe spelling.
    A fix that rewrites ``call`` into a factory folds it in as `device=`, or the next pass would flag it."""
    outer_calls = _outer_calls(ctx, call)
    node = call
    while True:
        outer = outer_calls.get(node)
        if outer is None:
            return None
        attribute = outer.func
        if attribute.attr in ("to", "cuda") and scope.qualname(attribute) is None:
            move = _move_of(outer, ctx)
            return (outer, move) if move is not None and move.device is not None else None
        if attribute.attr not in _CASTS | _FILLS or (attribute.attr == "type" and not _dtype_argument(outer, ctx)):
            return None
        node = outer


def with_device(ctx: Context, factory: ast.Call, factory_text: str, moved: tuple) -> str:
    """``factory`` (rewritten as ``factory_text``) created on the device ``moved`` takes it to."""
    move_call, move = moved
    return _created_there(ctx, move_call, factory, "", move, factory_text)


def _outer_calls(ctx: Context, call: ast.Call) -> dict:
    """A call -> the method call made on its result (`torch.Tensor(3)` -> `torch.Tensor(3).cuda()`), in the top-level
    statement holding ``call`` (kept with it)."""
    top = ctx.top_level_of(call)
    if top is None:
        return {}
    part = ctx.index.parts[top]
    found = part.memo.get("transfers.outer_calls")
    if found is None:
        found = part.memo["transfers.outer_calls"] = {
            node.func.value: node for node, _ in part.nodes if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call)}
    return found


def _short(text: str, limit: int = 30) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- TW205 ------------------------------------------------------------------------------------------------------
_FILE_FACTS: "weakref.WeakKeyDictionary[Context, dict]" = weakref.WeakKeyDictionary()


def file_facts(ctx: Context) -> dict:
    """Facts about the whole file, computed once per analysis (several rules and nodes ask)."""
    facts = _FILE_FACTS.get(ctx)
    if facts is None:
        facts = _FILE_FACTS[ctx] = {}
    return facts


def chooses_cuda(ctx: Context) -> bool:
    """The file checks for CUDA (`torch.cuda.is_available()`...) or deliberately commits to it (NCCL, set_device)."""
    facts = file_facts(ctx)
    if "chooses_cuda" not in facts:
        facts["chooses_cuda"] = any(ctx.per_statement("transfers.chooses_cuda", lambda stmt: any(
            _is_cuda_choice(node, scope) for node, scope in ctx.index.parts[stmt].nodes
            if isinstance(node, ast.Call)), resolved=True))
    return facts["chooses_cuda"]


def _is_cuda_choice(call: ast.Call, scope: Scope) -> bool:
    qualname = scope.qualname(call.func)
    if qualname in _CUDA_CHOICE:
        return True
    if qualname == "torch.distributed.init_process_group":
        backend = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "backend"), None)
        return backend is not None and string_constant(backend) == "nccl"
    return False


def imports_torch(ctx: Context) -> bool:
    facts = file_facts(ctx)
    if "imports_torch" not in facts:
        facts["imports_torch"] = any(ctx.per_statement("transfers.imports_torch", _imports_torch))
    return facts["imports_torch"]


def _imports_torch(top: ast.stmt) -> bool:
    """``top`` imports torch, or a module of it, anywhere in its code."""
    return any(
        isinstance(stmt, ast.Import) and any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
        or isinstance(stmt, ast.ImportFrom) and (stmt.module or "").split(".")[0] == "torch" and not stmt.level
        for stmt in _statements(top) if isinstance(stmt, (ast.Import, ast.ImportFrom)))


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # the fields that hold statements (an import is one)


def _statements(top: ast.stmt) -> list:
    """Every statement in ``top`` (itself included), at any depth: only blocks are walked, not expressions, which
    hold no statement (a walk of every node cost 0.66 s on a 200k-line file's first analysis)."""
    found, stack = [], [top]
    while stack:
        node = stack.pop()
        found.append(node)
        for name in _BLOCKS:
            block = getattr(node, name, None)
            if block:
                stack.extend(block)
    return found


class HardCodedCuda(Rule):
    code = "TW205"
    name = "hard-coded-cuda"
    severity = Severity.INFO
    summary = ("Flags a hard-coded CUDA device (`torch.device(\"cuda\")`, `device=\"cuda\"`, `.to(\"cuda\")`, "
               "`device = \"cuda\"`, `.cuda()`) in a file that never checks `torch.cuda.is_available()`.")
    why = ("The script fails on any machine without an NVIDIA GPU (`AssertionError: Torch not compiled with CUDA "
           "enabled`, `RuntimeError: No CUDA GPUs are available`): a laptop, Apple silicon, CPU-only CI. Choosing "
           "the device from what is available keeps one script for every machine. Files that deliberately "
           "commit to CUDA (`torch.cuda.set_device`, `init_process_group(\"nccl\")`, `torch.cuda.device_count()`) "
           "are not flagged.")
    fix_summary = ("The literal becomes `\"cuda\" if torch.cuda.is_available() else \"cpu\"` (for "
                   "`torch.device(\"cuda\")`: `torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")`). "
                   "`.cuda()` becomes `.to(device)` when a device variable is in scope (as TW201 would do), "
                   "else it has no fix: choose the device once first.")
    node_types = (ast.Call, ast.Assign, ast.AnnAssign)
    reach = Reach.NAMES  # the class of an instance moved
    valid = (
        Valid("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "x = torch.zeros(3, device=device)\n"),
        Valid("import torch\nx = torch.zeros(3)\nif torch.cuda.is_available():\n    x = x.cuda()\n"),
        Valid("import torch\nimport torch.distributed as dist\n\ndef main(rank):\n"
              "    dist.init_process_group('nccl')\n    torch.cuda.set_device(rank)\n"
              "    x = torch.zeros(3, device='cuda')\n"),
        Valid("import torch\nx = torch.zeros(3, device='cpu')\n"),
        Valid("def describe(device='cuda'):\n    return f'running on {device}'\n"),  # no torch in the file
        Valid("import torch\nfrom torch.cuda import is_available\n"
              "DEVICE = 'cuda' if is_available() else 'cpu'\nx = torch.ones(2).to('cuda')\n"),
    )
    invalid = (
        Invalid("import torch\ndevice = torch.device(\"cuda\")\n",
                "import torch\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"),
        Invalid("import torch\nx = torch.randn(4, 4, device='cuda')\n",
                "import torch\nx = torch.randn(4, 4, device='cuda' if torch.cuda.is_available() else 'cpu')\n"),
        Invalid("import torch\n\nDEVICE = \"cuda:0\"\n",
                "import torch\n\nDEVICE = \"cuda:0\" if torch.cuda.is_available() else \"cpu\"\n"),
        Invalid("import torch as T\n\ndef prepare(batch):\n    return batch.to(\"cuda\", non_blocking=True)\n",
                "import torch as T\n\ndef prepare(batch):\n"
                "    return batch.to(\"cuda\" if T.cuda.is_available() else \"cpu\", non_blocking=True)\n"),
        Invalid("import torch\n\nTRAIN_DEVICE: str = 'cuda'\n",
                "import torch\n\nTRAIN_DEVICE: str = 'cuda' if torch.cuda.is_available() else 'cpu'\n"),
        Invalid("import torch\nfrom torch import nn\nmodel = nn.Linear(8, 2).cuda()\n"),
        Invalid("import torch\n\n\ndef upload(batch: torch.Tensor, device):\n    return batch.cuda(non_blocking=True)\n",
                "import torch\n\n\ndef upload(batch: torch.Tensor, device):\n"
                "    return batch.to(device, non_blocking=True)\n"),  # TW201's fix, which this finding speaks for
    )

    def outside(self, ctx: Context) -> tuple:
        return imports_torch(ctx), chooses_cuda(ctx)

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if not imports_torch(ctx) or chooses_cuda(ctx):
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and "device" in targets[0].id.lower() \
                    and node.value is not None and cuda_literal(node.value):
                yield self._literal(node.value, scope, ctx)
            return
        qualname = scope.qualname(node.func)
        if qualname == "torch.device":
            kind = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "type"), None)
            if kind is not None and cuda_literal(kind):
                fixable = len(node.args) + len(node.keywords) == 1
                yield self._literal(kind, scope, ctx, report_on=node, fixable=fixable)
            return
        for keyword in node.keywords:
            if keyword.arg == "device" and cuda_literal(keyword.value):
                yield self._literal(keyword.value, scope, ctx)
        if qualname is not None or not isinstance(node.func, ast.Attribute):
            return
        if node.func.attr == "to" and node.args and cuda_literal(node.args[0]):
            yield self._literal(node.args[0], scope, ctx)
        elif node.func.attr == "cuda" and is_placeable(ctx.value(node.func.value), ctx):
            yield self._cuda_method(node, scope, ctx)

    def _cuda_method(self, node: ast.Call, scope: Scope, ctx: Context) -> Finding:
        """`.cuda()` in a file that never checks: moved with `.to(device)` when a device variable is in scope (the
        fix TW201 would offer, which this finding speaks for at the same call)."""
        message = "`.cuda()` fails on machines without CUDA, and this file never checks `torch.cuda.is_available()`"
        target = CudaCpuMethod._device_variable(node, scope, ctx)
        fixes = [] if target is None else [
            Fix(f"Use `.to({target})`", lambda: [_rewrite_method(ctx, node, "to", target, False)], preferred=True)]
        return Finding(self.code, message, self.severity, method_tail_span(ctx, node), fixes)

    def _literal(self, literal: ast.Constant, scope: Scope, ctx: Context, report_on: Optional[ast.AST] = None,
                 fixable: bool = True) -> Finding:
        message = (f"hard-coded device {literal.value!r} fails on machines without CUDA, and this file never checks "
                   "`torch.cuda.is_available()`")
        fixes = []
        if fixable and edits.module_name(scope, ctx.tree, "torch") is not None:
            def build():
                torch, extra = edits.module_name(scope, ctx.tree, "torch")
                text = ctx.source.text_of(ctx.source.span(literal))
                quote = text[-1]
                return [Edit(ctx.source.span(literal),
                             f"{text} if {torch}.cuda.is_available() else {quote}cpu{quote}"), *extra]
            fixes.append(Fix("Fall back to the CPU when CUDA is not available", build, preferred=True))
        return self.finding(ctx, report_on or literal, message, fixes)


RULES = (CudaCpuMethod, CreateThenMove, HardCodedCuda)
