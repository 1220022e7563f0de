"""The iteration space of a loop: what each loop variable stands for, as a walk along a tensor.

A loop (or each of several nested loops) is one *level*. Its variables are an index (``i`` of
``range(N)``, of ``enumerate``) and elements (``v`` of ``for v in x``, ``zip(x, y)``, a list of
tensors, ``x.tolist()``). Vectorized, the level is one leading dimension of size ``count``: the
index becomes ``torch.arange(...)`` and an element the whole tensor it walks.

``range`` walks may start, step and run backwards (``range(1, N)``, ``reversed(range(N))``): the
index takes the values ``start + step * k`` for ``k`` in ``0..count-1``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from torchwise.analysis import dims
from torchwise.analysis.dtypes import DType
from torchwise.analysis.values import ScalarValue, SeqValue, SymbolicValue, TensorValue
from torchwise.vectorize.expr import spelled

Dim = object  # int | dims.Sym


class Unwalkable(Exception):
    """The loop header is not a walk this module understands (the reason is the message)."""


class HalfKnown(Unwalkable):
    """The loop walks tensors, but not in a way that can be vectorized as it is: a list of tensors whose shapes are
    unknown or differ, or a ``zip`` of tensors with something unknown. A per-element body is flagged, with the reason."""

    def __init__(self, reason: str, kind: str, hint: str = ""):
        super().__init__(reason)
        self.kind = kind  # the walk's kind: "list" | "tensor"
        self.hint = hint  # what would do it, for a loop that builds a result per item (not for a reduction)


@dataclass
class Element:
    """One element variable: the tensor (or list) it walks, as vectorized text, and its facts."""

    text: str  # the whole thing walked, as code (`x`, `torch.stack(images)`, `torch.tensor(weights)`)
    whole: object  # its facts: a TensorValue whose dim 0 is the walk
    kind: str  # "tensor" | "list" (of tensors) | "numbers" (a Python list of numbers) | "tolist"
    fresh: bool = False  # the text makes new memory
    item: object = None  # for "numbers" / "tolist": what one element is (a ScalarValue)
    roots: tuple = ()  # the names the walked expression reads
    node: Optional[ast.expr] = None  # a tensor walk: the walked expression as written


@dataclass
class Level:
    count: Dim  # how many iterations (an int or a symbolic size); None: unknown (a list)
    count_text: Optional[str]  # code giving the count
    index: Optional[str] = None  # the index variable, if any
    start: Dim = 0  # index values: start + step * k
    step: int = 1
    arange: Optional[str] = None  # code (without the torch prefix) for the index values: "arange(1, N)"
    elements: dict = field(default_factory=dict)  # name -> Element
    kind: str = "range"  # "range" | "tensor" | "list"
    stop_text: Optional[str] = None  # a range's stop, as written (`len(u) - 1`)
    arange_raises: bool = False  # `torch.arange` of the range's bounds may raise (`range(1, 0)` is empty, not an error)
    unknown_of: Optional[str] = None  # `range(x.shape[0])` of an `x` nothing is known of: flagged, never rewritten
    aliases: dict = field(default_factory=dict)  # name -> the expression it stands for (`v` of `for v in row`: `row[j]`)

    @property
    def names(self) -> set:
        return ({self.index} - {None}) | set(self.elements) | set(self.aliases)


def text(source, node: ast.AST) -> str:
    return source.text_of(source.span(node))


def is_builtin(node: ast.expr, name: str, scope) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name \
        and scope.owner_of(name) is None


def int_value(ctx, node: ast.expr):
    """The int (or symbolic size) an expression certainly is, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    value = ctx.value(node)
    if isinstance(value, ScalarValue) and value.kind == "int" and value.value is not None:
        return value.value
    named = ctx.facts.values.get(node)  # a size known by name (`self.in_channels`), certainly an int
    if isinstance(named, SymbolicValue) and named.is_int:
        return named.dim
    return _numel(ctx, node)


def _size_of_unknown(ctx, node: ast.expr) -> Optional[str]:
    """``x.shape[k]`` / ``x.size(k)`` (k a literal) of a name ``x`` the facts know nothing of (a parameter whose
    shape comes from the caller, or only from an ``assert x.ndim == 2``): the name, else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int:
        owner = node.value.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant) \
            and type(node.args[0].value) is int:
        owner = node.func.value
    else:
        return None
    if not isinstance(owner, ast.Name) or ctx.value(owner) is not None:
        return None
    return owner.id


def _numel(ctx, node: ast.expr):
    """``x.numel()`` / ``x.nelement()`` of a tensor of known shape: the product of its dims."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args
            and not node.keywords and node.func.attr in ("numel", "nelement")):
        return None
    tensor = ctx.value(node.func.value)
    if not isinstance(tensor, TensorValue) or tensor.shape is None:
        return None
    return dims.product(tensor.shape)


class Walker:
    """Builds the level of one ``for`` header (or comprehension generator)."""

    def __init__(self, ctx, scope, torch: str, pure, sizes: frozenset = frozenset(), unknown_lengths: bool = False):
        self.ctx = ctx
        # `range(x.shape[0])` of an unknown `x` walked with a symbolic length: only for a caller that flags it
        self.unknown_lengths = unknown_lengths
        self.scope = scope
        self.source = ctx.source
        self.torch = torch
        self.pure = pure  # raises when an expression may have effects
        self.sizes = sizes  # symbols some tensor the loop uses has as a dimension: each is >= 0 at the loop

    def level(self, target: ast.expr, iterable: ast.expr) -> Level:
        level = self._level(target, iterable)
        roots = tuple(n.id for n in ast.walk(iterable) if isinstance(n, ast.Name))
        for element in level.elements.values():
            if not element.roots:
                element.roots = roots
        return level

    def _level(self, target: ast.expr, iterable: ast.expr) -> Level:
        if is_builtin(iterable, "enumerate", self.scope):
            return self.enumerated(target, iterable)
        if is_builtin(iterable, "zip", self.scope):
            return self.zipped(target, iterable)
        if isinstance(target, ast.Tuple) and not is_builtin(iterable, "range", self.scope):
            return self.unpacked_rows(target, iterable)
        if not isinstance(target, ast.Name):
            raise Unwalkable("the loop target is not a plain name")
        if is_builtin(iterable, "range", self.scope):
            return self.range_level(target.id, iterable)
        if is_builtin(iterable, "reversed", self.scope) and len(iterable.args) == 1 \
                and is_builtin(iterable.args[0], "range", self.scope) and not iterable.keywords:
            return self.reversed_range(target.id, iterable.args[0])
        element, count = self.element(iterable)
        return Level(count, self._count_text(element, count), elements={target.id: element},
                     kind="list" if element.kind == "list" else "tensor")

    def unpacked_rows(self, target: ast.Tuple, iterable: ast.expr) -> Level:
        """``for u, v in edges`` of a tensor whose rows hold exactly that many items: the row walked under a hidden
        name, each target its item (``row[0]``, ``row[1]``: what unpacking a tensor row iterates)."""
        from torchwise.vectorize import proof

        if not all(isinstance(e, ast.Name) for e in target.elts):
            raise Unwalkable("the loop target is not a plain name or a tuple of names")
        element, count = self.element(iterable)
        shape = element.whole.shape
        if element.kind != "tensor" or len(shape) < 2 or shape[1] != len(target.elts):
            raise Unwalkable("rows unpacked into names whose number is not known to be the rows' length")
        row = proof.fresh_name(self.ctx.tree, "_row")
        aliases = {}
        for k, name in enumerate(target.elts):
            item = ast.Subscript(value=ast.Name(row, ast.Load()), slice=ast.Constant(k), ctx=ast.Load())
            aliases[name.id] = spelled(item, name)
        if len(aliases) != len(target.elts):
            raise Unwalkable("a name bound twice")
        return Level(count, self._count_text(element, count), elements={row: element}, kind="tensor", aliases=aliases)

    # -- ranges ---------------------------------------------------------------------------------
    def range_level(self, name: str, call: ast.Call) -> Level:
        args = call.args
        if call.keywords or not 1 <= len(args) <= 3 or any(isinstance(a, ast.Starred) for a in args):
            raise Unwalkable("a `range` not understood")
        for arg in args:
            self.pure(arg)
        bounds = [int_value(self.ctx, a) for a in args]
        unknown_of = _size_of_unknown(self.ctx, args[0]) \
            if self.unknown_lengths and len(args) == 1 and bounds[0] is None else None
        if unknown_of is not None:
            # a symbolic length lets the body be translated, for its one reason (or for a flag without a fix)
            bounds = [dims.Sym.fresh("n")]
        if any(b is None for b in bounds):
            raise Unwalkable("the number of iterations is unknown")
        start, stop = (0, bounds[0]) if len(args) == 1 else (bounds[0], bounds[1])
        step = bounds[2] if len(args) == 3 else 1
        if type(step) is not int or step == 0:
            raise Unwalkable("a `range` whose step is not a known int")
        count = _range_count(start, stop, step) if unknown_of is None else stop
        if count is None and step == 1 and start == 0 and stop in self.sizes:
            count = stop  # `range(self.in_channels)` filling a tensor of that many rows: a size, never negative
        if count is None:
            raise Unwalkable("the number of iterations is unknown")
        inside = ", ".join(text(self.source, a) for a in args)
        count_text = text(self.source, args[0]) if len(args) == 1 else None
        if count_text is None and type(count) is int:
            count_text = str(count)
        stop_text = text(self.source, args[0] if len(args) == 1 else args[1])
        span = stop - start if step > 0 else start - stop
        raises = dims.dim_lt(-1, span) is not True and dims.dim_lt(0, count) is not True
        return Level(count, count_text, index=name, start=start, step=step, arange=f"arange({inside})",
                     stop_text=stop_text, arange_raises=raises, unknown_of=unknown_of)

    def reversed_range(self, name: str, call: ast.Call) -> Level:
        forward = self.range_level(name, call)
        if forward.step != 1:
            raise Unwalkable("`reversed` of a stepped range")
        forward.start = forward.start + forward.count - 1
        forward.step = -1
        forward.arange = f"{forward.arange}.flip(0)"
        return forward

    # -- elements --------------------------------------------------------------------------------
    def element(self, iterable: ast.expr) -> tuple:
        """(Element, count) for ``for v in iterable``."""
        value = self.ctx.value(iterable)
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
                and iterable.func.attr == "tolist" and not iterable.args and not iterable.keywords:
            inner = self.ctx.value(iterable.func.value)
            if isinstance(inner, TensorValue) and inner.shape is not None and len(inner.shape) == 1 \
                    and inner.dtype is not None:
                self.pure(iterable.func.value)
                base = text(self.source, iterable.func.value)
                kind = "bool" if inner.dtype.short == "bool" else \
                    "float" if inner.dtype.short.startswith(("float", "bfloat")) else "int"
                if inner.dtype.short.startswith("complex"):
                    raise Unwalkable("complex numbers")
                return Element(_atom(base, iterable.func.value), inner, "tolist", item=ScalarValue(kind)), \
                    inner.shape[0]
        if isinstance(value, TensorValue):
            if value.dtype is None or value.shape is None or not value.shape or value.device is None:
                raise Unwalkable("the iterated tensor's dtype, shape or device is unknown")
            self.pure(iterable)
            return Element(_atom(text(self.source, iterable), iterable), value, "tensor",
                           fresh=not isinstance(iterable, (ast.Name, ast.Attribute, ast.Subscript)),
                           node=iterable), value.shape[0]
        if isinstance(iterable, (ast.List, ast.Tuple)):
            numbers = self.literal_numbers(iterable)
            if numbers is not None:
                return numbers
        if isinstance(iterable, ast.Name):
            listed = self.list_of_tensors(iterable)
            if listed is not None:
                return listed
            numbers = self.list_of_numbers(iterable)
            if numbers is not None:
                return numbers
            from torchwise.vectorize import proof

            if isinstance(value, SeqValue) and value.kind == "list" and isinstance(value.each, TensorValue) \
                    and value.each.dtype is not None and value.each.shape is None \
                    and proof.list_stable(self.ctx, self.scope, iterable.id):  # its items are those it was made of
                raise HalfKnown(f"the tensors of `{iterable.id}` may differ in shape", "list",
                                "a ragged list: `torch.nn.utils.rnn.pad_sequence` pads one")
        raise Unwalkable("not a walk over a tensor, a range or a list of same-shaped tensors")

    def list_of_tensors(self, name: ast.Name):
        """A list of same-shaped tensors: what every item is, from the engine's facts at the loop (or from the
        list's one binding, when the list is built once and never changed)."""
        from torchwise.vectorize import proof

        value = self.ctx.value(name)
        item, length = (value.each, sequence_length(value)) if isinstance(value, SeqValue) \
            and value.kind in ("list", "tuple") else (None, None)
        if not _known_tensor(item):
            if not isinstance(value, SeqValue):
                return None  # not known to be a list at all (a loader, a generator): no need to look further
            found = proof.list_element(self.ctx, self.scope, name)
            if found is None:
                return None
            item, length = found
        if not proof.list_stable(self.ctx, self.scope, name.id):
            return None
        whole = TensorValue(item.dtype, (length if length is not None else dims.Sym.fresh("n"),) + tuple(item.shape),
                            item.device, _stacked_strides(item, length), item.requires_grad, None)
        return Element(f"{self.torch}.stack({name.id})", whole, "list", fresh=True), length

    def list_of_tuple_items(self, name: ast.Name, position: int):
        """``batch[i][0]`` of a list of ``(image, label)`` pairs: the tensors at ``position``, stacked (the items
        alike, the list never changed)."""
        from torchwise.vectorize import proof

        value = self.ctx.value(name)
        each = value.each if isinstance(value, SeqValue) and value.kind in ("list", "tuple") else None
        if not (isinstance(each, SeqValue) and each.kind == "tuple" and each.items is not None
                and -len(each.items) <= position < len(each.items)):
            return None
        item, length = each.items[position], sequence_length(value)
        if not _known_tensor(item) or not proof.list_stable(self.ctx, self.scope, name.id):
            return None
        whole = TensorValue(item.dtype, (length if length is not None else dims.Sym.fresh("n"),) + tuple(item.shape),
                            item.device, _stacked_strides(item, length), item.requires_grad, None)
        var = "item" if name.id == "b" else "b"  # the comprehension's own name: it reads nothing else
        return Element(f"{self.torch}.stack([{var}[{position}] for {var} in {name.id}])", whole, "list",
                       fresh=True, roots=(name.id,)), length

    def list_of_numbers(self, name: ast.Name):
        """A list (or tuple) of Python numbers: ``torch.tensor(name)`` walks the same values."""
        from torchwise.vectorize import proof

        value = self.ctx.value(name)
        if not (isinstance(value, SeqValue) and value.kind in ("list", "tuple") and value.items):
            return None
        kinds = {item.kind if isinstance(item, ScalarValue) else None for item in value.items}
        if not kinds <= {"int", "float"} or not proof.list_stable(self.ctx, self.scope, name.id):
            return None
        kind = "float" if "float" in kinds else "int"
        dtype = self.ctx.facts.default_float if kind == "float" else DType.int64
        if dtype is None:
            return None
        whole = TensorValue(dtype, (len(value.items),), "cpu", (1,), False, True)
        return Element(f"{self.torch}.tensor({name.id})", whole, "numbers", fresh=True, item=ScalarValue(kind)), \
            len(value.items)

    def literal_numbers(self, node: ast.expr):
        """``[0.299, 0.587, 0.114]`` written in the header: ``torch.tensor([...])`` walks the same numbers (the
        default float dtype for floats, int64 for ints)."""
        values = [_number(item) for item in node.elts]
        if not values or any(v is None for v in values):
            return None
        kind = "float" if any(type(v) is float for v in values) else "int"
        dtype = self.ctx.facts.default_float if kind == "float" else DType.int64
        if dtype is None:
            return None
        literal = text(self.source, node)
        if isinstance(node, ast.Tuple) and not literal.startswith("("):
            literal = f"({literal})"
        whole = TensorValue(dtype, (len(values),), "cpu", (1,), False, True)
        return Element(f"{self.torch}.tensor({literal})", whole, "numbers", fresh=True, item=ScalarValue(kind)), \
            len(values)

    def enumerated(self, target: ast.expr, call: ast.Call) -> Level:
        if call.keywords or len(call.args) != 1 or not (isinstance(target, ast.Tuple) and len(target.elts) == 2
                                                        and isinstance(target.elts[0], ast.Name)):
            raise Unwalkable("an `enumerate` with a start, or a target not understood")
        level = self.level(target.elts[1], call.args[0])
        index = target.elts[0].id
        if level.index is not None or index in level.names:
            raise Unwalkable("`enumerate` of something other than tensors")
        level.index = index
        level.arange = f"arange({level.count_text})" if level.count_text else None
        return level

    def zipped(self, target: ast.expr, call: ast.Call) -> Level:
        """``zip`` stops at the shortest: the lengths must be known equal, or known ints (the longer walks are
        cut to the shortest: ``zip(a, b)`` of 100 and 80 items walks ``a[:80]`` and ``b``)."""
        if call.keywords or len(call.args) < 2 or not isinstance(target, ast.Tuple) \
                or len(target.elts) != len(call.args):
            raise Unwalkable("a `zip` not understood")
        parts, unknown = [], None
        for name, iterable in zip(target.elts, call.args):
            try:
                part = self.level(name, iterable)
            except HalfKnown:
                raise
            except Unwalkable:
                if unknown is None:
                    unknown = iterable
                continue
            if part.index is not None:
                raise Unwalkable("`zip` of a range")
            parts.append(part)
        if unknown is not None:
            if parts and isinstance(unknown, (ast.Name, ast.Attribute)):
                raise HalfKnown(f"`zip` of tensors with `{text(self.source, unknown)}`, which is not known to be a tensor "
                                f"or a list of same-shaped tensors", parts[0].kind)
            raise Unwalkable("a `zip` of something that is not walked")
        counts = [p.count for p in parts]
        if any(c is None for c in counts):
            raise Unwalkable("`zip` of something whose length is unknown")
        shortest = counts[0]
        if not all(dims.dim_eq(c, shortest) is True for c in counts):
            if not all(type(c) is int for c in counts):
                raise Unwalkable(f"`zip` stops at the shortest, and the lengths "
                                 f"{' and '.join(_fmt(c) for c in counts)} may differ")
            shortest = min(counts)
            for part in parts:
                if part.count != shortest:
                    part.elements = {n: _cut(e, shortest) for n, e in part.elements.items()}
                    part.count = shortest
                    part.count_text = str(shortest)
        level = parts[0]
        for part in parts[1:]:
            if part.names & level.names:
                raise Unwalkable("a name bound twice")
            level.elements.update(part.elements)
            if level.kind == "list" and part.kind != "list":
                level.kind = part.kind
                level.count_text = part.count_text
        return level

    def _count_text(self, element: Element, count) -> Optional[str]:
        if type(count) is int:
            return str(count)
        if element.kind == "tensor":
            return f"{element.text}.shape[0]"
        if element.kind == "list":
            return f"len({element.text[len(self.torch) + len('.stack('):-1]})"
        return None


def _number(node: ast.expr):
    """The int or float a literal is (``-2`` too), else None (bools are not walked as numbers)."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return sign * node.value
    return None


def _cut(element: Element, count: int) -> Element:
    """The element walk of only the first ``count`` items (what ``zip`` reaches)."""
    if element.kind == "list":
        inner = element.text[element.text.index("(") + 1:-1]
        text = element.text.replace(f"({inner})", f"({inner}[:{count}])")
    elif element.kind == "numbers":
        inner = element.text[element.text.index("(") + 1:-1]
        text = element.text.replace(f"({inner})", f"({inner}[:{count}])")
    else:
        text = f"{element.text}[:{count}]"
    whole = element.whole.with_(shape=(count,) + tuple(element.whole.shape[1:]))
    return Element(text, whole, element.kind, element.fresh, element.item, element.roots)


def _known_tensor(value) -> bool:
    return isinstance(value, TensorValue) and value.dtype is not None and value.shape is not None \
        and value.device is not None


def tensor_sizes(ctx, nodes) -> frozenset:
    """The symbolic dimensions of the tensors named in ``nodes`` (the engine's facts there)."""
    found = set()
    for node in nodes:
        for sub in ast.walk(node):
            value = ctx.value(sub) if isinstance(sub, ast.Name) else None
            if isinstance(value, TensorValue) and value.shape is not None:
                found.update(d for d in value.shape if isinstance(d, dims.Sym))
    return frozenset(found)


def _range_count(start, stop, step: int):
    """How many values ``range(start, stop, step)`` takes, when certain (never negative)."""
    if type(start) is int and type(stop) is int:
        return len(range(start, stop, step))
    if step == 1:
        count = stop - start
        return count if dims.dim_lt(-1, count) is True else None
    return None


def _stacked_strides(value: TensorValue, length):
    """``torch.stack`` of row-major items is row-major; of other items it may keep their layout."""
    from torchwise.analysis import layout

    if value.shape is None or length is None or layout.is_contiguous(value.shape, value.strides) is not True:
        return None
    return layout.contiguous_strides((length, *value.shape))


def _atom(code: str, node: ast.AST) -> str:
    return code if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) and "\n" not in code \
        else f"({code})"


def _fmt(count) -> str:
    return "?" if count is None else dims.fmt_dim(count)


def sequence_length(value) -> Optional[Dim]:
    if isinstance(value, SeqValue):
        if value.items is not None:
            return len(value.items)
        return value.length
    return None
