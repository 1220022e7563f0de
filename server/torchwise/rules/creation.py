"""TW1xx: how tensors are created."""

from __future__ import annotations

import ast
from typing import Iterator

from torchwise.analysis.legacy import LEGACY_CONSTRUCTORS
from torchwise.analysis.scopes import Scope
from torchwise.analysis.values import NdarrayValue, ScalarValue, SeqValue, TensorValue
from torchwise.findings import Finding, Fix, Severity
from torchwise.rules import edits
from torchwise.rules.base import Context, Invalid, Rule, Valid

LEGACY_NAMES = frozenset(qualname.rsplit(".", 1)[1] for qualname in LEGACY_CONSTRUCTORS)
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
    args = call.args
    if all(_is_int(ctx.value(arg)) for arg in args):
        return True  # includes `torch.Tensor()`
    if len(args) != 1:
        return False
    arg = args[0]
    if isinstance(arg, ast.Call) and scope.qualname(arg.func) == "torch.Size":
        return True
    value = ctx.value(arg)
    # `t.size()`/`t.shape` of a tensor is a torch.Size: a size (an ndarray's `.shape` is a tuple: data).
    return isinstance(value, SeqValue) and value.kind == "size"


def _is_int(value) -> bool:
    return isinstance(value, ScalarValue) and value.kind == "int"


def _is_data(expr: ast.expr, ctx: Context) -> bool:
    if isinstance(expr, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    value = ctx.value(expr)
    return isinstance(value, NdarrayValue) or (isinstance(value, SeqValue) and value.kind in ("list", "tuple"))


def _sets_default_dtype(ctx: Context) -> bool:
    return any(
        isinstance(node, ast.Call) and scope.qualname(node.func) in _DEFAULT_DTYPE_SETTERS
        for node, scope in ctx.index.nodes
    )


def _short(source_text: str, limit: int = 40) -> str:
    text = " ".join(source_text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LegacyConstructorWithSize(Rule):
    call_names = LEGACY_NAMES
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
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        legacy = _legacy(node, scope)
        if legacy is None or not _is_size(node, scope, ctx):
            return
        qualname, dtype, device = legacy
        spelled = _short(ctx.source.text_of(ctx.source.span(node.func)))
        message = (f"`{spelled}(...)` with a size returns uninitialized memory; "
                   f"use `torch.empty(...)` to say so, or `torch.zeros(...)`")
        fixes = [Fix(f"Replace with `torch.{factory}(...)`" + (" (zero-filled)" if factory == "zeros" else ""),
                     _factory_fix(ctx, node, scope, factory, dtype, device), preferred=factory == "empty")
                 for factory in ("empty", "zeros")]
        yield self.finding(ctx, node, message, fixes if edits.module_name(scope, ctx.tree, "torch") else ())


def _factory_fix(ctx: Context, call: ast.Call, scope: Scope, factory: str, dtype: str | None, device: str | None):
    def build():
        torch, extra = edits.module_name(scope, ctx.tree, "torch")
        append = []
        if not call.args:
            append.append(edits.positional("0"))
        append.extend(_dtype_device_args(torch, call, dtype, device))
        return [edits.rewrite_call(ctx.source, call, f"{torch}.{factory}", append), *extra]
    return build


def _dtype_device_args(torch: str, call: ast.Call, dtype: str | None, device: str | None):
    args = []
    if dtype is not None:
        args.append(edits.keyword("dtype", f"{torch}.{dtype}"))
    if device is not None and not any(kw.arg == "device" for kw in call.keywords):
        args.append(edits.keyword("device", f'"{device}"'))
    return args


class LegacyConstructorWithData(Rule):
    call_names = LEGACY_NAMES
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
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        legacy = _legacy(node, scope)
        if legacy is None or len(node.args) != 1 or not _is_data(node.args[0], ctx):
            return
        qualname, dtype, device = legacy
        spelled = _short(ctx.source.text_of(ctx.source.span(node.func)))
        shown_dtype = f"torch.{dtype}" if dtype else "torch.float32"
        message = f"`{spelled}(data)` is a deprecated constructor; use `torch.tensor(data, dtype={shown_dtype})`"

        def build():
            torch, extra = edits.module_name(scope, ctx.tree, "torch")
            spelled_dtype = dtype or ("get_default_dtype()" if _sets_default_dtype(ctx) else "float32")
            append = [edits.keyword("dtype", f"{torch}.{spelled_dtype}")]
            append.extend(_dtype_device_args(torch, node, None, device))
            return [edits.rewrite_call(ctx.source, node, f"{torch}.tensor", append), *extra]

        fixes = [Fix(f"Replace with `torch.tensor(data, dtype={shown_dtype})`", build, preferred=True)]
        yield self.finding(ctx, node, message, fixes if edits.module_name(scope, ctx.tree, "torch") else ())


class GlobalDefaultDtype(Rule):
    call_names = frozenset({"set_default_dtype", "set_default_tensor_type"})
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
            yield self.finding(ctx, node, "`torch.set_default_dtype(...)` changes the dtype of every float tensor "
                                          "created afterwards, everywhere; pass `dtype=` where tensors are made")
        elif qualname == "torch.set_default_tensor_type":
            yield self.finding(ctx, node, "`torch.set_default_tensor_type(...)` is deprecated and changes every "
                                          "tensor created afterwards; pass `dtype=`/`device=` where tensors are made")


class TensorOfTensors(Rule):
    call_names = frozenset({"tensor"})
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
            yield self.finding(ctx, node, f"`torch.tensor` of tensors with {_numel(shape)} elements (shape "
                                          f"{_shape_text(shape)}) raises ValueError; use `torch.stack(...)`", fixes)
        elif all_known:
            yield self.finding(ctx, node, "`torch.tensor` of one-element tensors copies their values and cuts "
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
        yield self.finding(ctx, node, "`torch.tensor(t)` of a tensor copies it and cuts it from autograd; use "
                                      "`t.clone().detach()` (or `torch.as_tensor(t)` to avoid the copy)", fixes)


_NUMPY_CONVERSIONS = ("torch.tensor", "torch.from_numpy", "torch.as_tensor")
_CASTS = frozenset({"float", "half", "bfloat16", "to", "type", "type_as", "long", "int", "double"})


class Float64FromNumpy(Rule):
    call_names = frozenset({"tensor", "from_numpy", "as_tensor"})
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
        yield self.finding(ctx, node, f"`torch.{function}` of a float64 ndarray makes a float64 tensor; models are "
                                      "float32", [fix] if edits.module_name(scope, ctx.tree, "torch") else [])


RULES = (LegacyConstructorWithSize, LegacyConstructorWithData, TensorOfTensor, Float64FromNumpy, GlobalDefaultDtype,
         TensorOfTensors)
