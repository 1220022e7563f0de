"""The entry points of the loop vectorizer, and the loop shapes that have proofs of their own.

:func:`match_loop` for ``for`` statements, :func:`match_call` for calls (comprehensions and ``map``
consumed by ``torch.tensor`` / ``torch.stack`` / ``torch.cat`` / ``sum`` / ``all`` / ``any``, and the
builtins that iterate a tensor: ``sum(t)``) and list comprehensions of Python numbers.

Most loops go through the general translator (``general``: the body statement by statement over the
one op table). Three shapes keep a proof of their own here, because what they compute is not a batched
value but a choice among the elements: ``torch.cat`` accumulation (TW402), running max / min with
or without the index of the best (TW405), and any / all flags that may stop early (TW405).

A match has a message and, when every proof obligation holds, a fix. Three outcomes:

- the pattern is not there, or the loop is not a per-element computation (a recurrence, effects,
  an early exit): ``None``, silent;
- the loop is clearly per-element but one obligation cannot be shown (the loop may run zero times and
  the result's type would then differ, the loop variable is read afterwards, an op has no batched
  form, ...): a match without a fix, whose message says the one reason;
- everything proven: a match with the fix.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Optional

from torchwise.analysis import dims
from torchwise.analysis.dtypes import DType, is_floating, is_integral
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue
from torchwise.vectorize import proof, rewrite
from torchwise.vectorize.batch import Batcher
from torchwise.vectorize.expr import ATOM, Refuse, no_raising_ops, row_ordered, torch_name, wrap
from torchwise.vectorize.oracle import Oracle
from torchwise.vectorize.search import first_hit
from torchwise.vectorize.space import Level, Unwalkable, Walker

_ALLOCATORS = frozenset({"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.empty_like",
                         "torch.zeros_like", "torch.ones_like", "torch.full_like"})
_FRESH_FACTORIES = _ALLOCATORS | {"torch.tensor", "torch.randn", "torch.rand", "torch.arange"}
_IO_CALLS = frozenset({"print", "open", "input", "breakpoint", "exec", "eval"})
# `e > m` keeps a new maximum; strict comparisons keep the first of equal ones.
_EXTREME_OPS = {ast.Gt: ("max", True), ast.GtE: ("max", False), ast.Lt: ("min", True), ast.LtE: ("min", False)}
_FLIPPED = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE}
# With a tensor as the second argument `torch.max(m, v)` / `m.max(v)` is `torch.maximum(m, v)`: the same kernel
# (NaN propagated, ties' gradient split in two); with a number it would be a `dim` (a Python number `v` is refused).
_TORCH_EXTREMES = {"torch.maximum": "max", "torch.minimum": "min", "torch.max": "max", "torch.min": "min"}


_FLAGGED = {
    "TW401": "loop computes tensor elements one at a time",
    "TW403": "filter loop over tensor elements",
    "TW405": "reduction loop handles one element at a time",
    "TW406": "loop applies the same tensor ops to each item of a list",
}


_FLAGGED_CALLS = {
    "TW404": "a list built element by element from a tensor",
    "TW407": "a Python builtin iterates a tensor one element at a time",
}


@dataclass
class Match:
    code: str
    message: str
    title: Optional[str] = None
    build: Optional[Callable[[], list]] = None
    why_no_fix: Optional[str] = None


_DETERMINISTIC_EMPTY = frozenset({"torch.tensor", "torch.empty", "torch.zeros", "torch.ones", "torch.full"})


class Doubt(Exception):
    """The pattern is certain, but one proof obligation is not: flag it without a fix."""


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cached(ctx, key, compute):
    cache = ctx.memo.setdefault("vectorize.matches", {})
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
        self.scope_node = proof.scope_node(scope)

    def torch(self) -> str:
        return torch_name(self.scope, Refuse)

    def space_for(self, target: ast.expr, iterable: ast.expr, scope) -> tuple:
        """(the loop's level, its kind: "range" | "tensor" | "list")."""
        walker = Walker(self.ctx, scope, self.torch(), self._pure)
        try:
            level = walker.level(target, iterable)
        except Unwalkable as err:
            raise Refuse(str(err)) from None
        return level, level.kind

    def _pure(self, node: ast.expr) -> None:
        Batcher(self.ctx, self.scope, [], None, "torch").check_pure(node)

    def translator(self, space, scope=None) -> Batcher:
        return Batcher(self.ctx, scope or self.scope, [space], Oracle(self.ctx, getattr(self, "loop", None)),
                       self.torch())


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
            if _few_whole_slices(loop):
                found = self.general()
                return found if found is not None and found.build is not None else None
            special = self.special()
            if special is not None:
                return special
        except Refuse:
            pass
        return self.general()

    def special(self) -> Optional[Match]:
        """Running max / min and any / all flags: one-statement bodies with their own proofs."""
        loop = self.loop
        try:
            space, kind = self.space_for(loop.target, loop.iter, self.scope)
        except Refuse:
            return None
        if len(loop.body) != 1:
            return None
        if kind == "range" and (space.start != 0 or space.step != 1):
            return first_hit(self, space, kind) or self.extreme_from_second()
        for matcher in (self.running_extreme, self.flag, lambda space, kind: first_hit(self, space, kind)):
            found = matcher(space, kind)
            if found is not None:
                return found
        return None

    def general(self) -> Optional[Match]:
        """Any other loop nest: its body translated statement by statement (``general``)."""
        from torchwise.vectorize.general import GeneralMatcher

        matcher = GeneralMatcher(self.loop, self.scope, self.ctx)
        found, reason, code = matcher.run()
        if found is None:
            if reason is None:
                return None
            message = _FLAGGED.get(code, "loop over tensor elements")
            return Match(code, f"{message} (no automatic rewrite: {reason})", why_no_fix=reason)
        source = self.source
        loop = self.loop

        def build():
            edits = [rewrite.delete_statement(source, d) for d in found.deletes]
            lines = list(found.lines)
            if found.after is not None:
                for after, call, text, prec in found.after:
                    direct = getattr(after, "value", None) is call
                    lines.append(rewrite.substitute(source, after, call, text if direct else wrap(text, prec, ATOM)))
                edits.append(rewrite.replace_statements(source, loop, found.after[-1][0], lines, within=True))
            else:
                edits.append(rewrite.replace_statements(source, loop, loop, lines, within=True))
            return edits

        return Match(found.code, found.message, found.title, build)

    # -- shared obligations ----------------------------------------------------------------------
    def loop_variable_free(self, *inner: ast.For) -> None:
        for loop in (self.loop, *inner):
            for name in _target_names(loop.target):
                if proof.read_outside(self.scope_node, self.loop, name):
                    raise Doubt(f"`{name}` is read after the loop")

    def deletable(self, init) -> Optional[ast.stmt]:
        return proof.deletable(self.ctx, self.scope_node, self.scope, self.loop, init)

    def needs_iterations(self, space: Level, kind: str, what: str) -> None:
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

    def _fresh_factory(self, value: ast.expr) -> bool:
        """A new tensor nothing else refers to (a view of the data, added to in place, would change the data)."""
        return isinstance(value, ast.Call) and self.scope.qualname(value.func) in _FRESH_FACTORIES

    # -- if v > m: m = v; m = max(m, v); m = torch.maximum(m, v) ---------------------------------------
    def running_extreme(self, space: Level, kind: str, from_second: bool = False) -> Optional[Match]:
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

    def _extreme_lines(self, ex: "_Extreme", vec, init, whole: Optional[str]) -> tuple:
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

    def _comparisons_exact(self, ex: "_Extreme", vec) -> None:
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
                and len(loop.body) == 1 and len(loop.iter.args) == 2 and not loop.iter.keywords):
            return None
        start, stop = loop.iter.args
        if not (isinstance(start, ast.Constant) and type(start.value) is int and start.value == 1):
            return None
        count = self.ctx.value(stop)
        if not (isinstance(count, ScalarValue) and count.kind == "int" and count.value is not None):
            return None
        self._pure(stop)
        text = self.source.text_of(self.source.span(stop))
        level = Level(count.value, text, index=loop.target.id, arange=f"arange({text})")
        return self.running_extreme(level, "range", from_second=True)

    # -- found = False; for v in t: if cond(v): found = True (; break) --------------------------------
    def flag(self, space: Level, kind: str) -> Optional[Match]:
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
                if self._empty_start_is_moot(init):
                    # the start is dead: deleted when nothing random made it (a draw moves the generator)
                    made_by = self.scope.qualname(init.value.func) if isinstance(init.value, ast.Call) else None
                    dead = self.deletable(init) if made_by in _DETERMINISTIC_EMPTY else None
                    return self._replace_loop([f"{name} = {func}({iterable}{extra})"], delete=dead)
                return self._replace_loop([f"{name} = {func}([{name}, *{iterable}]{extra})"])
            if not _mutation_free(self.loop.body, self.scope, self.ctx, skip=stmt):
                raise Doubt("the loop may change a piece in place after it is collected")
            texts = [self.source.text_of(self.source.span(p)) for p in pieces]
            indent = rewrite.indent_of(self.source, self.loop)
            cast = self._moot_start_cast(init, pieces)
            made_by = self.scope.qualname(init.value.func) if isinstance(init.value, ast.Call) else None
            dead = self.deletable(init) if cast is not None and made_by in _DETERMINISTIC_EMPTY else None

            def build():
                parts = proof.fresh_name(self.ctx.tree, f"{name}_parts")
                collect = f"{parts}.append({texts[0]})" if len(texts) == 1 \
                    else f"{parts}.extend(({', '.join(texts)}))"
                start = f"{parts} = [{name}]" if cast is None else f"{parts} = []"
                edits = [rewrite.delete_statement(self.source, dead)] if dead is not None else []
                return edits + [rewrite.insert_before(self.source, self.loop, start),
                                rewrite.replace_statements(self.source, stmt, stmt, [collect]),
                                rewrite.insert_after(self.source, self.loop, indent,
                                                     f"{name} = {func}({parts}{extra}){cast or ''}")]
            return build

        return self.finish("TW402", message, "Collect in a list and `torch.cat` once", obligations)


    def _moot_start_cast(self, init: ast.Assign, pieces: list) -> Optional[str]:
        """``acc = torch.tensor([])`` then ``acc = torch.cat([acc, piece])`` in a loop that runs at least once: the 1-d
        empty start only joins the type promotion (``torch.cat`` skips it), so the pieces are concatenated alone and
        cast to the promoted dtype: "" (no cast), ``.to(torch.float32)``, or None (the start must stay). Each piece's
        value is converted to that dtype either way, element by element."""
        from torchwise.analysis.dtypes import promote_types

        start = self.ctx.value(init.value)
        if not isinstance(start, TensorValue) or start.shape != (0,) or start.dtype is None or start.requires_grad \
                or start.device is None:
            return None
        facts = [self.ctx.value(p) for p in pieces]
        if not facts or any(not isinstance(f, TensorValue) or f.dtype is None or not f.shape or f.device != start.device
                            for f in facts) or len({f.dtype for f in facts}) != 1:
            return None
        try:
            space, kind = self.space_for(self.loop.target, self.loop.iter, self.scope)
        except Refuse:
            return None
        if kind == "list":
            listed = proof.list_element(self.ctx, self.scope, self.loop.iter) \
                if isinstance(self.loop.iter, ast.Name) else None
            if listed is None or type(listed[1]) is not int or listed[1] < 1:
                return None
        elif not proof.certainly_positive(space.count):
            return None
        piece = facts[0].dtype
        promoted = promote_types(start.dtype, piece)
        return "" if promoted == piece else f".to({self.torch()}.{promoted.short})"

    def _empty_start_is_moot(self, init: ast.Assign) -> bool:
        """``result = torch.tensor([])`` then ``result = torch.cat([result, x])`` for every ``x`` of a list: the
        start can be left out (``torch.cat(chunks)``). ``torch.cat`` skips a 1-d empty tensor (its legacy rule),
        so only its dtype could matter (it joins the type promotion): the same as the pieces', and on the same
        device. The list is built once, never changed, and holds at least one piece (``torch.cat([])`` raises
        where the loop returns the empty start)."""
        start = self.ctx.value(init.value)
        if not isinstance(start, TensorValue) or start.shape != (0,) or start.dtype is None:
            return False
        if not isinstance(self.loop.iter, ast.Name):
            return False
        listed = proof.list_element(self.ctx, self.scope, self.loop.iter)
        if listed is None:
            return False
        element, length = listed
        if type(length) is not int or length < 1 or not element.shape:
            return False
        return element.dtype == start.dtype and element.device == start.device and not start.requires_grad


class _CallMatcher(_Base):
    def __init__(self, call: ast.Call, scope, ctx):
        super().__init__(scope, ctx)
        self.call = call

    def run(self) -> Optional[Match]:
        if isinstance(self.call, ast.Call) and isinstance(self.call.func, ast.Name):
            try:
                found = self.builtin()
            except Refuse:
                found = None
            if found is not None:
                return found
        return self.comprehension_general()

    def comprehension_general(self) -> Optional[Match]:
        """Comprehensions and ``map`` consumed by one call (``calls``), on the general batching core."""
        from torchwise.vectorize.calls import ComprehensionMatcher, worth_a_look
        from torchwise.vectorize.general import GeneralMatcher

        if not worth_a_look(self.call):
            return None
        helper = GeneralMatcher(_statement_of(self.ctx, self.call) or self.ctx.tree.body[0], self.scope, self.ctx)
        found, reason = ComprehensionMatcher(self.call, self.scope, self.ctx, helper).run()
        if found is None and reason is None and isinstance(self.call, ast.Call) \
                and not helper._draws_random([self.call]):
            from torchwise.vectorize.collect import unknown_items_reason_of_join

            reason = unknown_items_reason_of_join(self.ctx, self.scope, self.call)
            if reason is not None:
                return Match("TW404", f"comprehension applies the same tensor ops to each item, then joins them "
                                      f"(no automatic rewrite: {reason})", why_no_fix=reason)
        if found is None:
            if reason is None:
                return None
            code = "TW404" if not (isinstance(self.call, ast.Call) and isinstance(self.call.func, ast.Name)) \
                else "TW407"
            return Match(code, f"{_FLAGGED_CALLS[code]} (no automatic rewrite: {reason})", why_no_fix=reason)
        node, source = self.call, self.source
        replacement = found.text if self._standalone_value() else wrap(found.text, found.prec, ATOM)

        def build():
            edits = [rewrite.delete_statement(source, d) for d in found.deletes]
            return edits + [rewrite.replace_node(source, node, replacement)]
        return Match(found.code, found.message, f"Vectorize: `{_short(found.text, 50)}`", build)

    def _standalone_value(self) -> bool:
        """The call is a whole statement's value, an index or an argument: any expression fits there unwrapped."""
        place_stmt = _statement_of(self.ctx, self.call)
        if place_stmt is None:
            return False
        if getattr(place_stmt, "value", None) is self.call \
                and isinstance(place_stmt, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr)):
            return True
        return any(isinstance(n, ast.Subscript) and n.slice is self.call
                   or isinstance(n, ast.Call) and any(a is self.call for a in n.args) for n in ast.walk(place_stmt))

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
def _is_builtin_call(node: ast.expr, name: str, scope) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name \
        and scope.owner_of(name) is None


_FEW = 3  # iterations


def _few_whole_slices(loop: ast.For) -> bool:
    """``for i in range(3): mean[i] = x[:, i].mean(0)``: a literal handful of iterations, each reading whole slices
    (every read by the index keeps a ``:`` dim), is not a per-element loop: it runs a few big ops already, so a finding
    without a fix is noise (init code, the x and y of a grid). Only a proven rewrite is offered there (the loop and
    its outputs' allocations become one op per output: ``mean = x.mean(dim=0)``, as fast or faster). A quadratic
    ``torch.cat`` accumulation is judged before this (it is a pitfall at any count)."""
    iterable = loop.iter
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
            and 1 <= len(iterable.args) <= 2 and not iterable.keywords
            and all(isinstance(a, ast.Constant) and type(a.value) is int for a in iterable.args)):
        return False
    bounds = [a.value for a in iterable.args]
    if (bounds[-1] - (bounds[0] if len(bounds) == 2 else 0)) > _FEW or not isinstance(loop.target, ast.Name):
        return False
    index = loop.target.id
    uses = [n for n in ast.walk(loop) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)
            and any(isinstance(m, ast.Name) and m.id == index for m in ast.walk(n.slice))]
    if not uses:
        return False
    return all(isinstance(n.slice, ast.Tuple) and any(isinstance(e, ast.Slice) and e.lower is None and e.upper is None
                                                      for e in n.slice.elts) for n in uses)


def _has_io(loop: ast.For) -> bool:
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _IO_CALLS:
            return True
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)):
            return True
    return False


def _number_literal(node: ast.expr) -> bool:
    """``3``, ``-2.5``, ``True``: a starting value that can move into the rewrite."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float))


def _target_names(target: ast.expr) -> list:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


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
    checker = Batcher(ctx, scope, [], None, "torch")
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
                    checker.check_pure(node)
        except Refuse:
            return False
    return True


def _statement_of(ctx, node: ast.AST) -> Optional[ast.stmt]:
    """The innermost statement containing ``node`` (the analysis' one parent map)."""
    return ctx.statement_of(node)
