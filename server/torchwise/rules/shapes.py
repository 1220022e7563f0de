"""TW5xx: shapes and dtypes that make PyTorch raise, known before the code runs."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from torchwise.analysis import dims, dtypes, optable, shapes
from torchwise.analysis.dims import readable_shape
from torchwise.analysis.ops import MATMUL_KINDS
from torchwise.analysis.scopes import Scope
from torchwise.analysis.values import InstanceValue, ModuleValue, ScalarValue, SeqValue, TensorValue
from torchwise.findings import Edit, Finding, Fix, Severity
from torchwise.rules import edits
from torchwise.rules.base import Context, Invalid, Rule, Valid

# Methods that broadcast their operands (the op table's element-wise rows), and their in-place twins.
ELEMENTWISE_METHODS = optable.element_wise_methods() | frozenset(
    f"{name}_" for name in optable.element_wise_methods() & optable.with_inplace_twin())
_ELEMENTWISE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def tensor(ctx: Context, node: Optional[ast.AST]) -> Optional[TensorValue]:
    value = ctx.value(node) if node is not None else None
    return value if isinstance(value, TensorValue) else None


def operands(node: ast.AST, scope: Scope) -> Optional[tuple[ast.AST, ast.AST]]:
    """The two operands of an element-wise binary operation, as written."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ELEMENTWISE_OPS):
        return node.left, node.right
    if isinstance(node, ast.Compare) and len(node.comparators) == 1 and not isinstance(
            node.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
        return node.left, node.comparators[0]
    if isinstance(node, ast.Call) and len(node.args) >= 1 and isinstance(node.func, ast.Attribute):
        qualname = scope.qualname(node.func)
        if qualname is not None and qualname.startswith("torch.") and qualname[6:] in ELEMENTWISE_METHODS \
                and len(node.args) >= 2:
            return node.args[0], node.args[1]
        if qualname is None and node.func.attr in ELEMENTWISE_METHODS:
            return node.func.value, node.args[0]
    return None


def postfix(ctx: Context, node: ast.AST, suffix: str) -> str:
    return edits.postfix(ctx.source, node, suffix)


def rewrite_operand(ctx: Context, node: ast.AST, suffix: str) -> Edit:
    return Edit(ctx.source.span(node), postfix(ctx, node, suffix))


class ShapesDoNotBroadcast(Rule):
    local = True
    code = "TW501"
    name = "shapes-do-not-broadcast"
    severity = Severity.ERROR
    runtime_error = True
    summary = "Flags element-wise operations whose operand shapes are known and cannot broadcast."
    why = ("PyTorch aligns shapes from the right; each pair of sizes must be equal or one of them 1. "
           "`(3, 4) + (3,)` compares 4 with 3 and raises `RuntimeError: The size of tensor a (4) must match the "
           "size of tensor b (3) at non-singleton dimension 1`. Usually a dimension is missing: a per-row value "
           "needs a trailing 1 to spread along the columns.")
    fix_summary = "`h.unsqueeze(k)` (`h[:, None]`) on the smaller operand, when that makes the shapes broadcast."
    node_types = (ast.BinOp, ast.Compare, ast.Call, ast.AugAssign)
    valid = (
        Valid("import torch\nx = torch.randn(3, 4)\nh = torch.randn(4)\ny = x + h\n"),
        Valid("import torch\nx = torch.randn(3, 4)\nh = torch.randn(3, 1)\ny = x * h\n"),
        Valid("import torch\ndef f(x, h):\n    return x + h\n"),
        Valid("import torch\ndef f(B: int, T: int):\n    return torch.randn(B) + torch.randn(T)\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(3, 4)\nh = torch.randn(3)\ny = x + h\n",
                "import torch\nx = torch.randn(3, 4)\nh = torch.randn(3)\ny = x + h.unsqueeze(1)\n"),
        Invalid("import torch\nscores = torch.rand(8, 5)\nbias = torch.zeros(8)\nout = scores.mul(bias)\n",
                "import torch\nscores = torch.rand(8, 5)\nbias = torch.zeros(8)\nout = scores.mul(bias.unsqueeze(1))\n"),
        Invalid("import torch\na = torch.ones(2, 3)\nb = torch.ones(2, 4)\nc = a > b\n"),
        Invalid("import torch\nacc = torch.zeros(4, 3)\nrow = torch.ones(4)\nacc += row\n",
                "import torch\nacc = torch.zeros(4, 3)\nrow = torch.ones(4)\nacc += row.unsqueeze(1)\n"),
    )

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if isinstance(node, ast.AugAssign):
            yield from self._check_inplace(node, ctx)
            return
        pair = operands(node, scope)
        if pair is None:
            return
        left, right = (tensor(ctx, n) for n in pair)
        if left is None or right is None or left.shape is None or right.shape is None:
            return
        try:
            shapes.broadcast(left.shape, right.shape)
        except shapes.ShapeError as err:
            fixes = self._fixes(ctx, pair, (left.shape, right.shape))
            yield self.finding(ctx, node, err.message, fixes)

    def _check_inplace(self, node: ast.AugAssign, ctx: Context) -> Iterator[Finding]:
        if not isinstance(node.op, _ELEMENTWISE_OPS):
            return
        target, value = tensor(ctx, node), tensor(ctx, node.value)  # the statement holds the target's old value
        if target is None or value is None or target.shape is None or value.shape is None:
            return
        try:
            shapes.broadcast(target.shape, value.shape)
        except shapes.ShapeError as err:
            yield self.finding(ctx, node, err.message, self._fixes(ctx, (node.target, node.value),
                                                                   (target.shape, value.shape), only_right=True))

    def _fixes(self, ctx, nodes, operand_shapes, only_right=False) -> list[Fix]:
        """Insert a size-1 dim into the lower-rank operand so that the result is the other's shape."""
        small = 1 if len(operand_shapes[1]) <= len(operand_shapes[0]) else 0
        if only_right and small != 1:
            return []
        other = operand_shapes[1 - small]
        shape = operand_shapes[small]
        for position in range(len(shape) + 1):
            candidate = shape[:position] + (1,) + shape[position:]
            try:
                if shapes.broadcast(other, candidate) == other:
                    suffix = f".unsqueeze({position})"
                    node = nodes[small]
                    return [Fix(f"Broadcast with `{postfix(ctx, node, suffix)}`",
                                lambda node=node, suffix=suffix: [rewrite_operand(ctx, node, suffix)],
                                preferred=True)]
            except shapes.ShapeError:
                continue
        return []


def _matmul_operands(node: ast.AST, scope: Scope, ctx: Context):
    """(kind, left node, right node) of ``a @ b``, ``torch.matmul(a, b)``, ``a.mm(b)``..."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return "matmul", node.left, node.right
    if not isinstance(node, ast.Call):
        return None
    qualname = scope.qualname(node.func)
    if qualname in ("torch.matmul", "torch.mm", "torch.bmm", "torch.dot", "torch.mv") and len(node.args) == 2:
        return qualname[6:], node.args[0], node.args[1]
    if qualname is None and isinstance(node.func, ast.Attribute) and node.func.attr in MATMUL_KINDS \
            and len(node.args) == 1:
        return node.func.attr, node.func.value, node.args[0]
    return None


class MatmulShapeMismatch(Rule):
    local = True
    code = "TW502"
    name = "matmul-shape-mismatch"
    severity = Severity.ERROR
    runtime_error = True
    summary = "Flags `@`, `matmul`, `mm`, `bmm`, `dot`, `mv`, `F.linear` and `nn.Linear` calls whose inner dimensions differ."
    why = ("A matrix product needs the left operand's last dimension to equal the right operand's first "
           "(second-to-last when batched); PyTorch raises `mat1 and mat2 shapes cannot be multiplied`. The usual "
           "cause is a transposed weight or a layer built for another feature size.")
    node_types = (ast.BinOp, ast.Call)
    valid = (
        Valid("import torch\na = torch.randn(8, 16)\nw = torch.randn(16, 4)\ny = a @ w\n"),
        Valid("import torch\nimport torch.nn as nn\nfc = nn.Linear(16, 4)\ny = fc(torch.randn(2, 16))\n"),
        Valid("import torch\ndef f(B: int, C: int):\n    return torch.randn(B, C) @ torch.randn(C, 4 * C)\n"),
    )
    invalid = (
        Invalid("import torch\na = torch.randn(8, 16)\nw = torch.randn(4, 16)\ny = a @ w\n"),
        Invalid("import torch\nx = torch.randn(3)\ny = torch.dot(x, torch.randn(4))\n"),
        Invalid("import torch\nimport torch.nn as nn\nfc = nn.Linear(32, 4)\ny = fc(torch.randn(2, 16))\n"),
        Invalid("import torch\nimport torch.nn.functional as F\nw = torch.randn(4, 8)\ny = F.linear(torch.randn(2, 16), w)\n"),
    )

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        found = _matmul_operands(node, scope, ctx)
        if found is not None:
            kind, left_node, right_node = found
            left, right = tensor(ctx, left_node), tensor(ctx, right_node)
            if left is None or right is None or left.shape is None or right.shape is None:
                return
            try:
                MATMUL_KINDS[kind](left.shape, right.shape)
            except shapes.ShapeError as err:
                yield self.finding(ctx, node, err.message)
            return
        linear = _linear_call(node, scope, ctx)
        if linear is not None:
            x, weight, bias = linear
            if x.shape is None or weight.shape is None:
                return
            try:
                shapes.linear(x.shape, weight.shape, bias)
            except shapes.ShapeError as err:
                yield self.finding(ctx, node, err.message)


def _linear_call(node, scope: Scope, ctx: Context):
    """(input, weight, bias shape) of ``F.linear(x, w, b)`` or a call of a known ``nn.Linear``."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    if scope.qualname(node.func) == "torch.nn.functional.linear" and len(node.args) >= 2:
        x, weight = tensor(ctx, node.args[0]), tensor(ctx, node.args[1])
        bias = tensor(ctx, node.args[2]) if len(node.args) > 2 else None
        if x is None or weight is None:
            return None
        return x, weight, bias.shape if bias is not None else None
    module = ctx.value(node.func)
    if isinstance(module, ModuleValue) and module.kind == "Linear" and len(node.args) == 1:
        x, weight, bias = tensor(ctx, node.args[0]), module.param("weight"), module.param("bias")
        if x is None or weight is None:
            return None
        return x, weight, bias.shape if bias is not None else None
    return None


class ReshapeElementCount(Rule):
    local = True
    call_names = frozenset({"view", "reshape"})
    code = "TW503"
    name = "reshape-element-count"
    severity = Severity.ERROR
    runtime_error = True
    summary = "Flags `view`/`reshape` to a shape whose element count differs from the input's."
    why = ("`view` and `reshape` only rearrange the elements; the new shape must hold exactly as many "
           "(with `-1` standing for whatever makes it fit). PyTorch raises `shape '[5, 5]' is invalid for input "
           "of size 12`.")
    valid = (
        Valid("import torch\nx = torch.randn(3, 4)\ny = x.view(2, 6)\nz = x.reshape(-1, 2)\n"),
        Valid("import torch\ndef f(B: int, T: int, C: int):\n    x = torch.randn(B, T, C)\n    return x.view(B * T, C)\n"),

    )
    invalid = (
        Invalid("import torch\nx = torch.randn(3, 4)\ny = x.view(5, 5)\n"),
        Invalid("import torch\nx = torch.randn(3, 4)\ny = torch.reshape(x, (-1, 5))\n"),
        Invalid("import torch\ndef heads(x):\n    return x.view(2, 4, 8)\nheads(torch.randn(2, 30))\n"),
        # Symbolic: the counts differ for every size above 0 (only an empty batch would pass).
        Invalid("import torch\ndef f(B: int, T: int, C: int):\n    x = torch.randn(B, T, C)\n    return x.view(B, T, C, 2)\n"
                "f(2, 3, 4)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("view", "reshape") and scope.qualname(func) is None:
            source, size_nodes = func.value, node.args
        elif scope.qualname(func) == "torch.reshape" and len(node.args) == 2:
            source, size_nodes = node.args[0], node.args[1:]
        else:
            return
        value = tensor(ctx, source)
        requested = _requested_shape(ctx, size_nodes)
        if value is None or value.shape is None or requested is None:
            return
        try:
            shapes.reshape(value.shape, requested)
            # Symbolic sizes: equal counts only when a size is 0; real data is bigger than that.
            shapes.reshape(value.shape, requested, nondegenerate=True)
        except shapes.ShapeError as err:
            yield self.finding(ctx, node, err.message)


def _requested_shape(ctx: Context, nodes) -> Optional[tuple]:
    values = [ctx.value(n) for n in nodes]
    if len(values) == 1 and isinstance(values[0], SeqValue):
        values = list(values[0].items or [None])
    dims = []
    for value in values:
        if not (isinstance(value, ScalarValue) and value.kind == "int" and value.value is not None):
            return None
        dims.append(value.value)
    return tuple(dims) if dims else None


class CatSizeMismatch(Rule):
    local = True
    call_names = frozenset({"cat", "concat", "concatenate", "stack"})
    code = "TW506"
    name = "cat-size-mismatch"
    severity = Severity.ERROR
    runtime_error = True
    summary = ("Flags `torch.cat` / `torch.stack` of tensors whose sizes cannot line up: a different rank, or a "
               "different size in a dimension other than the one joined (`stack`: in any dimension).")
    why = ("`torch.cat` joins along one dimension, so every other dimension must match; `torch.stack` adds a new "
           "one, so the tensors must have the same shape. PyTorch raises `Sizes of tensors must match except in "
           "dimension 1` (or `stack expects each tensor to be equal size`). The usual cause is a missing "
           "`unsqueeze`, a token concatenated along the wrong dim, or a batch of another size.")
    valid = (
        Valid("import torch\ncls = torch.zeros(8, 1, 64)\nx = torch.randn(8, 16, 64)\ny = torch.cat((cls, x), dim=1)\n"),
        Valid("import torch\na = torch.randn(3, 4)\nb = torch.randn(3, 4)\ny = torch.stack([a, b], dim=0)\n"),
        Valid("import torch\ndef f(B: int, N: int, D: int):\n"
              "    return torch.cat([torch.zeros(B, 1, D), torch.randn(B, N, D)], dim=1)\n"),
    )
    invalid = (
        Invalid("import torch\ncls = torch.zeros(1, 1, 64)\nx = torch.randn(8, 16, 64)\ny = torch.cat((cls, x), dim=1)\n"),
        Invalid("import torch\na = torch.randn(3, 4)\nb = torch.randn(4, 3)\ny = torch.stack([a, b])\n"),
        Invalid("import torch\nx = torch.randn(8, 16, 64)\ncls = torch.zeros(8, 64)\ny = torch.cat([cls, x], dim=1)\n"),
        Invalid("import torch\ndef f(B: int, D: int):\n"
                "    return torch.cat([torch.zeros(B, D), torch.zeros(B, D + 1)], dim=0)\nf(2, 3)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        qualname = scope.qualname(node.func)
        if qualname not in ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack") or not node.args:
            return
        listed = ctx.value(node.args[0])
        if not isinstance(listed, SeqValue) or not listed.items:
            return
        if not all(isinstance(t, TensorValue) and t.shape is not None for t in listed.items):
            return
        given = [k.value for k in node.keywords if k.arg == "dim"] + node.args[1:2]
        dim = ctx.value(given[0]) if given else ScalarValue("int", 0)
        if not (isinstance(dim, ScalarValue) and dim.kind == "int" and isinstance(dim.value, int)):
            return
        join = shapes.stack if qualname == "torch.stack" else shapes.cat
        try:
            join([t.shape for t in listed.items], dim.value)
        except shapes.ShapeError as err:
            yield self.finding(ctx, node, err.message)


_FULL_FLOATS = (dtypes.DType.float32, dtypes.DType.float64)
_FLOAT_LAYERS = frozenset({"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                           "ConvTranspose3d", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                           "LSTM", "GRU", "RNN", "PReLU"})
_WEIGHT_OF = {"LSTM": "weight_ih_l0", "GRU": "weight_ih_l0", "RNN": "weight_ih_l0"}


def _read_through_self(func: ast.AST, ctx: Context) -> bool:
    """``self.fc``, ``self.blocks[0]``: a layer reached through an instance of this file's own classes."""
    while isinstance(func, (ast.Attribute, ast.Subscript)):
        func = func.value
    return isinstance(func, ast.Name) and isinstance(ctx.facts.values.get(func), InstanceValue)


def _under_autocast(node: ast.AST, ctx: Context) -> bool:
    """Inside ``with torch.autocast(...)`` (or ``torch.cuda.amp.autocast()``), which casts a layer's inputs."""
    for stmt in ctx.statements_around(node):
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(
                "autocast" in ast.unparse(item.context_expr) for item in stmt.items):
            return True
    return False


class IncompatibleDtypes(Rule):
    local = True
    code = "TW504"
    name = "incompatible-dtypes"
    severity = Severity.ERROR
    runtime_error = True
    summary = ("Flags matrix products of different dtypes (`int64 @ float32`), `nn.Linear`/`nn.Conv*`/`F.linear` "
               "on integer tensors, a layer (linear, convolution, norm, recurrent) of float32 weights given float64 "
               "input (numpy's default) or the other way round, and `nn.Embedding` indexed by floats.")
    why = ("Matrix products and layers do not promote: both operands must have one dtype (`expected m1 and m2 "
           "to have the same dtype`), layers' weights are floats, and an embedding looks rows up by integer "
           "index. Integer data (labels, token ids, counts) reaching a layer is the usual cause.")
    fix_summary = "Cast the offending operand: `.float()` (or `.to(other.dtype)`) for products and layers, `.long()` for embedding indices."
    node_types = (ast.BinOp, ast.Call)
    valid = (
        Valid("import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\nc = a @ b\n"),
        Valid("import torch\na = torch.randint(0, 5, (2, 3))\nb = torch.randint(0, 5, (3, 4))\nc = a @ b\n"),
        Valid("import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 4)\nv = emb(torch.tensor([1, 2]))\n"),
        Valid("import torch\nimport torch.nn as nn\nfc = nn.Linear(8, 2).double()\n"
              "y = fc(torch.randn(4, 8, dtype=torch.float64))\n"),
    )
    invalid = (
        Invalid("import torch\nidx = torch.randint(0, 5, (2, 3))\nw = torch.randn(3, 4)\ny = idx @ w\n",
                "import torch\nidx = torch.randint(0, 5, (2, 3))\nw = torch.randn(3, 4)\ny = idx.float() @ w\n"),
        Invalid("import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4, dtype=torch.float64)\nc = a @ b\n",
                "import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4, dtype=torch.float64)\nc = a @ b.to(a.dtype)\n"),
        Invalid("import torch\nimport torch.nn as nn\nfc = nn.Linear(3, 2)\ncounts = torch.tensor([[1, 2, 3]])\ny = fc(counts)\n",
                "import torch\nimport torch.nn as nn\nfc = nn.Linear(3, 2)\ncounts = torch.tensor([[1, 2, 3]])\n"
                "y = fc(counts.float())\n"),
        Invalid("import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 4)\nv = emb(torch.tensor([1.0, 2.0]))\n",
                "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 4)\nv = emb(torch.tensor([1.0, 2.0]).long())\n"),
        # float64 from numpy reaching a float32 layer
        Invalid("import numpy as np\nimport torch\nimport torch.nn as nn\nfc = nn.Linear(3, 2)\n"
                "x = torch.from_numpy(np.random.rand(5, 3))\ny = fc(x)\n",
                "import numpy as np\nimport torch\nimport torch.nn as nn\nfc = nn.Linear(3, 2)\n"
                "x = torch.from_numpy(np.random.rand(5, 3))\ny = fc(x.float())\n"),
    )

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        found = _matmul_operands(node, scope, ctx)
        if found is not None:
            yield from self._check_product(node, found, ctx)
            return
        if isinstance(node, ast.Call) and len(node.args) == 1:
            module = ctx.value(node.func)
            x = tensor(ctx, node.args[0])
            if not isinstance(module, ModuleValue) or x is None or x.dtype is None:
                return
            if module.kind in ("Linear", "Conv1d", "Conv2d") and dtypes.is_integral(x.dtype, include_bool=True):
                yield self.finding(ctx, node, f"`nn.{module.kind}` needs floating-point input, got {x.dtype.short}",
                                   [self._cast(ctx, node.args[0], ".float()")])
            elif module.kind == "Embedding" and x.dtype not in (dtypes.DType.int64, dtypes.DType.int32):
                yield self.finding(ctx, node, f"`nn.Embedding` needs int64 or int32 indices, got {x.dtype.short}",
                                   [self._cast(ctx, node.args[0], ".long()")])
            else:
                yield from self._check_float_layer(node, module, x, ctx)
        if isinstance(node, ast.Call) and scope.qualname(node.func) == "torch.nn.functional.linear" \
                and len(node.args) >= 2:
            x, weight = tensor(ctx, node.args[0]), tensor(ctx, node.args[1])
            if x is not None and weight is not None and x.dtype and weight.dtype and x.dtype != weight.dtype:
                yield self.finding(ctx, node, f"`F.linear` of {x.dtype.short} input with {weight.dtype.short} "
                                              "weight: dtypes must match")

    def _check_float_layer(self, node: ast.Call, module: ModuleValue, x: TensorValue, ctx: Context):
        """A layer of float32 weights given float64 input (numpy's default), or the other way round: layers do
        not promote. Half and bfloat16 are left alone (autocast and mixed-precision kernels differ by device)."""
        weight = module.param(_WEIGHT_OF.get(module.kind, "weight"))
        if _read_through_self(node.func, ctx):
            # `self.fc(x)` in a method: the module may have been converted since `__init__` (`model.double()`,
            # `model.to(dtype)` here or by an importer), and its parameters' dtype is not known here.
            return
        if module.kind not in _FLOAT_LAYERS or weight is None or weight.dtype not in _FULL_FLOATS \
                or x.dtype not in _FULL_FLOATS or weight.dtype == x.dtype or _under_autocast(node, ctx):
            return
        cast = ".float()" if weight.dtype == dtypes.DType.float32 else ".double()"
        why = f"; the input {x.why}" if x.why else ""
        yield self.finding(ctx, node, f"`nn.{module.kind}` has {weight.dtype.short} weights but the input is "
                                      f"{x.dtype.short}, and layers do not convert their input{why}",
                           [self._cast(ctx, node.args[0], cast)])

    def _check_product(self, node, found, ctx: Context) -> Iterator[Finding]:
        kind, left_node, right_node = found
        left, right = tensor(ctx, left_node), tensor(ctx, right_node)
        if left is None or right is None or left.dtype is None or right.dtype is None or left.dtype == right.dtype:
            return
        fixes = []
        left_int = dtypes.is_integral(left.dtype, include_bool=True)
        right_int = dtypes.is_integral(right.dtype, include_bool=True)
        if left_int and not right_int and right.dtype == dtypes.DType.float32:
            fixes.append(self._cast(ctx, left_node, ".float()"))
        elif right_int and not left_int and left.dtype == dtypes.DType.float32:
            fixes.append(self._cast(ctx, right_node, ".float()"))
        elif isinstance(left_node, (ast.Name, ast.Attribute)):
            left_text = ctx.source.text_of(ctx.source.span(left_node))
            fixes.append(self._cast(ctx, right_node, f".to({left_text}.dtype)"))
        yield self.finding(ctx, node, f"`{'@' if kind == 'matmul' else kind}` of {left.dtype.short} and "
                                      f"{right.dtype.short}: matrix products need one dtype", fixes)

    def _cast(self, ctx: Context, node: ast.AST, suffix: str) -> Fix:
        return Fix(f"Cast with `{postfix(ctx, node, suffix)}`", lambda: [rewrite_operand(ctx, node, suffix)],
                   preferred=True)


class IndexOutOfRange(Rule):
    local = True
    code = "TW505"
    name = "index-out-of-range"
    severity = Severity.ERROR
    runtime_error = True
    summary = "Flags a constant integer index outside a known dimension (`x[5]` when `x.shape[0] == 5`)."
    why = ("Valid indexes of a dimension of size n are -n to n-1; anything else raises `IndexError: index 5 is "
           "out of bounds for dimension 0 with size 5`. Slices clamp to the size and never raise, so they are "
           "not flagged.")
    node_types = (ast.Subscript,)
    valid = (
        Valid("import torch\nx = torch.randn(5)\na = x[4]\nb = x[-5]\nc = x[3:10]\n"),
        Valid("import torch\nx = torch.randn(2, 3)\ny = x[:, 2]\n"),
        Valid("import torch\ndef f(x):\n    return x[100]\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(5)\ny = x[5]\n"),
        Invalid("import torch\nx = torch.randn(2, 3)\ny = x[:, 3]\n"),
        Invalid("import torch\nx = torch.randn(3)\ny = x[-4]\n"),
    )

    def check(self, node: ast.Subscript, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if not isinstance(node.ctx, ast.Load):
            return
        value = tensor(ctx, node.value)
        if value is None or value.shape is None:
            return
        from torchwise.analysis.ops import index_items  # the inference's own reading of the index

        items = index_items(ctx.facts, node)
        if items is None:
            return
        try:
            shapes.index(value.shape, items)
        except shapes.ShapeError as err:
            if "index" in err.data or "indices" in err.data:
                yield self.finding(ctx, node, err.message)


class LayerInputMismatch(Rule):
    local = True
    code = "TW508"
    name = "layer-input-mismatch"
    severity = Severity.ERROR
    runtime_error = True
    summary = ("Flags a call of a convolution, batch norm, layer norm or recurrent layer whose input cannot fit it: "
               "channels that are not the layer's `in_channels` (`num_features`), trailing sizes that are not its "
               "`normalized_shape`, a last dim that is not an LSTM's / GRU's `input_size`; "
               "also through a module's own attributes (`self.conv2(x)` inside `forward`), and `F.conv1d/2d/3d` "
               "given a weight of other in-channels (times `groups`) than the input's.")
    why = ("A layer is built for one size: `nn.Conv2d(32, 64, 3)` has a `(64, 32, 3, 3)` weight and raises `expected "
           "input[2, 16, 8, 8] to have 32 channels, but got 16 channels instead`. The usual cause is a layer whose "
           "size was not updated when the one before it changed, or channels-last data fed to a channels-first layer.")
    valid = (
        Valid("import torch\nimport torch.nn as nn\nconv = nn.Conv2d(3, 16, 3)\ny = conv(torch.randn(2, 3, 8, 8))\n"),
        Valid("import torch\nimport torch.nn as nn\nconv = nn.Conv1d(4, 8, 3)\ny = conv(torch.randn(4, 10))\n"),
        Valid("import torch\nimport torch.nn as nn\nnorm = nn.LayerNorm([5, 16])\ny = norm(torch.randn(2, 5, 16))\n"),
        Valid("import torch\nimport torch.nn as nn\nbn = nn.BatchNorm1d(8)\ny = bn(torch.randn(4, 8, 10))\n"),
        Valid("import torch\nimport torch.nn as nn\ngru = nn.GRU(16, 32)\nout, h = gru(torch.randn(7, 2, 16))\n"),
        # A depthwise convolution: in_channels = groups.
        Valid("import torch\nimport torch.nn as nn\ndw = nn.Conv2d(8, 8, 3, groups=8)\ny = dw(torch.randn(1, 8, 5, 5))\n"),
        Valid("import torch\nimport torch.nn.functional as F\nx = torch.randn(2, 8, 5, 5)\n"
              "y = F.conv2d(x, torch.randn(8, 1, 3, 3), groups=8)\n"),
        # Without running statistics or affine weights, batch norm never reads num_features.
        Valid("import torch\nimport torch.nn as nn\nbn = nn.BatchNorm2d(8, affine=False, track_running_stats=False)\n"
              "y = bn(torch.randn(2, 3, 4, 4))\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Net(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)\n"
                "        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)\n\n    def forward(self, x):\n"
                "        x = F.relu(self.conv1(x))\n        return self.conv2(x)\n\n\n"
                "out = Net()(torch.randn(2, 3, 8, 8))\n"),
        Invalid("import torch\nimport torch.nn as nn\nconv = nn.Conv1d(4, 8, 3)\ny = conv(torch.randn(2, 10, 4))\n"),
        Invalid("import torch\nimport torch.nn as nn\nnorm = nn.LayerNorm(64)\ny = norm(torch.randn(2, 64, 5))\n"),
        Invalid("import torch\nimport torch.nn as nn\nbn = nn.BatchNorm2d(16)\ny = bn(torch.randn(2, 32, 4, 4))\n"),
        Invalid("import torch\nimport torch.nn as nn\nlstm = nn.LSTM(10, 20, batch_first=True)\n"
                "out, state = lstm(torch.randn(2, 7, 16))\n"),
        Invalid("import torch\nimport torch.nn.functional as F\nx = torch.randn(8, 3, 32, 32)\n"
                "w = torch.randn(16, 4, 3, 3)\ny = F.conv2d(x, w, padding=1)\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        functional = _functional_conv(node, scope, ctx)
        if functional is not None:
            yield from (self.finding(ctx, node, message) for message in functional)
            return
        if len(node.args) != 1 or node.keywords:
            return
        module, x = ctx.value(node.func), tensor(ctx, node.args[0])
        if not isinstance(module, ModuleValue) or x is None or x.shape is None:
            return
        message = _layer_misfit(module, x.shape)
        if message is not None:
            yield self.finding(ctx, node, message)


def _functional_conv(node: ast.Call, scope: Scope, ctx: Context) -> Optional[list[str]]:
    """``F.conv2d(x, w, ..., groups=g)``: None when the call is not one; else PyTorch's complaint, if it certainly
    raises: the input's channels are not ``w.shape[1] * groups``."""
    qualname = scope.qualname(node.func)
    rank = {"torch.nn.functional.conv1d": 1, "torch.nn.functional.conv2d": 2, "torch.nn.functional.conv3d": 3,
            "torch.conv1d": 1, "torch.conv2d": 2, "torch.conv3d": 3}.get(qualname or "")
    if rank is None:
        return None
    keywords = {k.arg: k.value for k in node.keywords}
    if None in keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return []
    x = tensor(ctx, node.args[0] if node.args else keywords.get("input"))
    weight = tensor(ctx, node.args[1] if len(node.args) > 1 else keywords.get("weight"))
    groups_node = node.args[6] if len(node.args) > 6 else keywords.get("groups")
    groups = ctx.value(groups_node) if groups_node is not None else ScalarValue("int", 1)
    if x is None or weight is None or x.shape is None or weight.shape is None or len(weight.shape) != rank + 2 \
            or len(x.shape) not in (rank + 1, rank + 2) or not isinstance(groups, ScalarValue) \
            or not isinstance(groups.value, int) or isinstance(groups.value, bool):
        return []
    expected = dims.product((weight.shape[1], groups.value))
    channels = x.shape[1 if len(x.shape) == rank + 2 else 0]
    if dims.dim_eq(channels, expected) is not False:
        return []
    where = "second" if len(x.shape) == rank + 2 else "first"
    return [f"`conv{rank}d` with weight {readable_shape(weight.shape)} expects input with {expected} channels, but input "
            f"{readable_shape(x.shape)} has {channels} (channels come {where})"]


_CONV_RANKS = {"Conv1d": 1, "Conv2d": 2, "Conv3d": 3}
_BATCH_NORM_RANKS = {"BatchNorm1d": (2, 3), "BatchNorm2d": (4,), "BatchNorm3d": (5,)}


def _layer_misfit(module: ModuleValue, shape: tuple) -> Optional[str]:
    """PyTorch's complaint about ``shape`` as the input of ``module``, where it certainly raises; else None."""
    kind = module.kind
    if kind in _CONV_RANKS:
        weight, groups = module.param("weight"), module.setting("groups", 1)
        if weight is None or weight.shape is None or len(shape) not in (_CONV_RANKS[kind] + 1, _CONV_RANKS[kind] + 2):
            return None
        expected = dims.product((weight.shape[1], groups)) if isinstance(groups, (int, dims.Sym)) else None
        channels = shape[1 if len(shape) == _CONV_RANKS[kind] + 2 else 0]
        if expected is not None and dims.dim_eq(channels, expected) is False:
            return (f"`{kind}` expects input with {expected} channels, but input {readable_shape(shape)} has {channels} "
                    f"(channels come {'second' if len(shape) == _CONV_RANKS[kind] + 2 else 'first'})")
    elif kind in _BATCH_NORM_RANKS:
        features = module.setting("num_features")
        read = module.param("running_mean") is not None or module.param("weight") is not None
        if read and isinstance(features, (int, dims.Sym)) and len(shape) in _BATCH_NORM_RANKS[kind] \
                and dims.dim_eq(shape[1], features) is False:
            return f"`{kind}({features})` expects {features} channels in dim 1, but input {readable_shape(shape)} has {shape[1]}"
    elif kind in ("LSTM", "GRU", "RNN"):
        size = module.setting("input_size")
        if isinstance(size, (int, dims.Sym)) and len(shape) in (2, 3) and dims.dim_eq(shape[-1], size) is False:
            return f"`{kind}` expects input_size={size} in the last dim, but input {readable_shape(shape)} has {shape[-1]}"
    elif kind == "LayerNorm":
        normalized = module.setting("normalized_shape")
        normalized = (normalized,) if not isinstance(normalized, tuple) else normalized
        if normalized and all(isinstance(d, (int, dims.Sym)) for d in normalized) and len(shape) >= len(normalized) \
                and any(dims.dim_eq(a, b) is False for a, b in zip(shape[-len(normalized):], normalized)):
            return (f"`LayerNorm` over the last {len(normalized)} dim(s) {readable_shape(normalized)} does not fit input "
                    f"{readable_shape(shape)}: expected input of shape (*, {', '.join(map(str, normalized))})")
    return None


RULES = (ShapesDoNotBroadcast, MatmulShapeMismatch, ReshapeElementCount, CatSizeMismatch, IncompatibleDtypes,
         IndexOutOfRange, LayerInputMismatch)
