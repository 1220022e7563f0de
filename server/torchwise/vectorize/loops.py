"""Recognizing Python loops over tensors, and building their vectorized rewrites.

One entry per syntactic form: :func:`match_loop` for ``for`` statements (maps into a
preallocated output or a stacked list, nested loops filling a matrix, filters, reductions,
running max / min, any / all flags, ``torch.cat`` accumulation, per-item loops over a list of
tensors; over ``range``, a tensor, ``enumerate`` or ``zip`` of equal lengths), :func:`match_call`
for comprehensions passed to ``torch.tensor``/``torch.stack`` and for builtins that iterate a
tensor (``sum(t)``).

A match has a message and, when every proof obligation holds, a fix. Three outcomes:

- the pattern is not there, or something in it is not understood (an unknown call, a value
  whose facts are unknown, a read of the output, a carried dependence): ``None``, silent;
- the pattern is certain but one obligation cannot be shown (the loop may run zero times and
  the result's type would then differ, the loop variable is read afterwards, ...): a match
  without a fix, whose message says why;
- everything proven: a match with the fix.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Callable, Optional

from torchwise.analysis import dims, layout
from torchwise.analysis.dtypes import DType, is_floating, is_integral
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue, join
from torchwise.vectorize import proof, rewrite
from torchwise.vectorize.expr import (ATOM, Batch, Grid, GridTranslator, Refuse, Space, Translator, Vec,
                                      grid_indices, no_raising_ops, row_ordered, wrap)

_ALLOCATORS = frozenset({"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.empty_like",
                         "torch.zeros_like", "torch.ones_like", "torch.full_like"})
_FRESH_FACTORIES = _ALLOCATORS | {"torch.tensor", "torch.randn", "torch.rand", "torch.arange"}
_SUM_DTYPES = frozenset({DType.float32, DType.float64})
_IO_CALLS = frozenset({"print", "open", "input", "breakpoint", "exec", "eval"})
# `e > m` keeps a new maximum; strict comparisons keep the first of equal ones.
_EXTREME_OPS = {ast.Gt: ("max", True), ast.GtE: ("max", False), ast.Lt: ("min", True), ast.LtE: ("min", False)}
_FLIPPED = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE}
# With a tensor as the second argument `torch.max(m, v)` / `m.max(v)` is `torch.maximum(m, v)`: the same kernel
# (NaN propagated, ties' gradient split in two); with a number it would be a `dim` (a Python number `v` is refused).
_TORCH_EXTREMES = {"torch.maximum": "max", "torch.minimum": "min", "torch.max": "max", "torch.min": "min"}


@dataclass
class Match:
    code: str
    message: str
    title: Optional[str] = None
    build: Optional[Callable[[], list]] = None
    why_no_fix: Optional[str] = None


class Doubt(Exception):
    """The pattern is certain, but one proof obligation is not: flag it without a fix."""


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cached(ctx, key, compute):
    cache = ctx.__dict__.setdefault("_vectorize_matches", {})
    if key not in cache:
        cache[key] = compute()
    return cache[key]


# -- entry points -------------------------------------------------------------------------------
def match_loop(loop: ast.For, scope, ctx) -> Optional[Match]:
    return _cached(ctx, loop, lambda: _LoopMatcher(loop, scope, ctx).run())


def match_call(call: ast.Call, scope, ctx) -> Optional[Match]:
    return _cached(ctx, call, lambda: _CallMatcher(call, scope, ctx).run())


class _Base:
    def __init__(self, scope, ctx):
        self.scope = scope
        self.ctx = ctx
        self.source = ctx.source
        self.default_float = ctx.facts.default_float
        self.scope_node = _scope_node(scope)

    def torch(self) -> str:
        aliases = list(self.scope.aliases_of("torch"))
        if not aliases:
            raise Refuse("torch is not imported")
        return "torch" if "torch" in aliases else aliases[0]

    def space_for(self, target: ast.expr, iterable: ast.expr, scope) -> tuple[Space, str]:
        """What the loop variables stand for: ("range" | "tensor" | "list")."""
        if _is_builtin_call(iterable, "enumerate", scope):
            return self.enumerated(target, iterable, scope)
        if _is_builtin_call(iterable, "zip", scope):
            return self.zipped(target, iterable, scope), "tensor"
        if not isinstance(target, ast.Name):
            raise Refuse("the loop target is not a plain name")
        if _is_builtin_call(iterable, "range", scope):
            return Space(self.range_count(iterable, scope, start=0), index=target.id), "range"
        value = self.ctx.value(iterable)
        if isinstance(value, TensorValue):
            if not isinstance(iterable, (ast.Name, ast.Attribute)):
                raise Refuse("iterating a computed tensor")
            if value.dtype is None or value.shape is None or not value.shape or value.device is None:
                raise Refuse("the iterated tensor's facts are unknown")
            batch = Batch(self.source.text_of(self.source.span(iterable)), ATOM, value.dtype, tuple(value.shape[1:]),
                          value.device, grad=value.requires_grad is not False,
                          row_major=row_ordered(value.shape, value.strides))
            return Space(value.shape[0], element=target.id, element_batch=batch), "tensor"
        if isinstance(iterable, ast.Name):
            element = self.list_element(iterable, scope)
            if element is not None:
                batch = Batch(f"{self.torch()}.stack({iterable.id})", ATOM, element.dtype, tuple(element.shape),
                              element.device, fresh=True, grad=element.requires_grad is not False,
                              row_major=row_ordered(element.shape, element.strides))
                return Space(None, element=target.id, element_batch=batch), "list"
        raise Refuse("not a loop over a tensor, a range or a list of same-shaped tensors")

    def range_count(self, call: ast.Call, scope, start: int):
        """N of ``range(N)`` / ``range(start, N)``, when it is known."""
        args = call.args
        if call.keywords or not 1 <= len(args) <= 2:
            raise Refuse("range with a step")
        first = args[0] if len(args) == 2 else ast.Constant(0)
        if not (isinstance(first, ast.Constant) and type(first.value) is int and first.value == start):
            raise Refuse(f"a range that does not start at {start}")
        count = self.ctx.value(args[-1])
        if not (isinstance(count, ScalarValue) and count.kind == "int" and count.value is not None):
            raise Refuse("the number of iterations is unknown")
        Translator(self.ctx, scope, Space(count.value), self.default_float).check_pure(args[-1])
        return count.value

    def enumerated(self, target: ast.expr, call: ast.Call, scope) -> tuple[Space, str]:
        """``for i, v in enumerate(x)``: one walk along ``x`` with its index."""
        if call.keywords or len(call.args) != 1 or not (isinstance(target, ast.Tuple) and len(target.elts) == 2
                                                        and isinstance(target.elts[0], ast.Name)):
            raise Refuse("an `enumerate` with a start, or a target not understood")
        space, kind = self.space_for(target.elts[1], call.args[0], scope)
        index = target.elts[0].id
        if kind != "tensor" or space.index is not None or index in space.names:
            raise Refuse("`enumerate` of something other than tensors")
        space.index = index
        return space, kind

    def zipped(self, target: ast.expr, call: ast.Call, scope) -> Space:
        """``for a, b in zip(x, y)``: tensors walked together; zip stops at the shortest, so their lengths
        must be known equal."""
        if call.keywords or len(call.args) < 2 or not isinstance(target, ast.Tuple) \
                or len(target.elts) != len(call.args):
            raise Refuse("a `zip` not understood")
        space = None
        for name, iterable in zip(target.elts, call.args):
            part, kind = self.space_for(name, iterable, scope)
            if kind != "tensor" or part.index is not None:
                raise Refuse("`zip` of something other than tensors")
            if space is None:
                space = part
                continue
            if dims.dim_eq(part.count, space.count) is not True:
                raise Refuse(f"`zip` of lengths {space.count} and {part.count}, which may differ")
            if part.names & space.names:
                raise Refuse("a name bound twice")
            space.elements.update(part.elements)
        return space

    def list_element(self, name: ast.Name, scope) -> Optional[TensorValue]:
        """The facts every element of the list ``name`` shares, when the list is built once and never changed."""
        owner = scope.owner_of(name.id)
        if owner is None or len(owner.bindings.get(name.id, ())) != 1 or proof.declared_shared(scope, name.id):
            return None
        binding = owner.bindings[name.id][0]
        value = binding.value
        element = None
        if isinstance(value, ast.ListComp) and len(value.generators) == 1 and not value.generators[0].ifs:
            element = self.ctx.value(value.elt)
        elif isinstance(value, (ast.List, ast.Tuple)) and value.elts:
            items = [self.ctx.value(e) for e in value.elts]
            element = items[0]
            for item in items[1:]:
                element = join(element, item)
        if not isinstance(element, TensorValue) or element.dtype is None or element.shape is None \
                or element.device is None:
            return None
        if not _list_never_changed(_scope_node(owner), name.id, binding.node):
            return None
        return element

    def translator(self, space: Space, scope=None, select=None) -> Translator:
        return Translator(self.ctx, scope or self.scope, space, self.default_float, select)

    def new_row_major(self, vec: Vec) -> Vec:
        """``vec`` as new memory laid out row-major, as the loop's result is (``torch.empty(N, D)`` filled row by
        row, ``torch.stack``): a copy where it is the data itself, and where the layout of the data would carry
        over (``x * 2`` of a transposed ``x`` is column-major too) ``.contiguous()``. Vectorized 1-d, a new
        tensor is contiguous anyway."""
        if vec.rank == 0 or vec.row_major:
            return vec if vec.fresh else replace(vec, text=f"{vec.atom()}.clone()", prec=ATOM, base=None, fresh=True)
        if vec.fresh:
            return replace(vec, text=f"{vec.atom()}.contiguous()", prec=ATOM, base=None, row_major=True)
        # `.contiguous()` of data that is contiguous after all would be the data itself.
        return replace(vec, text=f"{vec.atom()}.clone(memory_format={self.torch()}.contiguous_format)", prec=ATOM,
                       base=None, fresh=True, row_major=True)

    @staticmethod
    def stack_layout(vec: Vec) -> None:
        """``torch.stack`` of the loop's values is row-major when they have at most 2 dims; with more it keeps a
        layout they share (channels-last images stack channels-last), unless they are row-major themselves."""
        if vec.rank >= 3 and not vec.row_major:
            raise Doubt("the stacked values may not be row-major, and `torch.stack` would keep their layout")


class _LoopMatcher(_Base):
    def __init__(self, loop: ast.For, scope, ctx):
        super().__init__(scope, ctx)
        self.loop = loop

    def run(self) -> Optional[Match]:
        loop = self.loop
        if not isinstance(loop, ast.For) or loop.orelse or _has_io(loop):
            return None
        try:
            accumulation = self.cat_accumulation()
            if accumulation is not None:
                return accumulation
            try:
                space, kind = self.space_for(loop.target, loop.iter, self.scope)
            except Refuse:
                return self.extreme_from_second()
            if len(loop.body) != 1:
                return None
            for matcher in (self.preallocated_map, self.grid_map, self.appended_map, self.filtered, self.reduction,
                            self.running_extreme, self.flag):
                found = matcher(space, kind)
                if found is not None:
                    return found
        except Refuse:
            return None
        return None

    # -- shared obligations ----------------------------------------------------------------------
    def loop_variable_free(self, *inner: ast.For) -> None:
        for loop in (self.loop, *inner):
            for name in _target_names(loop.target):
                if proof.read_outside(self.scope_node, self.loop, name):
                    raise Doubt(f"`{name}` is read after the loop")

    def deletable(self, init: Optional[ast.stmt]) -> Optional[ast.stmt]:
        """``init`` when deleting it cannot be seen: it has its lines to itself, and no other code
        (a function called in between) can read the name before the loop sets it."""
        if init is None or not rewrite.stands_alone(self.source, init):
            return None
        name = init.targets[0].id
        if (proof.captured(self.scope_node, name) or proof.declared_shared(self.scope, name)) \
                and not proof.adjacent(self.ctx, init, self.loop):
            return None
        return init

    def needs_iterations(self, space: Space, kind: str, what: str) -> None:
        if kind != "list" and not proof.certainly_positive(space.count):
            raise Doubt(f"the loop may run zero times, and then {what}")

    def not_shared(self, name: str, binding: ast.stmt) -> None:
        if (proof.captured(self.scope_node, name) or proof.declared_shared(self.scope, name)) \
                and not proof.adjacent(self.ctx, binding, self.loop):
            raise Doubt(f"`{name}` may be seen by other code between its creation and the loop")

    def finish(self, code: str, message: str, title: str, obligations: Callable[[], Callable[[], list]]) -> Match:
        try:
            build = obligations()
        except Doubt as doubt:
            return Match(code, f"{message} (no automatic rewrite: {doubt})", why_no_fix=str(doubt))
        except Refuse:
            return None
        return Match(code, message, title, build)

    # -- out[i] = f(x[i]) ------------------------------------------------------------------------
    def preallocated_map(self, space: Space, kind: str) -> Optional[Match]:
        if space.index is None:
            return None
        stmt = self.loop.body[0]
        index = space.index
        stores = _subscript_stores(stmt, index)
        if stores is None:
            return None
        out, values, test = stores
        if out == index or any(proof.mentions(v, out) for v in values) or (test and proof.mentions(test, out)):
            return None
        translator = self.translator(space)
        vec = self.translate_choice(translator, test, values)
        if not vec.batched or not vec.is_tensor:
            return None
        alloc = proof.binding_before(self.ctx, self.loop, out)
        message = f"loop fills `{out}` one element at a time; vectorized: `{out} = {_short(vec.text)}`"

        return self.finish("TW401", message, f"Vectorize: `{out} = {_short(vec.text, 50)}`",
                           lambda: self.fill_obligations(out, alloc, vec, translator, (space.count,)))

    def fill_obligations(self, out: str, alloc, vec: Vec, translator: Translator, counts: tuple,
                         inner: tuple = ()) -> Callable[[], list]:
        """``out`` is allocated right before the loop and every element is written once (the loops run
        ``counts`` times over its leading dimensions): the vectorized value replaces both."""
        self.fresh_output(out, alloc)
        self.loop_variable_free(*inner)
        target = self.ctx.value(alloc.value)
        if not isinstance(target, TensorValue) or target.dtype is None or target.shape is None \
                or target.device is None or len(target.shape) < len(counts):
            raise Doubt(f"`{out}`'s dtype, shape or device is unknown")
        for axis, (size, count) in enumerate(zip(target.shape, counts)):
            if dims.dim_eq(size, count) is not True:
                raise Doubt(f"`{out}` has {dims.fmt_dim(size)} {('rows', 'columns')[axis]}, the loop over them "
                            f"runs {dims.fmt_dim(count)} times")
        if len(target.shape) >= 2 and layout.is_contiguous(target.shape, target.strides) is not True:
            raise Doubt(f"`{out}` may not be row-major (`*_like` copies its model's layout), the vectorized result is")
        element = target.shape[len(counts):]
        if len(element) != vec.rank or any(dims.dim_eq(a, b) is not True for a, b in zip(element, vec.shape)):
            raise Doubt(f"each element written has a different shape from an element of `{out}`")
        if translator.devices != {target.device}:
            raise Doubt(f"`{out}` is on another device than the data")
        if vec.dtype != target.dtype:
            if not vec.exact_cast:
                raise Doubt("the branches have different dtypes from the output")
            # A copy (another dtype) laid out as the data is (`preserve_format`).
            vec = replace(vec, text=f"{vec.atom()}.to({self.torch()}.{target.dtype.short})", prec=ATOM, base=None,
                          fresh=True, dtype=target.dtype)
        text = self.new_row_major(vec).text

        def build():
            return [rewrite.delete_statement(self.source, alloc),
                    rewrite.replace_statements(self.source, self.loop, self.loop, [f"{out} = {text}"])]
        return build

    def fresh_output(self, out: str, alloc) -> None:
        """Nothing but ``out`` refers to its memory: no value the loop reads can change as it writes."""
        if alloc is None or not self._fresh_allocation(alloc.value):
            raise Doubt(f"`{out}` is not freshly allocated right before the loop")
        if not rewrite.stands_alone(self.source, alloc):
            raise Doubt(f"`{out}`'s allocation shares its line")
        self.not_shared(out, alloc)

    # -- for i: for j: out[i, j] = f(a[i], b[j], m[i, j]) -----------------------------------------
    def grid_map(self, space: Space, kind: str) -> Optional[Match]:
        inner = self.loop.body[0]
        if space.index is None or not isinstance(inner, ast.For) or inner.orelse or len(inner.body) != 1:
            return None
        if any(proof.mentions(inner.iter, name) for name in space.names):
            return None  # a triangle, or a walk along the outer element
        inner_space, _ = self.space_for(inner.target, inner.iter, self.scope)
        stores = _grid_stores(inner.body[0])
        if inner_space.index is None or inner_space.names & space.names or stores is None:
            return None
        base, indices, values, test = stores
        out = base.id
        levels = {space.index: space, inner_space.index: inner_space}
        if set(indices) != set(levels) or out in space.names | inner_space.names \
                or any(proof.mentions(v, out) for v in values) or (test is not None and proof.mentions(test, out)):
            return None
        rows, cols = levels[indices[0]], levels[indices[1]]
        translator = GridTranslator(self.ctx, self.scope, Grid(rows, cols), self.default_float)
        vec = self.translate_choice(translator, test, values)
        if not vec.batched or not vec.is_tensor:
            return None
        alloc = proof.binding_before(self.ctx, self.loop, out)
        if len(translator.axes) == 1:
            return self.broadcast_fill(base, alloc, vec, translator, (rows.count, cols.count), inner)
        vec = self._outer(translator, test, values, vec)
        message = f"nested loops fill `{out}` one element at a time; vectorized: `{out} = {_short(vec.text)}`"

        def obligations():
            if not translator.layout_known:
                raise Doubt("a matrix read may not be row-major, and the result would take its layout")
            return self.fill_obligations(out, alloc, vec, translator, (rows.count, cols.count), (inner,))

        return self.finish("TW401", message, f"Vectorize: `{out} = {_short(vec.text, 50)}`", obligations)

    def broadcast_fill(self, base: ast.Name, alloc, vec: Vec, translator: Translator, counts: tuple,
                       inner: ast.For) -> Optional[Match]:
        """Each value depends on one index only (``out[i, j] = a[i] * 2``): one broadcasting write into
        ``out`` itself does what the loops do, cast included (both go through ``copy_``)."""
        out = base.id
        text = f"{out}[:] = {vec.text}"
        message = f"nested loops fill `{out}` one element at a time; vectorized: `{_short(text)}`"

        def obligations():
            self.fresh_output(out, alloc)
            self.loop_variable_free(inner)
            target = self.ctx.value(base)
            if not isinstance(target, TensorValue) or target.dtype is None or target.shape is None \
                    or len(target.shape) != 2 \
                    or any(dims.dim_eq(a, b) is not True for a, b in zip(target.shape, counts)):
                raise Doubt(f"`{out}` may not have exactly the shape the loops walk")
            if translator.devices - {target.device}:
                raise Doubt(f"`{out}` is on another device than the data")
            if vec.dtype != target.dtype and not vec.exact_cast:
                raise Doubt("the branches have different dtypes from the output")
            return self._replace_loop([text])

        return self.finish("TW401", message, f"Vectorize: `{_short(text, 50)}`", obligations)

    def _outer(self, translator: GridTranslator, test, values, vec: Vec) -> Vec:
        """``a[i] * b[j]`` of two vectors is ``torch.outer(a, b)``."""
        value = values[0]
        if test is not None or not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)):
            return vec
        sides = [translator.leaves.get(v) for v in (value.left, value.right)]
        if None in sides or {axis for axis, _ in sides} != {0, 1}:
            return vec
        (_, a), (_, b) = sorted(sides)
        return replace(vec, text=f"{self.torch()}.outer({a}, {b})", prec=ATOM, base=None, fresh=True)

    def translate_choice(self, translator: Translator, test, values) -> Vec:
        if test is None:
            return translator(values[0])
        cond, body, orelse = translator(test), translator(values[0]), translator(values[1])
        return translator.where(cond, body, orelse, values, python_choice=True)

    def _fresh_factory(self, value: ast.expr) -> bool:
        """A new tensor nothing else refers to (a view of the data, added to in place, would change the data)."""
        return isinstance(value, ast.Call) and self.scope.qualname(value.func) in _FRESH_FACTORIES

    def _fresh_allocation(self, value: ast.expr) -> bool:
        if not isinstance(value, ast.Call) or self.scope.qualname(value.func) not in _ALLOCATORS:
            return False
        if any(k.arg not in ("dtype", "device") for k in value.keywords):
            return False
        try:
            checker = self.translator(Space(0))
            for arg in [*value.args, *(k.value for k in value.keywords)]:
                checker.check_pure(arg)
        except Refuse:
            return False
        return True

    # -- res.append(f(x[i])); torch.stack(res) ---------------------------------------------------
    def appended_map(self, space: Space, kind: str) -> Optional[Match]:
        appends = _appends(self.loop.body[0])
        if appends is None:
            return None
        name, values, test = appends
        if name in space.names or any(proof.mentions(v, name) for v in values) \
                or (test is not None and proof.mentions(test, name)):
            return None
        stacked = self.stacked_after(name)
        if stacked is None:
            return None
        after, call, init = stacked
        translator = self.translator(space)
        vec = self.translate_choice(translator, test, values)
        if not vec.batched or not vec.is_tensor or not vec.exact_cast:
            return None
        if kind == "list" and sum(proof.count_mentions(v, space.element) for v in values) != 1:
            return None  # stacking the list once per use would be worse than the loop
        code = "TW406" if kind == "list" else "TW401"
        laid = self.new_row_major(vec)
        text = laid.text
        if code == "TW406":
            message = f"loop applies the same tensor ops to each item of `{self.loop.iter.id}`; " \
                      f"on the stacked batch: `{_short(text)}`"
        else:
            message = f"loop builds a list one element at a time, then stacks it; vectorized: `{_short(text)}`"

        def obligations():
            self.needs_iterations(space, kind, "`torch.stack([])` raises where the vectorized code would not")
            self.loop_variable_free()
            self.stack_layout(vec)
            return self.stack_edits(after, call, init, text, laid.prec)

        return self.finish(code, message, f"Vectorize: `{_short(text, 50)}`", obligations)

    def stacked_after(self, name: str):
        """The statement right after the loop that stacks the list ``name``: (statement, the call, ``name = []``)."""
        init = proof.binding_before(self.ctx, self.loop, name)
        if init is None or not (isinstance(init.value, ast.List) and not init.value.elts):
            return None
        after = proof.next_statement(self.ctx, self.loop)
        if after is None or proof.count_mentions(after, name) != 1:
            return None
        call = next((n for n in ast.walk(after) if isinstance(n, ast.Call) and len(n.args) == 1
                     and isinstance(n.args[0], ast.Name) and n.args[0].id == name), None)
        if call is None or self.scope.qualname(call.func) != "torch.stack":
            return None
        if any(not (k.arg == "dim" and isinstance(k.value, ast.Constant) and k.value.value == 0)
               for k in call.keywords):
            return None
        # Every other use of the list would see a list, not a tensor.
        uses = sum(1 for n in proof.own_nodes(self.scope_node) if isinstance(n, ast.Name) and n.id == name)
        expected = 1 + proof.count_mentions(self.loop, name) + 1
        if uses != expected or proof.captured(self.scope_node, name) or proof.declared_shared(self.scope, name):
            return None
        if not rewrite.stands_alone(self.source, init):
            return None
        return after, call, init

    def stack_edits(self, after: ast.stmt, call: ast.Call, init: ast.stmt, text: str, prec: int):
        direct = getattr(after, "value", None) is call
        replacement = text if direct else wrap(text, prec, ATOM)

        def build():
            new = rewrite.substitute(self.source, after, call, replacement)
            return [rewrite.delete_statement(self.source, init),
                    rewrite.replace_statements(self.source, self.loop, after, [new])]
        return build

    # -- if cond(x): res.append(x); torch.stack(res) -----------------------------------------------
    def filtered(self, space: Space, kind: str) -> Optional[Match]:
        stmt = self.loop.body[0]
        if not (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1):
            return None
        appends = _appends(stmt.body[0])
        if appends is None or appends[2] is not None or kind == "list":
            return None
        name, (value,), _ = appends
        if name in space.names or proof.mentions(value, name) or proof.mentions(stmt.test, name):
            return None
        stacked = self.stacked_after(name)
        if stacked is None:
            return None
        after, call, init = stacked
        cond = self.translator(space)(stmt.test)
        if not (cond.batched and cond.dtype is DType.bool and cond.rank == 0):
            return None
        mask = cond.text
        translator = self.translator(space, select=lambda text, prec: (f"{wrap(text, prec, ATOM)}[{mask}]", ATOM))
        vec = translator(value)
        if not vec.batched or not vec.is_tensor:
            return None
        laid = self.new_row_major(vec)
        message = f"filter loop over tensor elements; a boolean mask selects them in one op: `{_short(laid.text)}`"

        def obligations():
            self.loop_variable_free()
            self.stack_layout(vec)
            return self.stack_edits(after, call, init, laid.text, laid.prec)

        return self.finish("TW403", message, f"Vectorize: `{_short(laid.text, 50)}`", obligations)

    # -- s += f(x[i]); if cond: count += 1 -----------------------------------------------------------
    def reduction(self, space: Space, kind: str) -> Optional[Match]:
        if kind == "list":
            return None
        stmt = self.loop.body[0]
        if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1:
            return self.count(space, stmt)
        found = _accumulation(stmt)
        if found is None:
            return None
        name, value, augmented = found
        if name in space.names or proof.mentions(value, name):
            return None
        init = proof.binding_before(self.ctx, self.loop, name)
        start = self.ctx.value(init.value) if init is not None else None
        translator = self.translator(space)
        vec = translator(value)
        if not (vec.batched and vec.is_tensor and vec.exact_cast):
            return None
        total = self._sum_text(translator, value, vec)
        message = f"reduction loop adds one element at a time; vectorized: `{name} += {_short(total)}`"

        def obligations():
            if vec.dtype not in _SUM_DTYPES:
                raise Doubt(f"adding {vec.dtype.short} values one at a time rounds differently from one sum")
            self.loop_variable_free()
            if isinstance(start, ScalarValue) and start.kind in ("int", "float"):
                self.needs_iterations(space, kind, f"`{name}` would stay a Python number")
                zero = isinstance(init.value, ast.Constant) and init.value.value == 0 \
                    and not isinstance(init.value.value, bool)
                if zero and self.deletable(init) is not None:
                    return self._replace_loop([f"{name} = {total}"], delete=init)
            elif isinstance(start, TensorValue) and self._fresh_factory(init.value) and start.dtype == vec.dtype \
                    and start.shape is not None \
                    and len(start.shape) == vec.rank \
                    and all(dims.dim_eq(a, b) is True for a, b in zip(start.shape, vec.shape)):
                pass  # added in place (or not) exactly as the loop does
            else:
                raise Doubt(f"the starting value of `{name}` is unknown")
            line = f"{name} += {total}" if augmented else f"{name} = {name} + {total}"
            return self._replace_loop([line])

        return self.finish("TW405", message, f"Vectorize: `{name} += {_short(total, 50)}`", obligations)

    def _sum_text(self, translator: Translator, value: ast.expr, vec: Vec) -> str:
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
            left, right = translator(value.left), translator(value.right)
            if left.base and right.base and left.rank == 0 and right.rank == 0 and left.dtype == right.dtype \
                    and is_floating(left.dtype):
                return f"{left.base} @ {right.base}"
        return f"{vec.atom()}.sum()" if vec.rank == 0 else f"{vec.atom()}.sum(0)"

    def count(self, space: Space, stmt: ast.If) -> Optional[Match]:
        found = _accumulation(stmt.body[0])
        if found is None:
            return None
        name, step, augmented = found
        if not (isinstance(step, ast.Constant) and type(step.value) is int) or proof.mentions(stmt.test, name) \
                or name in space.names:
            return None
        init = proof.binding_before(self.ctx, self.loop, name)
        start = self.ctx.value(init.value) if init is not None else None
        if not (isinstance(start, ScalarValue) and start.kind in ("int", "float")):
            return None
        cond = self.translator(space)(stmt.test)
        if not (cond.batched and cond.dtype is DType.bool and cond.rank == 0):
            return None
        if self.scope.owner_of("int") is not None:
            return None
        counted = f"int({wrap(cond.text, cond.prec, ATOM)}.sum())"
        if step.value != 1:
            counted = f"{step.value} * {counted}"
        message = f"counting loop tests one element at a time; vectorized: `{name} += {_short(counted)}`"

        def obligations():
            self.loop_variable_free()
            zero = isinstance(init.value, ast.Constant) and type(init.value.value) is int and init.value.value == 0
            if zero and self.deletable(init) is not None:
                return self._replace_loop([f"{name} = {counted}"], delete=init)
            return self._replace_loop([f"{name} += {counted}" if augmented else f"{name} = {name} + {counted}"])

        return self.finish("TW405", message, f"Vectorize: `{name} += {_short(counted, 50)}`", obligations)

    # -- if v > m: m = v; m = max(m, v); m = torch.maximum(m, v) ---------------------------------------
    def running_extreme(self, space: Space, kind: str, from_second: bool = False) -> Optional[Match]:
        ex = _extreme(self.loop.body[0], self.scope)
        if kind == "list" or ex is None or ex.name in space.names or proof.mentions(ex.element, ex.name):
            return None
        if ex.tracked is not None and (ex.tracked[1] != space.index or ex.tracked[0] in space.names | {ex.name}):
            return None
        translator = self.translator(space)
        vec = translator(ex.element)
        if not (vec.batched and vec.is_tensor and vec.rank == 0 and vec.exact_cast):
            return None
        if (ex.form != "torch" and vec.base is None and not vec.fresh) or (ex.tracked and vec.base is None):
            return None  # `v.long()` of int64 is `v` itself: the loop keeps a view no `.max()` gives
        init = proof.binding_before(self.ctx, self.loop, ex.name)
        whole = vec.base if init is not None and self.first_of(init, vec.base) else None
        if from_second and whole is None:
            return None  # starting at x[1] only means the same when x[0] is the starting value
        start = self.ctx.value(init.value) if init is not None else None
        zero_dim = isinstance(start, TensorValue) and start.shape == () and start.dtype is not None
        if ex.form == "torch" and not zero_dim:
            return None  # a Python number: `torch.maximum` raises
        lines, kept = self._extreme_lines(ex, vec, init, whole)
        message = f"running {ex.which} loop compares one element at a time; vectorized: `{'; '.join(lines)}`"

        def obligations():
            self.loop_variable_free()
            if ex.form != "torch":
                self._comparisons_exact(ex, vec)
            elif translator.grad or (zero_dim and start.requires_grad is not False):
                # A chain of `torch.maximum` splits the gradient of ties pairwise, `x.max()` evenly.
                raise Doubt("the tensors may require grad, and the gradient of ties would be shared differently")
            if ex.tracked is not None:
                return self._tracked_edits(ex, init, whole, lines)
            if whole is None:
                if not (zero_dim or isinstance(start, ScalarValue) and start.kind in ("int", "float", "bool")):
                    raise Doubt(f"the starting value of `{ex.name}` is unknown")
                self.needs_iterations(space, kind, f"`{ex.name}` keeps its starting value, and "
                                                   f"`{ex.which}()` of nothing raises")
            elif ex.form == "torch" and from_second and dims.dim_lt(1, space.count) is not True:
                raise Doubt(f"with one element the loop keeps `{ex.name}` a view of it")
            if lines != kept or whole:
                if self.deletable(init) is not None:
                    return self._replace_loop(lines, delete=init)
            return self._replace_loop(kept)

        return self.finish("TW405", message, f"Vectorize: `{_short(lines[-1], 50)}`", obligations)

    def _extreme_lines(self, ex: "_Extreme", vec: Vec, init, whole: Optional[str]) -> tuple:
        """The rewrite, and the rewrite to use where the starting value's statement has to stay."""
        arg, total = "arg" + ex.which, f"{vec.atom()}.{ex.which}()"
        if ex.tracked is not None:
            best = ex.tracked[0]
            lines = [f"{best} = int({vec.base}.{arg}())", f"{ex.name} = {vec.base}[{best}]"]
            return lines, lines
        if ex.form == "torch":
            if whole:
                line = f"{ex.name} = {total}"
            elif ex.func is None:
                line = f"{ex.name} = {ex.name}.{ex.which}({total})"
            else:
                line = f"{ex.name} = {self.source.text_of(self.source.span(ex.func))}({ex.name}, {total})"
            return [line], [line]
        # The loop keeps the element itself (a view of `x`): so does indexing at the first arg-extreme.
        chosen = f"{vec.base}[{vec.base}.{arg}()]" if vec.base else total
        kept = [f"{ex.name} = {chosen if whole else f'{ex.which}({ex.name}, {chosen})'}"]
        if whole or not _number_literal(init.value):
            return kept, kept
        return [f"{ex.name} = {ex.which}({self.source.text_of(self.source.span(init.value))}, {chosen})"], kept

    def _comparisons_exact(self, ex: "_Extreme", vec: Vec) -> None:
        """A Python comparison loop equals `argmax`-indexing only for integers and the first of ties."""
        arg = "arg" + ex.which
        if is_floating(vec.dtype):
            raise Doubt(f"the loop skips NaN, and `{ex.which}()`/`{arg}()` would not")
        if vec.dtype is DType.bool or not is_integral(vec.dtype, True):
            raise Doubt(f"`{arg}()` does not take {vec.dtype.short} tensors")
        if not ex.keeps_first:
            raise Doubt(f"on ties the loop keeps the last element, `{arg}()` the first")
        if self.scope.owner_of(ex.which) is not None or self.scope.owner_of("int") is not None:
            raise Doubt(f"`{ex.which}` or `int` is not the builtin here")

    def _tracked_edits(self, ex: "_Extreme", init, whole: Optional[str], lines: list):
        """``best = x[0]; k = 0`` then ``if x[i] > best: best = x[i]; k = i``: the first arg-extreme."""
        best = ex.tracked[0]
        index_init = proof.binding_before(self.ctx, self.loop, best)
        if whole is None or index_init is None or not (isinstance(index_init.value, ast.Constant)
                                                       and type(index_init.value.value) is int
                                                       and index_init.value.value == 0):
            raise Doubt(f"`{ex.name}` and `{best}` do not start at the first element")
        return self._replace_loop(lines, delete=[self.deletable(init), self.deletable(index_init)])

    def first_of(self, init: ast.Assign, whole: Optional[str]) -> bool:
        """``init`` is ``m = x[0]`` with ``whole`` the text of ``x``, and ``x`` still names the same tensor
        at the loop (a view of its first element follows every in-place change anyway)."""
        node = init.value
        if not (whole is not None and isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and type(node.slice.value) is int and node.slice.value == 0
                and isinstance(node.value, (ast.Name, ast.Attribute))
                and self.source.text_of(self.source.span(node.value)) == whole):
            return False
        root = next(n.id for n in ast.walk(node.value) if isinstance(n, ast.Name))
        between = proof.statements_between(self.ctx, init, self.loop)
        if between is None or any(proof.mentions(s, root) for s in between):
            return False
        # Other code (a function called in between) could rebind a shared name or an attribute.
        shared = isinstance(node.value, ast.Attribute) or proof.captured(self.scope_node, root) \
            or proof.declared_shared(self.scope, root)
        return not (shared and any(isinstance(n, ast.Call) for s in between for n in ast.walk(s)))

    def extreme_from_second(self) -> Optional[Match]:
        """``m = x[0]; for i in range(1, N): if x[i] > m: m = x[i]`` is the same walk from 0."""
        loop = self.loop
        if not (isinstance(loop.target, ast.Name) and _is_builtin_call(loop.iter, "range", self.scope)
                and len(loop.body) == 1):
            return None
        count = self.range_count(loop.iter, self.scope, start=1)
        return self.running_extreme(Space(count, index=loop.target.id), "range", from_second=True)

    # -- found = False; for v in t: if cond(v): found = True (; break) --------------------------------
    def flag(self, space: Space, kind: str) -> Optional[Match]:
        stmt = self.loop.body[0]
        if kind == "list" or not (isinstance(stmt, ast.If) and not stmt.orelse and 1 <= len(stmt.body) <= 2):
            return None
        assign, *rest = stmt.body
        if rest and not isinstance(rest[0], ast.Break):
            return None
        if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)
                and isinstance(assign.value, ast.Constant) and isinstance(assign.value.value, bool)):
            return None
        name, value = assign.targets[0].id, assign.value.value
        init = proof.binding_before(self.ctx, self.loop, name)
        if name in space.names or proof.mentions(stmt.test, name) or init is None \
                or not (isinstance(init.value, ast.Constant) and init.value.value is (not value)):
            return None
        if rest:
            no_raising_ops(stmt.test)  # the loop stops testing at the first hit; vectorized tests them all
        negated = not value and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not)
        cond = self.translator(space)(stmt.test.operand if negated else stmt.test)
        if not (cond.batched and cond.dtype is DType.bool and cond.rank == 0) or self.scope.owner_of("bool"):
            return None
        if value:
            text = f"bool({cond.atom()}.any())"
        else:
            text = f"bool({cond.atom()}.all())" if negated else f"not {cond.atom()}.any()"
        message = f"loop tests one element at a time{' until the first hit' if rest else ''}; vectorized: " \
                  f"`{name} = {_short(text)}`"

        def obligations():
            self.loop_variable_free()
            return self._replace_loop([f"{name} = {text}"], delete=[self.deletable(init)])

        return self.finish("TW405", message, f"Vectorize: `{name} = {_short(text, 50)}`", obligations)

    def _replace_loop(self, lines: list[str], delete=None):
        """The loop replaced by ``lines``; ``delete``: a statement, or a list of them (``None`` entries kept)."""
        deleted = [d for d in (delete if isinstance(delete, list) else [delete]) if d is not None]

        def build():
            edits = [rewrite.delete_statement(self.source, d) for d in deleted]
            return edits + [rewrite.replace_statements(self.source, self.loop, self.loop, lines)]
        return build

    # -- acc = torch.cat([acc, x]) -------------------------------------------------------------------
    def cat_accumulation(self) -> Optional[Match]:
        found = None
        for stmt in _body_statements(self.loop.body):
            call = _cat_of_itself(stmt, self.scope)
            if call is not None:
                if found is not None:
                    return None
                found = (stmt, call)
        if found is None:
            return None
        stmt, call = found
        name = stmt.targets[0].id
        iterated = self.ctx.value(self.loop.iter)
        if not (isinstance(iterated, (TensorValue, SeqValue)) or _is_builtin_call(self.loop.iter, "range", self.scope)):
            return None  # a DataLoader, a generator: not ours to judge
        if proof.count_mentions(self.loop, name) != 2 or name == getattr(self.loop.target, "id", None):
            return None  # read elsewhere in the loop: it needs the running value
        pieces = call.args[0].elts[1:]
        message = f"`{name} = torch.cat([{name}, ...])` in a loop copies everything gathered so far on every " \
                  f"iteration (quadratic); collect the pieces in a list and concatenate once"
        extra = "".join(f", {self.source.text_of(self.source.span(a))}" for a in call.args[1:])
        extra += "".join(f", {self.source.text_of(self.source.span(k))}" for k in call.keywords)
        func = self.source.text_of(self.source.span(call.func))

        def obligations():
            init = proof.binding_before(self.ctx, self.loop, name)
            if init is None or not self._fresh_factory(init.value):
                raise Doubt(f"`{name}` does not start as a fresh tensor right before the loop")
            self.not_shared(name, init)
            if proof.captured(self.scope_node, name) or proof.declared_shared(self.scope, name):
                raise Doubt(f"`{name}` is shared with other code")
            if proof.inside_try(self.ctx, self.loop, self.scope_node):
                raise Doubt("an exception handler could see the half-built result")
            simple = len(self.loop.body) == 1 and len(pieces) == 1 and isinstance(pieces[0], ast.Name) \
                and isinstance(self.loop.target, ast.Name) and pieces[0].id == self.loop.target.id \
                and isinstance(self.loop.iter, (ast.Name, ast.Attribute)) \
                and not proof.read_outside(self.scope_node, self.loop, self.loop.target.id)
            if simple:
                iterable = self.source.text_of(self.source.span(self.loop.iter))
                return self._replace_loop([f"{name} = {func}([{name}, *{iterable}]{extra})"])
            if not _mutation_free(self.loop.body, self.scope, self.ctx, skip=stmt):
                raise Doubt("the loop may change a piece in place after it is collected")
            texts = [self.source.text_of(self.source.span(p)) for p in pieces]
            indent = rewrite.indent_of(self.source, self.loop)

            def build():
                parts = proof.fresh_name(self.ctx.tree, f"{name}_parts")
                collect = f"{parts}.append({texts[0]})" if len(texts) == 1 \
                    else f"{parts}.extend(({', '.join(texts)}))"
                return [rewrite.insert_before(self.source, self.loop, f"{parts} = [{name}]"),
                        rewrite.replace_statements(self.source, stmt, stmt, [collect]),
                        rewrite.insert_after(self.source, self.loop, indent, f"{name} = {func}({parts}{extra})")]
            return build

        return self.finish("TW402", message, "Collect in a list and `torch.cat` once", obligations)


class _CallMatcher(_Base):
    def __init__(self, call: ast.Call, scope, ctx):
        super().__init__(scope, ctx)
        self.call = call

    def run(self) -> Optional[Match]:
        try:
            if isinstance(self.call.func, ast.Name):
                return self.builtin()
            return self.comprehension()
        except Refuse:
            return None

    # -- torch.tensor([f(x) for x in t]), torch.stack([...]) -----------------------------------------
    def comprehension(self) -> Optional[Match]:
        call = self.call
        qualname = self.scope.qualname(call.func)
        if qualname not in ("torch.tensor", "torch.stack") or len(call.args) != 1 \
                or not isinstance(call.args[0], ast.ListComp) or call.keywords:
            return None
        comp = call.args[0]
        if len(comp.generators) != 1 or comp.generators[0].is_async or len(comp.generators[0].ifs) > 1:
            return None
        generator = comp.generators[0]
        inner = self.ctx.index.scope_of_node.get(comp, self.scope)
        space, kind = self.space_for(generator.target, generator.iter, self.scope)
        if kind == "list" and qualname == "torch.tensor":
            return None
        select = None
        if generator.ifs:
            cond = self.translator(space, inner)(generator.ifs[0])
            if not (cond.batched and cond.dtype is DType.bool and cond.rank == 0):
                return None
            mask = cond.text
            select = lambda text, prec: (f"{wrap(text, prec, ATOM)}[{mask}]", ATOM)  # noqa: E731
        translator = self.translator(space, inner, select)
        vec = translator(comp.elt)
        if not (vec.batched and vec.is_tensor and vec.exact_cast):
            return None
        if kind == "list" and proof.count_mentions(comp.elt, space.element) != 1:
            return None
        laid = self.new_row_major(vec) if qualname == "torch.stack" else vec
        text = laid.text if laid.fresh else f"{laid.atom()}.clone()"
        function = qualname.split(".")[1]
        message = f"`torch.{function}` of a list built element by element; vectorized: `{_short(text)}`"
        try:
            if function == "tensor":
                if vec.rank != 0:
                    return None  # torch.tensor of non-scalars raises: TW106's business
                if vec.device != "cpu":
                    raise Doubt("`torch.tensor` makes a CPU tensor")
                if translator.grad:
                    raise Doubt("`torch.tensor` cuts the autograd graph the vectorized code would keep")
                if vec.dtype != self.default_float and (select is not None
                                                        or not proof.certainly_positive(space.count)):
                    raise Doubt("an empty list gives the default dtype, not the elements'")
            else:
                self.stack_layout(vec)
                if select is None and kind != "list" and not proof.certainly_positive(space.count):
                    raise Doubt("the list may be empty, and `torch.stack([])` raises")
        except Doubt as doubt:
            return Match("TW404", f"{message} (no automatic rewrite: {doubt})", why_no_fix=str(doubt))
        replacement = text if self._standalone_value() else wrap(text, laid.prec if laid.fresh else ATOM, ATOM)
        return Match("TW404", message, f"Vectorize: `{_short(text, 50)}`",
                     lambda: [rewrite.replace_node(self.source, call, replacement)])

    def _standalone_value(self) -> bool:
        place_stmt = _statement_of(self.ctx, self.call)
        return place_stmt is not None and getattr(place_stmt, "value", None) is self.call \
            and isinstance(place_stmt, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr))

    # -- sum(t), max(t), any(t) ---------------------------------------------------------------------
    def builtin(self) -> Optional[Match]:
        call = self.call
        name = call.func.id
        if name not in ("sum", "max", "min", "any", "all") or self.scope.owner_of(name) is not None:
            return None
        if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], (ast.Name, ast.Attribute)):
            return None
        value = self.ctx.value(call.args[0])
        if not isinstance(value, TensorValue) or value.dtype is None or not value.shape or value.device is None:
            return None
        t = self.source.text_of(self.source.span(call.args[0]))
        rank, dtype, count = len(value.shape), value.dtype, value.shape[0]
        try:
            if name == "sum":
                text = f"{t}.sum()" if rank == 1 else f"{t}.sum(0)"
                if is_integral(dtype) and dtype is not DType.int64:
                    # 0 + int32 stays int32 (and wraps), as a sum with dtype=int32 does.
                    text = f"{t}.sum({'' if rank == 1 else '0, '}dtype={self.torch()}.{dtype.short})"
                message = f"`sum({t})` adds the slices of `{t}` one at a time in Python; use `{text}`"
                if dtype in (DType.float16, DType.bfloat16) or not (is_floating(dtype) or is_integral(dtype, True)):
                    raise Doubt(f"adding {dtype.short} values one at a time rounds differently from one sum")
                if not proof.certainly_positive(count):
                    raise Doubt(f"`{t}` may be empty, and `sum` would then give the Python int 0")
                if not row_ordered(value.shape[1:], value.strides[1:] if value.strides is not None else None):
                    # `0 + t[0] + ...` takes the slices' layout, `t.sum(0)` is laid out on its own.
                    raise Doubt(f"the slices of `{t}` may not be row-major, and the sum's layout would differ")
            elif name in ("max", "min"):
                if rank != 1:
                    return None
                text = f"{t}.{name}()"
                message = f"`{name}({t})` compares the elements of `{t}` one at a time in Python; use `{text}`"
                if is_floating(dtype) or not is_integral(dtype, True):
                    raise Doubt(f"`{name}()` skips NaN where `{text}` returns it")
                if not proof.certainly_positive(count):
                    raise Doubt(f"`{t}` may be empty")
            else:
                if rank != 1:
                    return None
                text = f"{t}.{name}()"
                if not self._truth_tested():
                    if self.scope.owner_of("bool") is not None:
                        return None
                    text = f"bool({text})"
                message = f"`{name}({t})` tests the elements of `{t}` one at a time in Python; use `{text}`"
        except Doubt as doubt:
            return Match("TW407", f"{message} (no automatic rewrite: {doubt})", why_no_fix=str(doubt))
        return Match("TW407", message, f"Replace with `{text}`",
                     lambda: [rewrite.replace_node(self.source, call, text)])

    def _truth_tested(self) -> bool:
        """Only the truth of the result is used (``if any(t):``), so a 0-d bool tensor does as well."""
        stmt = _statement_of(self.ctx, self.call)
        if isinstance(stmt, (ast.If, ast.While)) and stmt.test is self.call:
            return True
        if isinstance(stmt, ast.Assert) and stmt.test is self.call:
            return True
        return False


# -- syntactic helpers -------------------------------------------------------------------------------
def _scope_node(scope):
    node = scope.node
    while isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.ClassDef)) \
            and scope.parent is not None:
        scope = scope.parent
        node = scope.node
    return node


def _is_builtin_call(node: ast.expr, name: str, scope) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name \
        and scope.owner_of(name) is None


def _has_io(loop: ast.For) -> bool:
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _IO_CALLS:
            return True
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)):
            return True
    return False


def _subscript_stores(stmt: ast.stmt, index: str):
    """``out[i] = v`` -> (out, [v], None); ``if c: out[i] = a else: out[i] = b`` -> (out, [a, b], c)."""
    def store(s):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript):
            target = s.targets[0]
            if isinstance(target.value, ast.Name) and isinstance(target.slice, ast.Name) \
                    and target.slice.id == index:
                return target.value.id, s.value
        return None
    return _one_or_both_branches(stmt, store)


def _one_or_both_branches(stmt: ast.stmt, match):
    """``match(stmt)`` -> (name, [value], None), or for an ``if``/``else`` whose two branches each are one
    statement matching for the same name: (name, [value if true, value if false], the test)."""
    found = match(stmt)
    if found is not None:
        return found[0], [found[1]], None
    if isinstance(stmt, ast.If) and len(stmt.body) == 1 and len(stmt.orelse) == 1:
        a, b = match(stmt.body[0]), match(stmt.orelse[0])
        if a is not None and b is not None and a[0] == b[0]:
            return a[0], [a[1], b[1]], stmt.test
    return None


def _number_literal(node: ast.expr) -> bool:
    """``3``, ``-2.5``, ``True``: a starting value that can move into the rewrite."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float))


def _target_names(target: ast.expr) -> list:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _grid_stores(stmt: ast.stmt):
    """``out[i, j] = v`` / ``out[i][j] = v`` -> (out, (i, j), [v], None); with ``if``/``else`` -> (.., [a, b], c)."""
    def store(s):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript):
            base, indices = grid_indices(s.targets[0])
            if isinstance(base, ast.Name) and len(indices) == 2 and indices[0] != indices[1]:
                return base, indices, s.value
        return None

    found = store(stmt)
    if found is not None:
        return found[0], found[1], [found[2]], None
    if isinstance(stmt, ast.If) and len(stmt.body) == 1 and len(stmt.orelse) == 1:
        a, b = store(stmt.body[0]), store(stmt.orelse[0])
        if a is not None and b is not None and (a[0].id, a[1]) == (b[0].id, b[1]):
            return a[0], a[1], [a[2], b[2]], stmt.test
    return None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _plain_assign(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)


@dataclass
class _Extreme:
    """A running max or min in a loop body."""

    name: str  # m
    element: ast.expr  # e
    which: str  # "max" | "min"
    form: str  # "compare" (`if e > m: m = e`) | "builtin" (`m = max(m, e)`) | "torch" (`torch.maximum(m, e)`,
    # `torch.max(m, e)`, `m.max(e)`)
    keeps_first: bool  # of equal elements, the loop keeps the first
    tracked: Optional[tuple] = None  # (k, i): `k = i` also records where the best one is
    func: Optional[ast.expr] = None  # the torch function called; None: the method `m.max(e)`


def _extreme(stmt: ast.stmt, scope) -> Optional[_Extreme]:
    if isinstance(stmt, ast.If):
        return _compared_extreme(stmt)
    if not (_plain_assign(stmt) and isinstance(stmt.value, ast.Call) and not stmt.value.keywords
            and not any(isinstance(a, ast.Starred) for a in stmt.value.args)):
        return None
    name, call = stmt.targets[0].id, stmt.value
    if isinstance(call.func, ast.Attribute) and call.func.attr in ("max", "min") and len(call.args) == 1 \
            and scope.qualname(call.func) is None:
        return _method_extreme(name, call.func.value, call.args[0], call.func.attr)
    if len(call.args) != 2:
        return None
    first, second = call.args
    if _is_name(first, name) == _is_name(second, name):
        return None
    element = second if _is_name(first, name) else first
    if isinstance(call.func, ast.Name) and call.func.id in ("max", "min") and scope.owner_of(call.func.id) is None:
        # max(m, e) replaces m only when e > m; max(e, m) also on ties.
        return _Extreme(name, element, call.func.id, "builtin", _is_name(first, name))
    which = _TORCH_EXTREMES.get(scope.qualname(call.func))
    return _Extreme(name, element, which, "torch", True, func=call.func) if which else None


def _method_extreme(name: str, receiver: ast.expr, arg: ast.expr, which: str) -> Optional[_Extreme]:
    """``m = m.max(e)`` / ``m = e.max(m)``: ``torch.maximum`` written as a method."""
    if _is_name(receiver, name) == _is_name(arg, name):
        return None
    return _Extreme(name, arg if _is_name(receiver, name) else receiver, which, "torch", True)


def _compared_extreme(stmt: ast.If) -> Optional[_Extreme]:
    if stmt.orelse or not 1 <= len(stmt.body) <= 2 or not all(_plain_assign(s) for s in stmt.body):
        return None
    test = stmt.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _EXTREME_OPS):
        return None
    left, right, op = test.left, test.comparators[0], type(test.ops[0])
    for assign in stmt.body:
        name = assign.targets[0].id
        if _is_name(right, name) and ast.dump(left) == ast.dump(assign.value):
            element = left
        elif _is_name(left, name) and ast.dump(right) == ast.dump(assign.value):
            element, op = right, _FLIPPED[op]
        else:
            continue
        which, strict = _EXTREME_OPS[op]
        tracked = None
        if len(stmt.body) == 2:
            other = stmt.body[1] if assign is stmt.body[0] else stmt.body[0]
            if not isinstance(other.value, ast.Name):
                return None
            tracked = (other.targets[0].id, other.value.id)
        return _Extreme(name, element, which, "compare", strict, tracked)
    return None


def _appends(stmt: ast.stmt):
    """``res.append(v)`` -> (res, [v], None); ``if c: res.append(a) else: res.append(b)`` -> (res, [a, b], c)."""
    def append(s):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and s.value.func.attr == "append" and isinstance(s.value.func.value, ast.Name) \
                and len(s.value.args) == 1 and not s.value.keywords \
                and not isinstance(s.value.args[0], ast.Starred):
            return s.value.func.value.id, s.value.args[0]
        return None
    return _one_or_both_branches(stmt, append)


def _accumulation(stmt: ast.stmt):
    """``s += v`` -> (s, v, True); ``s = s + v`` / ``s = v + s`` -> (s, v, False)."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value, True
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add):
        name = stmt.targets[0].id
        left, right = stmt.value.left, stmt.value.right
        if isinstance(left, ast.Name) and left.id == name:
            return name, right, False
        if isinstance(right, ast.Name) and right.id == name:
            return name, left, False
    return None


def _body_statements(body: list):
    """The loop body's statements, into ``if``/``with`` blocks but not into nested loops or functions."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.With)):
            yield from _body_statements(stmt.body)
            yield from _body_statements(getattr(stmt, "orelse", []))


def _cat_of_itself(stmt: ast.stmt, scope) -> Optional[ast.Call]:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    call = stmt.value
    if not (isinstance(call, ast.Call) and scope.qualname(call.func) == "torch.cat" and call.args
            and isinstance(call.args[0], (ast.List, ast.Tuple)) and len(call.args[0].elts) >= 2):
        return None
    first = call.args[0].elts[0]
    if not (isinstance(first, ast.Name) and first.id == stmt.targets[0].id):
        return None
    if any(isinstance(e, ast.Starred) for e in call.args[0].elts) or len(call.args) > 2:
        return None
    if any(k.arg != "dim" for k in call.keywords):
        return None
    return call


def _mutation_free(body: list, scope, ctx, skip: ast.stmt) -> bool:
    """No statement of the loop can change a tensor in place (so a collected piece stays as it was)."""
    translator = Translator(ctx, scope, Space(0), ctx.facts.default_float)
    for stmt in body:
        for node in ast.walk(stmt):
            if node is skip:
                continue
            if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                return False
            if isinstance(node, ast.AugAssign):
                value = ctx.value(node.target) if isinstance(node.target, ast.Name) else None
                if not isinstance(value, ScalarValue):
                    return False
            if isinstance(node, (ast.While, ast.Try, ast.With, ast.FunctionDef, ast.Lambda, ast.ClassDef)):
                return False
        try:
            for node in ast.walk(stmt):
                if isinstance(node, ast.expr) and node is not skip:
                    translator.check_pure(node)
        except Refuse:
            return False
    return True


def _list_never_changed(scope_node: ast.AST, name: str, binding: ast.AST) -> bool:
    """Every use of the list ``name`` only reads it: iterated, ``len``-ed, stacked or concatenated."""
    parents = {}
    for node in proof.own_nodes(scope_node):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    if proof.captured(scope_node, name):
        return False
    for node in proof.own_nodes(scope_node):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if isinstance(node.ctx, ast.Store):
            if parents.get(node) is not binding:
                return False
            continue
        parent = parents.get(node)
        if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
            continue
        if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, (ast.Name, ast.Attribute)):
            func = parent.func
            callee = func.id if isinstance(func, ast.Name) else func.attr
            if callee in ("len", "stack", "cat"):
                continue
        return False
    return True


def _statement_of(ctx, node: ast.AST) -> Optional[ast.stmt]:
    """The innermost statement containing ``node``."""
    best = None
    for stmt in ctx.__dict__.setdefault("_vectorize_statements", None) or _all_statements(ctx):
        if stmt.lineno <= node.lineno and node.end_lineno <= stmt.end_lineno:
            for sub in ast.walk(stmt):
                if sub is node:
                    if best is None or (stmt.lineno >= best.lineno and stmt.end_lineno <= best.end_lineno):
                        best = stmt
                    break
    return best


def _all_statements(ctx) -> list:
    statements = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.stmt)]
    ctx.__dict__["_vectorize_statements"] = statements
    return statements
