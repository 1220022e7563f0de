"""TW507: einops and einsum patterns that cannot match their operands (or cannot be parsed at all)."""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional

from torchwise.analysis import ops_einops, shapes
from torchwise.analysis.dims import readable_shape
from torchwise.analysis.scopes import Scope
from torchwise.analysis.shapes import ShapeError
from torchwise.analysis.tensors import Call
from torchwise.analysis.values import (
    ModuleValue, NdarrayValue, ScalarValue, SeqValue, SymbolicValue, TensorValue,
)
from torchwise.findings import Finding, Severity
from torchwise.rules.base import Context, Invalid, Rule, Valid

_LAYERS = "import torch\nimport torch.nn as nn\nfrom einops.layers.torch import Rearrange, Reduce\n"


def _example(body: str) -> str:
    """An example's code: ``body`` after the imports of the einops functions it calls."""
    used = [name for name in ("rearrange", "repeat", "reduce", "einsum", "pack")
            if re.search(rf"(?<![.\w]){name}\(", body)]
    return "import torch\n" + (f"from einops import {', '.join(used)}\n" if used else "") + body


def _facts_call(node: ast.Call, ctx: Context) -> Call:
    """The call as the inference read it: the facts of its arguments (a size known only by name
    included, as it sizes the pattern's axes)."""
    values = ctx.facts.values
    args = [values.get(a.value if isinstance(a, ast.Starred) else a) for a in node.args]
    kwargs = {k.arg: values.get(k.value) for k in node.keywords if k.arg is not None}
    starred = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
    return Call(node, args, kwargs, starred, None)


def _shape_text(value) -> Optional[str]:
    if isinstance(value, (TensorValue, NdarrayValue)) and value.shape is not None:
        return readable_shape(value.shape)
    return None


def _inputs_text(values) -> str:
    texts = [_shape_text(v) for v in values]
    known = [t for t in texts if t is not None]
    if not known:
        return ""
    return f" input {known[0]}" if len(texts) == 1 else " inputs " + ", ".join(t or "?" for t in texts)


def _sizes_text(call: Call, taken) -> str:
    sizes = [f"{name}={value.value if isinstance(value, ScalarValue) else value.dim}"
             for name, value in call.kwargs.items() if name not in taken and (
                 isinstance(value, ScalarValue) and value.value is not None or isinstance(value, SymbolicValue))]
    return f" with {', '.join(sizes)}" if sizes else ""


def _string(value) -> Optional[str]:
    return value.value if isinstance(value, ScalarValue) and isinstance(value.value, str) else None


class EinopsPatternMismatch(Rule):
    local = True
    code = "TW507"
    name = "einops-pattern-mismatch"
    severity = Severity.ERROR
    runtime_error = True
    summary = ("Flags `einops` calls (`rearrange`, `repeat`, `reduce`, `einsum`, `pack`, `unpack`), the "
               "`Rearrange` / `Reduce` layers and `torch.einsum` whose pattern cannot match the known shapes of "
               "their operands, or cannot be parsed.")
    why = ("An einops pattern names every axis of its input: `'b n (h d) -> b h n d'` says the input has 3 dims "
           "and that the last one splits into `h` heads. When it does not (a rank that differs, a size `h` does "
           "not divide, a name on one side only, an einsum whose shared axes differ in size), einops or torch "
           "raises when the line runs, often deep into a training script. The message is the library's own.")
    valid = (
        Valid(_example("x = torch.randn(2, 3, 8)\ny = rearrange(x, 'b n (h d) -> b h n d', h=2)\n")),
        Valid(_example("cls = torch.randn(1, 1, 16)\ntokens = repeat(cls, '1 1 d -> b 1 d', b=4)\n"
                       "pooled = reduce(torch.randn(4, 9, 16), 'b n d -> b d', 'mean')\n")),
        Valid(_example("def heads(B: int, T: int):\n    x = torch.randn(B, T, 64)\n"
                       "    return rearrange(x, 'b t (h d) -> b h t d', h=8)\n")),
        Valid(_example("q = torch.randn(2, 4, 5, 8)\nk = torch.randn(2, 4, 7, 8)\n"
                       "s = torch.einsum('bhid,bhjd->bhij', q, k)\nt = einsum(q, k, 'b h i d, b h j d -> b h i j')\n")),
        Valid(_LAYERS + "to_patches = Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)\n"
                        "patches = to_patches(torch.randn(2, 3, 16, 16))\n"),
        Valid(_example("def split(x):\n    return rearrange(x, 'b n (h d) -> b h n d', h=8)\n")),
        Valid(_example("cls = torch.randn(2, 1, 8)\nx = torch.randn(2, 5, 8)\npacked, ps = pack([cls, x], 'b * d')\n")),
    )
    invalid = (
        Invalid(_example("x = torch.randn(2, 3, 8)\ny = rearrange(x, 'b n (h d) -> b h n d', h=3)\n")),
        Invalid(_example("img = torch.randn(3, 32, 32)\nflat = rearrange(img, 'b c h w -> b (c h w)')\n")),
        Invalid(_example("x = torch.randn(2, 3, 8)\ny = rearrange(x, 'b n d -> b n')\n")),
        Invalid(_example("cls = torch.randn(1, 1, 16)\ntokens = repeat(cls, '1 1 d -> b 1 d')\n")),
        Invalid(_example("x = torch.randn(2, 3, 7, 7)\npooled = reduce(x, 'b c (h 2) (w 2) -> b c h w', 'max')\n")),
        Invalid(_example("q = torch.randn(2, 5, 8)\nk = torch.randn(2, 7, 16)\n"
                         "s = torch.einsum('bid,bjd->bij', q, k)\n")),
        Invalid(_example("q = torch.randn(2, 5, 8)\nk = torch.randn(2, 7, 16)\n"
                         "s = einsum(q, k, 'b i d, b j d -> b i j')\n")),
        # Symbolic sizes from the call site: 3 features never split into 2 heads.
        Invalid(_example("def heads(B: int, T: int):\n    x = torch.randn(B, T, 3)\n"
                         "    return rearrange(x, 'b t (h d) -> b h t d', h=2)\n\n\nheads(2, 4)\n")),
        Invalid(_example("a = torch.randn(2, 5, 8)\nb = torch.randn(3, 5, 8)\npacked, ps = pack([a, b], 'b * d')\n")),
        Invalid(_LAYERS + "to_patches = Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=16, p2=16)\n"
                          "patches = to_patches(torch.randn(2, 3, 40, 40))\n"),
        Invalid(_LAYERS + "embed = nn.Sequential(Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=16, p2=16),"
                          " nn.Linear(768, 64))\ntokens = embed(torch.randn(2, 3, 32, 40))\n"),
        Invalid(_LAYERS + "pool = Reduce('b c h w -> b c', 'average')\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        qualname = scope.qualname(node.func)
        name = ops_einops.einops_function(qualname)
        if name is not None:
            yield from self._check_einops(node, name, ctx)
        elif qualname == "torch.einsum":
            yield from self._check_torch_einsum(node, ctx)
        elif qualname is None and len(node.args) == 1 and not node.keywords:
            yield from self._check_layer_call(node, ctx)

    def _check_einops(self, node: ast.Call, name: str, ctx: Context) -> Iterator[Finding]:
        call = _facts_call(node, ctx)
        error = ops_einops.call_error(ctx.facts, name, call)
        if error is None:
            return
        what = f"`{name}` layer" if name in ops_einops.LAYERS else f"`{name}`"
        pattern = self._pattern(name, call)
        if ops_einops.pattern_error(name, call):
            yield self.finding(ctx, node, f'{what} pattern "{pattern}" is malformed: {error.message}')
            return
        operands = self._operands(name, call)
        taken = ("tensor", "pattern", "reduction")
        yield self.finding(ctx, node, f'{what} pattern "{pattern}" does not fit the{_inputs_text(operands)}'
                                      f'{_sizes_text(call, taken)}: {error.message}')

    @staticmethod
    def _pattern(name: str, call: Call) -> str:
        if name == "einsum":
            return _string(call.args[-1]) or "?"
        position = {"unpack": 2, "Rearrange": 0, "Reduce": 0}.get(name, 1)
        return _string(call.get(position, "pattern")) or "?"

    @staticmethod
    def _operands(name: str, call: Call) -> list:
        if name == "einsum":
            return list(call.args[:-1])
        first = call.get(0, "tensors" if name == "pack" else "tensor")
        if name == "pack" and isinstance(first, SeqValue) and first.items is not None:
            return list(first.items)
        return [first]

    def _check_torch_einsum(self, node: ast.Call, ctx: Context) -> Iterator[Finding]:
        call = _facts_call(node, ctx)
        try:
            read = self._torch_einsum_operands(call)
        except ShapeError as err:  # a sublist subscript out of range
            yield self.finding(ctx, node, f"`torch.einsum`: {err.message}")
            return
        if read is None:
            return
        equation, operands = read
        try:
            shapes.einsum(equation, [o.shape if isinstance(o, TensorValue) else None for o in operands])
        except ShapeError as err:
            yield self.finding(ctx, node, f'`torch.einsum` equation "{equation}" does not fit the'
                                          f"{_inputs_text(operands)}: {err.message}")

    @staticmethod
    def _torch_einsum_operands(call: Call):
        """(equation, operands) of ``torch.einsum(eq, a, b)``, ``torch.einsum(eq, [a, b])`` or the sublist form."""
        if call.starred or call.kwargs or not call.args:
            return None
        equation = _string(call.args[0])
        if equation is None:
            return ops_einops.sublist_call(call)
        operands = call.args[1:]
        if len(operands) == 1 and isinstance(operands[0], SeqValue) and operands[0].items is not None:
            operands = list(operands[0].items)
        if not all(isinstance(o, TensorValue) or o is None for o in operands):
            return None
        return equation, list(operands)

    def _check_layer_call(self, node: ast.Call, ctx: Context) -> Iterator[Finding]:
        module = ctx.value(node.func)
        x = ctx.value(node.args[0])
        if not isinstance(module, ModuleValue) or not isinstance(x, TensorValue):
            return
        layer = module
        if module.kind == "Sequential" and module.children:
            layer = module.children[0]  # the first layer sees the input as it is
        if not ops_einops.is_einops_layer(layer):
            return
        error = ops_einops.layer_error(layer, x)
        if error is not None:
            kind = layer.kind[len(ops_einops.LAYER_KIND_PREFIX):]
            inside = " (the first layer of the nn.Sequential)" if layer is not module else ""
            yield self.finding(ctx, node, f'`{kind}` layer pattern "{layer.setting("pattern")}"{inside} does not fit '
                                          f"the input {_shape_text(x) or '?'}: {error.message}")


RULES = (EinopsPatternMismatch,)
