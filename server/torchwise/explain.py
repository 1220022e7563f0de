"""Hover text: what the analysis knows about the expression under the cursor, for a person.

Pure: an analysed module and a position in, Markdown out. Unknown facts read ``?``.
"""

from __future__ import annotations

import ast
from typing import Optional

from torchwise.analysis import layout, shapes
from torchwise.analysis.dims import readable_dim, readable_shape
from torchwise.analysis.infer import Inference
from torchwise.analysis.values import (
    DeviceValue, DtypeValue, EitherValue, InstanceValue, ModuleValue, NdarrayValue, ScalarValue, SeqValue, TensorValue,
)
from torchwise.findings import Position, Span
from torchwise.rules.shapes import ELEMENTWISE_METHODS
from torchwise.source import SourceFile

_SHAPE_METHODS = frozenset({"view", "reshape", "transpose", "permute", "t", "flatten", "unsqueeze", "squeeze",
                            "expand", "contiguous", "swapaxes", "swapdims", "view_as", "reshape_as", "T", "mT"})
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
              ast.Pow: "**", ast.MatMult: "@"}


dim_text, shape_text = readable_dim, readable_shape


def tensor_line(value: TensorValue) -> str:
    dtype = value.dtype.short if value.dtype is not None else "?"
    device = value.device or "?"
    text = f"`Tensor[{dtype}, {shape_text(value.shape)}]` on {device}"
    contiguity = contiguity_text(value)
    return f"{text} · {contiguity}" if contiguity else text


def contiguity_text(value: TensorValue) -> str:
    if value.shape is None or value.strides is None:
        return ""
    contiguous = layout.is_contiguous(value.shape, value.strides)
    if contiguous is True:
        return "contiguous"
    if contiguous is False:
        return f"not contiguous (strides {shape_text(value.strides)})"
    return ""


def dtype_why(dtype: str, why: str) -> str:
    """``- dtype int64: inherits ...``; when the reason names the dtype itself (``the default dtype float32``,
    ``Python ints infer int64``), the dtype is not said twice."""
    return f"- dtype: {why}" if dtype in why.split() else f"- dtype {dtype}: {why}"


def describe(value) -> Optional[str]:
    """One value, as a few Markdown lines."""
    if isinstance(value, TensorValue):
        lines = [tensor_line(value)]
        if value.dtype is not None and value.why:
            lines.append(dtype_why(value.dtype.short, value.why))
        if value.requires_grad:
            lines.append("- requires grad" + (" (a leaf)" if value.is_leaf else " (computed from tensors that do)"))
        if value.memory and value.memory != "new memory":
            lines.append(f"- memory: {value.memory}")
        return "\n".join(lines)
    if isinstance(value, NdarrayValue):
        dtype = value.dtype.short if value.dtype is not None else "?"
        lines = [f"`ndarray[{dtype}, {shape_text(value.shape)}]`"]
        if value.why and value.dtype is not None:
            lines.append(dtype_why(dtype, value.why))
        return "\n".join(lines)
    if isinstance(value, ModuleValue):
        config = ", ".join(f"{k}={v}" for k, v in value.config if isinstance(v, (int, tuple, str)))
        lines = [f"`nn.{value.kind}({config})`"]
        for name, param in value.params:
            lines.append(f"- {name}: {tensor_line(param)}")
        for name, child in zip(value.names or [None] * len(value.children or ()), value.children or ()):
            label = f"nn.{child.kind}" if isinstance(child, ModuleValue) else \
                child.class_name if isinstance(child, InstanceValue) else "?"
            lines.append(f"- {name + ': ' if name else ''}`{label}`")
        if value.children is None and value.element is not None:
            label = f"nn.{value.element.kind}" if isinstance(value.element, ModuleValue) else \
                getattr(value.element, "class_name", "?")
            lines.append(f"- each: `{label}`")
        return "\n".join(lines)
    if isinstance(value, InstanceValue):
        return f"`{value.class_name}` (a module of this file)" if value.bindings is not None else None
    if isinstance(value, ScalarValue) and value.kind != "none":
        shown = f" = {value.value}" if value.value is not None and value.kind != "str" else ""
        return f"`{value.kind}{shown}`"
    if isinstance(value, SeqValue) and value.kind == "size" and value.items is not None:
        dims = [i.value if isinstance(i, ScalarValue) else None for i in value.items]
        return f"`torch.Size({shape_text(dims)})`"
    if isinstance(value, SeqValue) and value.kind in ("list", "tuple"):
        return sequence_text(value)
    if isinstance(value, DeviceValue):
        return f"`device({value.device or '?'})`"
    if isinstance(value, DtypeValue) and value.dtype is not None:
        return f"`{value.dtype.torch_name}`"
    if isinstance(value, EitherValue) and value.may_be_none and isinstance(value.without_none(), TensorValue):
        return f"{tensor_line(value.without_none())} or `None`"  # `self.pos = nn.Parameter(...) if learned else None`
    return None


_MAX_ITEM_LINES = 8


def sequence_text(value: SeqValue) -> Optional[str]:
    """A list or tuple: ``list of 8 · each `Tensor[...]` ``, or one line per item when they differ (``x.chunk``'s
    tuple, ``max(dim=1)``'s values and indices). Nothing when nothing is known of its items."""
    items = value.items
    if items is not None and 1 < len(items) <= _MAX_ITEM_LINES and any(i != items[0] for i in items[1:]):
        labels = value.fields or range(len(items))
        lines = [f"- {'.' if value.fields else '['}{label}{'' if value.fields else ']'}: {_item_line(item)}"
                 for label, item in zip(labels, items)]
        return f"`{value.kind}` of {len(items)}\n" + "\n".join(lines)
    each = _item_line(value.each)
    if each == "?":
        return None
    length = len(items) if items is not None else dim_text(value.length) if value.length is not None else "?"
    return f"`{value.kind}` of {length} · each {each}"


def _item_line(item) -> str:
    """One item of a sequence, on one line."""
    if isinstance(item, TensorValue):
        return tensor_line(item)
    described = describe(item) if item is not None else None
    return described.split("\n", 1)[0] if described else "?"


def broadcast_table(rows: list[tuple[str, tuple]], result: Optional[tuple], clash: Optional[shapes.ShapeError]) -> str:
    """Operand shapes right-aligned, then the result or the first clashing pair."""
    aligned = shapes.aligned(*(shape for _, shape in rows))
    width = max((len(dim_text(d)) for row in aligned for d in row if d is not None), default=1)
    label_width = max(len(label) for label, _ in rows)
    lines = []
    for (label, _), row in zip(rows, aligned):
        cells = " ".join((dim_text(d) if d is not None else "").rjust(width) for d in row)
        lines.append(f"{label.ljust(label_width)}  {cells}")
    if clash is not None:
        verdict = f"✗ {clash.message}"
    else:
        cells = " ".join(dim_text(d).rjust(width) for d in result) if result is not None else "?"
        lines.append(f"{'='.ljust(label_width)}  {cells}")
        verdict = f"→ {shape_text(result)}"
    return "```\n" + "\n".join(lines) + "\n```\n" + verdict


class Explainer:
    def __init__(self, source: SourceFile, inference: Inference):
        self.source = source
        self.inference = inference

    def value(self, node):
        return self.inference.values.get(node)

    def hover(self, position: Position) -> Optional[tuple[str, Span]]:
        tree = self.source.tree
        if tree is None:
            return None
        chain = self._nodes_at(tree, position)
        for node in reversed(chain):
            text = self._explain(node, position)
            if text:
                return text, self.source.span(node)
        return None

    def _nodes_at(self, tree: ast.Module, position: Position) -> list[ast.AST]:
        """The expressions containing ``position``, outermost first."""
        chain: list[ast.AST] = []
        stack: list[ast.AST] = list(tree.body)
        while stack:
            node = stack.pop()
            if not hasattr(node, "lineno"):
                stack.extend(ast.iter_child_nodes(node))
                continue
            span = self.source.span(node)
            if not (span.start <= position <= span.end):
                continue
            if isinstance(node, ast.expr):
                chain.append(node)
            stack = list(ast.iter_child_nodes(node))
        return chain

    def _explain(self, node: ast.AST, position: Position) -> Optional[str]:
        if isinstance(node, ast.BinOp) and self._between(node.left, node.right, position):
            return self._binary(node)
        if isinstance(node, ast.Call):
            return self._call(node, position)
        if isinstance(node, ast.Attribute) and node.attr in ("T", "mT") and self._on_name(node, position):
            return self._shape_op(node, self.value(node.value), self.value(node), node.attr)
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
            value = self.value(node)
            described = describe(value)
            if described:
                described += self._config_sizes(value)
                name = self.source.text_of(self.source.span(node))
                return f"**{name}**: {described}" if len(name) <= 40 else described
        return None

    def _config_sizes(self, value) -> str:
        """``- n_embd = 768, n_head = 12 by default (GPTConfig)``: the sizes a shape reads from a config, where the
        file's config class gives them a default."""
        if not isinstance(value, TensorValue) or value.shape is None:
            return ""
        defaults = self.inference.config_defaults()
        named = {}
        for dim in value.shape:
            for symbol in getattr(dim, "symbols", ()):
                for part in symbol.replace("//", " ").split():
                    field = part.strip("()").rsplit(".", 1)[-1]
                    if "." in part and field in defaults:
                        named[field] = defaults[field]
        if not named:
            return ""
        sizes = ", ".join(f"{name} = {number}" for name, (number, _) in sorted(named.items()))
        owners = ", ".join(sorted({owner for _, owner in named.values()}))
        return f"\n- {sizes} by default ({owners})"

    def _between(self, left: ast.AST, right: ast.AST, position: Position) -> bool:
        return self.source.span(left).end <= position <= self.source.span(right).start

    def _on_name(self, attribute: ast.Attribute, position: Position) -> bool:
        end = self.source.span(attribute).end
        return end.line == position.line and end.col - len(attribute.attr) <= position.col <= end.col

    def _binary(self, node: ast.BinOp) -> Optional[str]:
        left, right, result = self.value(node.left), self.value(node.right), self.value(node)
        if not isinstance(left, TensorValue) and not isinstance(right, TensorValue):
            return None
        symbol = _OPERATORS.get(type(node.op), "?")
        return self._operands(symbol, [(node.left, left), (node.right, right)], result, matmul=symbol == "@")

    def _operands(self, symbol: str, operands, result, matmul=False) -> str:
        rows = [(self._label(n), v.shape) for n, v in operands if isinstance(v, TensorValue)]
        header = f"`{symbol}`: " + (tensor_line(result) if isinstance(result, TensorValue) else "result ?")
        if isinstance(result, TensorValue) and result.why and result.dtype is not None:
            header += f"\n- dtype {result.dtype.short}: {result.why}"
        if any(shape is None for _, shape in rows) or len(rows) < 2:
            return header
        if matmul:
            shapes_text = " @ ".join(shape_text(s) for _, s in rows)
            clash = self._error(lambda: shapes.matmul(rows[0][1], rows[1][1]))
            outcome = f"✗ {clash.message}" if clash else f"→ {shape_text(result.shape if result else None)}"
            return f"{header}\n\n`{shapes_text}` {outcome}"
        clash = self._error(lambda: shapes.broadcast(*(s for _, s in rows)))
        table = broadcast_table(rows, result.shape if isinstance(result, TensorValue) else None, clash)
        return f"{header}\n\nbroadcasting (right-aligned):\n{table}"

    @staticmethod
    def _error(compute) -> Optional[shapes.ShapeError]:
        try:
            compute()
        except shapes.ShapeError as err:
            return err
        return None

    def _label(self, node: ast.AST) -> str:
        text = " ".join(self.source.text_of(self.source.span(node)).split())
        return text if len(text) <= 24 else text[:23] + "…"

    def _call(self, node: ast.Call, position: Position) -> Optional[str]:
        func = node.func
        on_callee = self.source.span(func).start <= position <= self.source.span(func).end
        if not on_callee:
            return None
        if isinstance(func, ast.Attribute) and self._on_name(func, position):
            receiver = self.value(func.value)
            if isinstance(receiver, TensorValue) and func.attr in _SHAPE_METHODS:
                return self._shape_op(node, receiver, self.value(node), func.attr)
            if isinstance(receiver, TensorValue) and func.attr in ELEMENTWISE_METHODS and node.args:
                return self._operands(f".{func.attr}", [(func.value, receiver), (node.args[0], self.value(node.args[0]))],
                                      self.value(node))
        result = self.value(node)
        if isinstance(result, TensorValue):
            callee = self._label(func)
            return f"**{callee}(…)** → {describe(result)}"
        described = describe(result)
        return f"**{self._label(func)}(…)** → {described}" if described else None

    def _shape_op(self, node, receiver, result, name: str) -> Optional[str]:
        if not isinstance(receiver, TensorValue):
            return None
        lines = [f"**.{name}**: {shape_text(receiver.shape)} → "
                 + (shape_text(result.shape) if isinstance(result, TensorValue) else "✗ (raises, or unknown)")]
        before = contiguity_text(receiver)
        if before:
            lines.append(f"- input: {before}")
        if isinstance(result, TensorValue):
            after = contiguity_text(result)
            if after:
                lines.append(f"- output: {after}")
            if result.memory:
                lines.append(f"- {result.memory}")
            elif name in ("transpose", "permute", "t", "T", "mT", "unsqueeze", "squeeze", "expand", "swapaxes",
                          "swapdims"):
                lines.append("- a view: shares memory with its input")
        return "\n".join(lines)
