"""TW2xx: where tensors are put. TW201 `.cuda()`/`.cpu()`, TW202 create-then-move, TW205 hard-coded "cuda"."""

from __future__ import annotations

import ast
import weakref
from typing import Iterator, Optional

from torchwise.analysis.ops import normalize_device
from torchwise.analysis.scopes import BindingKind, Scope, ScopeKind
from torchwise.analysis.values import DeviceValue, InstanceValue, ModuleValue, ScalarValue, TensorValue
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span
from torchwise.rules import edits
from torchwise.rules.base import Context, Invalid, Rule, Valid

# Factories that take `device=`: `torch.<name>(..., device=d)` makes the tensor where it will live.
FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace", "logspace",
    "eye", "tensor", "as_tensor", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like",
})
# `.cpu()` straight into one of these is the idiomatic read-back to the host, not a device placement.
_HOST_READBACK = frozenset({"numpy", "tolist", "item"})
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
    seen: set[str] = set()
    current: Optional[Scope] = scope
    depth = 0
    while current is not None:
        if current.kind is not ScopeKind.CLASS or current is scope:
            for name, bindings in current.bindings.items():
                if name in seen:
                    continue
                seen.add(name)
                if scope.owner_of(name) is current and \
                        _holds_device(name, bindings, current, current is scope, ctx, use):
                    found.append((0 if name == "device" else 1 + depth, name))
        current = current.parent
        depth += 1
    return min(found)[1] if found else None


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


class CudaCpuMethod(Rule):
    call_names = frozenset({"cuda", "cpu"})
    code = "TW201"
    name = "cuda-cpu-method"
    severity = Severity.HINT
    summary = ("Flags `.cuda()` (and `.cpu()` used to place a tensor or model) on tensors and `nn.Module`s; "
               "suggests `.to(device)`.")
    why = ("`.cuda()` pins the code to NVIDIA GPUs: the same script cannot run on a laptop, on Apple's `mps`, or "
           "on a CPU-only CI machine without edits in many places. Choosing the device once "
           "(`device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")`) and writing "
           "`.to(device)` everywhere makes it a one-line decision. `.cpu()` straight into `.numpy()`, "
           "`.tolist()` or `.item()` is the idiomatic read-back to the host and is not flagged.")
    fix_summary = ("`.cuda()` -> `.to(device)` when a device variable is in scope (a name bound to "
                   "`torch.device(...)`, or a `device` parameter), else `.to(\"cuda\")` (`.cuda(1)` -> "
                   "`.to(\"cuda:1\")`); `.cpu()` -> `.to(\"cpu\")` (never a device variable: that would move the "
                   "result elsewhere). Other arguments (`non_blocking=True`) are kept.")
    valid = (
        Valid("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "x = torch.randn(3).to(device)\n"),
        Valid("def f(batch):\n    return batch.cuda()\n"),  # unknown object
        Valid("import torch\nx = torch.randn(3, device='cuda')\nvalues = x.cpu().numpy()\n"),
        Valid("import torch\nloss = torch.randn(()).sum()\nprint(loss.cpu().item())\n"),
        Valid("import torch\nx = torch.randn(3)\ny = torch.cuda.device_count()\n"),
        Valid("class Batch:\n    def cuda(self):\n        return self\nb = Batch().cuda()\n"),
        Valid("import torch\n\n\nclass Pair:\n    def __init__(self, a: torch.Tensor, b: torch.Tensor):\n"
              "        self.a, self.b = a, b\n\n    def cuda(self):\n"
              "        return Pair(self.a.to('cuda'), self.b.to('cuda'))\n\n"
              "    def prepare(self):\n        return self.cuda()\n"),  # not an nn.Module: its own `.cuda()`
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(8, 3)\nx = x.cuda()\n",
                "import torch\nx = torch.randn(8, 3)\nx = x.to(\"cuda\")\n"),
        Invalid("import torch\nimport torch.nn as nn\n\n"
                "device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
                "model = nn.Linear(16, 4).cuda()\n",
                "import torch\nimport torch.nn as nn\n\n"
                "device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
                "model = nn.Linear(16, 4).to(device)\n"),
        Invalid("import torch\n\n"
                "def train_step(model, batch: torch.Tensor, device):\n"
                "    batch = batch.cuda(non_blocking=True)\n"
                "    return model(batch)\n",
                "import torch\n\n"
                "def train_step(model, batch: torch.Tensor, device):\n"
                "    batch = batch.to(device, non_blocking=True)\n"
                "    return model(batch)\n"),
        Invalid("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n\nnet = Net().cuda(1)\n",
                "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n\nnet = Net().to(\"cuda:1\")\n"),
        Invalid("import torch as T\nw = T.zeros(3, 3, device='cuda')\nw_host = w.cpu()\n",
                "import torch as T\nw = T.zeros(3, 3, device='cuda')\nw_host = w.to(\"cpu\")\n"),
        Invalid("import torch\n\n\ndef upload(t: torch.Tensor, device=None):\n    return t.cuda()\n",
                "import torch\n\n\ndef upload(t: torch.Tensor, device=None):\n"
                "    return t.to(\"cuda\")\n"),  # not `.to(device)`: `.to(None)` would not move it
        Invalid("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
                "def to_host(t: torch.Tensor):\n    return t.cpu()\n",
                "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
                "def to_host(t: torch.Tensor):\n    return t.to(\"cpu\")\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        func = node.func
        if not method_call(node, "cuda", "cpu") or scope.qualname(func) is not None:
            return
        if not is_placeable(ctx.value(func.value), ctx):
            return
        if func.attr == "cpu":
            if ctx.index.method_called_on.get(node) in _HOST_READBACK:
                return
            if node.args or any(k.arg is None for k in node.keywords):
                yield self.finding(ctx, node, _CPU_MESSAGE)
                return
            fix = Fix("Use `.to(\"cpu\")`", lambda: [_rewrite_method(ctx, node, "to", '"cpu"', False)],
                      preferred=True)
            yield self.finding(ctx, node, _CPU_MESSAGE, [fix])
            return
        target, drop_first = self._cuda_target(node, scope, ctx)
        message = "`.cuda()` ties this code to NVIDIA GPUs; prefer `.to(device)` with a device chosen once"
        if target is None:
            yield self.finding(ctx, node, message)
            return
        fix = Fix(f"Use `.to({target})`", lambda: [_rewrite_method(ctx, node, "to", target, drop_first)],
                  preferred=True)
        yield self.finding(ctx, node, message, [fix])

    @staticmethod
    def _cuda_target(node: ast.Call, scope: Scope, ctx: Context) -> tuple[Optional[str], bool]:
        """What to pass to ``.to``, and whether the first positional argument (the index) is dropped."""
        if any(k.arg not in ("non_blocking", "memory_format") for k in node.keywords):
            return None, False
        if node.args:
            index = node.args[0]
            if len(node.args) == 1 and isinstance(index, ast.Constant) and type(index.value) is int:
                return f'"cuda:{index.value}"', True
            return None, False
        return device_variable(scope, ctx, node) or '"cuda"', False


# -- TW202 ------------------------------------------------------------------------------------------------------
def factory_name(call: ast.AST, scope: Scope) -> Optional[str]:
    if not isinstance(call, ast.Call):
        return None
    qualname = scope.qualname(call.func)
    if qualname is None or not qualname.startswith("torch.") or qualname[len("torch."):] not in FACTORIES:
        return None
    return qualname[len("torch."):]


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
    if value is not None and not isinstance(value, ScalarValue):
        return False  # a tensor (`.to(other)` takes its dtype too), a dtype, a module...
    return (isinstance(node, ast.Name) and node.id == "device") or \
        (isinstance(node, ast.Attribute) and node.attr == "device")


class CreateThenMove(Rule):
    call_names = frozenset({"to", "cuda"})
    code = "TW202"
    name = "create-then-move"
    severity = Severity.WARNING
    summary = ("Flags a tensor created by a factory and moved at once (`torch.randn(3, 4).to(device)`, "
               "`torch.zeros(n).cuda()`); suggests `device=` in the factory.")
    why = ("The factory first allocates and fills the tensor in CPU memory, then `.to(device)` allocates it "
           "again on the GPU and copies it over (a synchronous host-to-device transfer for pageable memory): two "
           "allocations, a copy, and for random factories the CPU's generator does the work. With "
           "`requires_grad=True` it is also a bug: the moved copy is not a leaf, so its `.grad` stays `None`. "
           "`device=` makes the tensor where it will live. (Random factories then draw from that device's "
           "generator, so the numbers differ from the CPU's for the same seed.)")
    fix_summary = ("Pass the target device to the factory (`torch.randn(3, 4, device=device)`), every other argument "
                   "kept as written; a `device=` already given is replaced. `non_blocking=` is dropped (nothing is "
                   "copied any more).")
    valid = (
        Valid("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "x = torch.randn(3, 4, device=device)\n"),
        Valid("import torch\nx = torch.randn(3, 4).to(torch.float16)\n"),  # a dtype, not a device
        Valid("import torch\nref = torch.ones(2)\nx = torch.zeros(2).to(ref)\n"),  # takes ref's dtype too
        Valid("import torch\n\ndef f(target):\n    return torch.zeros(3).to(target)\n"),  # maybe a dtype
        Valid("import torch\nbuf = torch.empty(1024, pin_memory=True).to('cuda', non_blocking=True)\n"),
        Valid("import torch\nx = torch.randn(3, 4)\ny = x.to('cuda')\n"),  # not fresh from a factory
    )
    invalid = (
        Invalid("import torch\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
                "x = torch.randn(3, 4).to(device)\n",
                "import torch\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
                "x = torch.randn(3, 4, device=device)\n"),
        Invalid("import torch\nn = 16\nmask = torch.zeros(n, dtype=torch.bool).cuda()\n",
                "import torch\nn = 16\nmask = torch.zeros(n, dtype=torch.bool, device=\"cuda\")\n"),
        Invalid("import torch\n\n\ndef positions(seq_len: int, device):\n"
                "    return torch.arange(seq_len).to(device, non_blocking=True)\n",
                "import torch\n\n\ndef positions(seq_len: int, device):\n"
                "    return torch.arange(seq_len, device=device)\n"),
        Invalid("import torch as th\nw = th.randn(\n    128,\n    64,\n    requires_grad=True,\n).to(\"cuda:0\")\n",
                "import torch as th\nw = th.randn(\n    128,\n    64,\n    requires_grad=True,\n"
                "    device=\"cuda:0\",\n)\n"),
        Invalid("import torch\nx = torch.ones(5, device='cpu').to(device='cuda')\n",
                "import torch\nx = torch.ones(5, device='cuda')\n"),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Embed(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.device = 'cpu'\n\n"
                "    def forward(self, ids: torch.Tensor):\n"
                "        return ids + torch.ones_like(ids).to(self.device)\n",
                "import torch\nimport torch.nn as nn\n\n\nclass Embed(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.device = 'cpu'\n\n"
                "    def forward(self, ids: torch.Tensor):\n"
                "        return ids + torch.ones_like(ids, device=self.device)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if not method_call(node, "to", "cuda") or scope.qualname(node.func) is not None:
            return
        factory = node.func.value
        name = factory_name(factory, scope)
        if name is None:
            return
        if any(k.arg in ("pin_memory", "out") or k.arg is None for k in factory.keywords):
            return
        device = self._target(node, ctx)
        if device is None:
            return
        grad = any(k.arg == "requires_grad" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                   for k in factory.keywords)
        message = (f"`torch.{name}(...)` is made on the CPU, then copied to the device; pass `device=` to create "
                   "it there")
        if grad:
            message += " (the moved copy is not a leaf: its `.grad` stays None)"
        text = device[1]
        if text is None:
            yield self.finding(ctx, node, message)
            return
        fix = Fix(f"Create it there: `torch.{name}(..., device={text})`",
                  lambda: [Edit(ctx.source.span(node), _with_device(ctx, factory, text))], preferred=True)
        yield self.finding(ctx, node, message, [fix])

    @staticmethod
    def _target(node: ast.Call, ctx: Context) -> Optional[tuple[str, Optional[str]]]:
        """("device", text for `device=` or None when no fix) when the move's target is certainly a device."""
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        if node.func.attr == "cuda":
            if any(k.arg != "non_blocking" for k in node.keywords) or len(node.args) > 1:
                return None
            if not node.args:
                return "device", '"cuda"'
            index = node.args[0]
            if isinstance(index, ast.Constant) and type(index.value) is int:
                return "device", f'"cuda:{index.value}"'
            return "device", None
        given = [*node.args, *(k.value for k in node.keywords if k.arg == "device")]
        if len(given) != 1 or any(k.arg not in ("device", "non_blocking") for k in node.keywords):
            return None
        if not _certain_device(given[0], ctx):
            return None
        return "device", ctx.source.text_of(ctx.source.span(given[0]))


def _with_device(ctx: Context, factory: ast.Call, device_text: str) -> str:
    """The factory call with ``device=`` set to ``device_text`` (replacing one already given)."""
    if not any(k.arg == "device" for k in factory.keywords):
        return edits.rewrite_call(ctx.source, factory, None, [edits.keyword("device", device_text)]).new_text
    cst = _libcst()
    tree = cst.parse_expression(ctx.source.text_of(ctx.source.span(factory)))
    args = [arg.with_changes(value=cst.parse_expression(device_text))
            if arg.keyword is not None and arg.keyword.value == "device" else arg for arg in tree.args]
    return cst.Module([]).code_for_node(tree.with_changes(args=args))


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
        facts["chooses_cuda"] = any(_is_cuda_choice(node, scope) for node, scope in ctx.index.nodes
                                    if isinstance(node, ast.Call))
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
        facts["imports_torch"] = any(
            isinstance(stmt, ast.Import) and any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
            or isinstance(stmt, ast.ImportFrom) and (stmt.module or "").split(".")[0] == "torch" and not stmt.level
            for stmt in ast.walk(ctx.tree) if isinstance(stmt, (ast.Import, ast.ImportFrom)))
    return facts["imports_torch"]


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
                   "`.cuda()` has no fix here: TW201 turns it into `.to(...)`.")
    node_types = (ast.Call, ast.Assign, ast.AnnAssign)
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
    )

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
            yield self.finding(ctx, node, "`.cuda()` fails on machines without CUDA, and this file never checks "
                                          "`torch.cuda.is_available()`")

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
