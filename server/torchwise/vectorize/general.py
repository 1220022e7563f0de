"""The general loop vectorizer: any loop nest whose body is a per-element computation.

``match(loop)`` builds the iteration space (``space``: one level per nested ``for``), translates the
innermost body statement by statement (``body`` over ``batch``), and turns its writes into the rewrite
(``emit``). Three outcomes, as for every matcher:

- not a walk over tensors, or not a per-element computation (a recurrence, effects, an early exit): ``None``;
- a per-element computation with one step that cannot be shown equal (an op with no batched form, a fact
  unknown, the loop may run zero times): a match without a fix, whose message says the one reason;
- everything proven: a match with the fix.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Optional

from torchwise.analysis import layout
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue
from torchwise.vectorize import proof, rewrite
from torchwise.vectorize.batch import Batcher
from torchwise.vectorize.vec import _PURE_BUILTINS, Vec, _either
from torchwise.vectorize.collect import unknown_items_reason
from torchwise.vectorize.body import BodyTranslator, bound_names, classify_names, copy_store
from torchwise.vectorize.emit import Doubt, Emitter, _ALLOCATORS, _FRESH_FACTORIES
from torchwise.vectorize.expr import ARITH, ATOM, TERM, Inherent, Refuse, _precedence, spelled, torch_name, wrap
from torchwise.vectorize.oracle import Oracle
from torchwise.vectorize.space import HalfKnown, Level, Unwalkable, Walker, tensor_sizes

_IO_CALLS = frozenset({"print", "open", "input", "breakpoint", "exec", "eval", "setattr", "delattr"})
_TRAINING = frozenset({"backward", "step", "zero_grad", "write", "save", "log", "update", "add_scalar"})


class GeneralMatcher:
    """One loop nest, vectorized by translating its body (see the module docs)."""

    def __init__(self, loop: ast.For, scope, ctx):
        self.loop = loop
        self.scope = scope
        self.ctx = ctx
        self.source = ctx.source
        self.default_float = ctx.facts.default_float
        self.scope_node = proof.scope_node(scope)
        self.inner_loops: list = []

    def torch(self) -> str:
        return torch_name(self.scope)

    # -- entry --------------------------------------------------------------------------------------------
    def run(self):
        """(Rewrite | None, the reason there is none | None, the code to flag with)."""
        loop = self.loop
        if not isinstance(loop, ast.For) or loop.orelse or _has_effects(loop, self.scope, self.ctx) or self._inner_of_nest():
            return None, None, None
        try:
            torch = self.torch()
            walker = Walker(self.ctx, self.scope, torch, self._pure, tensor_sizes(self.ctx, loop.body),
                            unknown_lengths=True)
            levels, statements = self.nest(walker)
        except HalfKnown as half:
            return self._half_known(half)
        except (Refuse, Unwalkable):
            if self._draws_random(loop.body):
                return None, None, None
            reason = unknown_items_reason(self.ctx, self.scope, loop)
            return (None, reason, "TW406") if reason is not None else (None, None, None)
        code = _syntactic_code(statements, levels)
        if code is None or self._draws_random(statements) or not walks_tensors(self.ctx, levels, statements):
            return None, None, None
        try:
            rewrite_ = self.translate(levels, statements, torch)
        except Inherent:
            return None, None, None
        except Doubt as doubt:
            return None, str(doubt), code
        except Refuse as refusal:
            return None, str(refusal), code
        unknown = next((level.unknown_of for level in levels if level.unknown_of is not None), None)
        if unknown is not None:
            # the rewrite reads the length from `x.shape[k]` but nothing proves the rest of `x` is what it assumes
            return None, f"nothing is known here of `{unknown}`, whose size sets the number of iterations", \
                rewrite_.code
        return rewrite_, None, rewrite_.code

    def _half_known(self, half: HalfKnown):
        """A walk over tensors that cannot be vectorized as it is: a per-element body is flagged with the reason."""
        statements = self.loop.body
        if any(isinstance(s, ast.For) for s in statements) or self._draws_random(statements):
            return None, None, None
        code = _syntactic_code(statements, [Level(None, None, kind=half.kind)])
        if code is None:
            return None, None, None
        reason = f"{half} ({half.hint})" if half.hint and code in ("TW401", "TW406") else str(half)
        return None, reason, code

    def _draws_random(self, statements: list) -> bool:
        """A random draw per iteration (the loop's sequence of draws is not the vectorized one), or a call of code
        that may have effects (a function of the file vmap could not batch, an imported one): it stays a loop."""
        from torchwise.vectorize.calling import per_sample_layer, vmap_blocker
        from torchwise.vectorize.vec import _RANDOM

        for stmt in statements:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                        and not per_sample_layer(self.ctx.value(node.func)):
                    owner = self.scope.owner_of(node.func.id)
                    bindings = owner.bindings.get(node.func.id, ()) if owner is not None else ()
                    if owner is not None and self.scope.qualname(node.func) is None:
                        function = bindings[0].node if len(bindings) == 1 else None
                        if not isinstance(function, ast.FunctionDef) or vmap_blocker(
                                function, self.ctx.index.scope_of_node.get(function), self.scope) is not None:
                            return True
                if isinstance(node, ast.Call):
                    qualname = self.scope.qualname(node.func)
                    if qualname is not None and (qualname.rsplit(".", 1)[-1] in _RANDOM
                                                 or qualname.startswith(("torch.nn.init.", "numpy.random.",
                                                                         "random."))):
                        return True
        return False

    def _inner_of_nest(self) -> bool:
        """The only statement of an enclosing ``for``: that loop's nest is what is vectorized (or flagged)."""
        place = proof.place_of(self.ctx, self.loop)
        if place is None or not place.parents:
            return False
        parent = place.parents[-1]
        return isinstance(parent, ast.For) and len(parent.body) == 1 and parent.body[0] is self.loop

    def nest(self, walker: Walker) -> tuple:
        """The levels of a perfect loop nest (outermost first) and the innermost body."""
        levels = [walker.level(self.loop.target, self.loop.iter)]
        statements = self.loop.body
        names = set(levels[0].names)
        while len(statements) == 1 and isinstance(statements[0], ast.For) and not statements[0].orelse:
            inner = statements[0]
            triangle = self._triangle(inner, levels, walker)
            if triangle is not None:
                level, test = triangle
                if level.names & names:
                    raise Refuse("a loop variable bound twice")
                levels.append(level)
                self.inner_loops.append(inner)
                statements = [spelled(ast.If(test=test, body=inner.body, orelse=[]), inner)]
                break
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(inner.iter)):
                level = self.row_walk(inner, levels)
            else:
                level = walker.level(inner.target, inner.iter)
            if level.names & names:
                raise Refuse("a loop variable bound twice")
            levels.append(level)
            names |= level.names
            self.inner_loops.append(inner)
            statements = inner.body
        if len(levels) > 3:
            raise Refuse("more than three nested loops")
        return levels, statements

    def _triangle(self, inner: ast.For, levels: list, walker: Walker):
        """``for j in range(i + c, n)`` inside ``for i in range(...)`` (``c >= 0``, ``n`` not depending on the outer
        loops, ``i >= 0``): the same iterations, in the same order, as ``for j in range(n)`` whose body runs only where
        ``j >= i + c``. (Level over ``range(n)``, that test), else None."""
        call = inner.iter
        if not (isinstance(inner.target, ast.Name) and isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id == "range" and self.scope.owner_of("range") is None and len(call.args) == 2
                and not call.keywords):
            return None
        start, stop = call.args
        outer = {level.index: level for level in levels if level.index is not None and level.kind == "range"}
        if any(isinstance(n, ast.Name) and any(n.id in level.names for level in levels) for n in ast.walk(stop)):
            return None
        shift = _index_plus_constant(start, outer)
        if shift is None:
            return None
        name, c = shift
        level = outer[name]
        if not (type(c) is int and c >= 0 and level.step == 1 and type(level.start) is int and level.start >= 0):
            return None
        full = spelled(ast.Call(func=ast.Name("range", ast.Load()), args=[stop], keywords=[]), call)
        new = walker.level(inner.target, full)
        test = spelled(ast.Compare(left=ast.Name(inner.target.id, ast.Load()), ops=[ast.GtE()], comparators=[start]),
                       start)
        return new, test

    def row_walk(self, inner: ast.For, levels: list) -> Level:
        """``for v in row`` (``row`` an outer loop's element) or ``for v in X[i]`` (``i`` an outer index), maybe
        enumerated: a walk along the row's first dim, which every row has alike (``X.shape[1]``). ``v`` stands
        for ``row[j]`` of a hidden index ``j``; any other inner range that depends on the outer loop (a triangle)
        is refused."""
        target, iterable = inner.target, inner.iter
        index = None
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
                and self.scope.owner_of("enumerate") is None and len(iterable.args) == 1 and not iterable.keywords:
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2
                    and all(isinstance(e, ast.Name) for e in target.elts)):
                raise Refuse("an `enumerate` target not understood")
            index, target, iterable = target.elts[0].id, target.elts[1], iterable.args[0]
        if not isinstance(target, ast.Name):
            raise Refuse("an inner loop whose range depends on the outer one (a triangle)")
        rows = self._rows_walked(iterable, levels)
        if rows is None:
            raise Refuse("an inner loop whose range depends on the outer one (a triangle)")
        count, count_text, iterable = rows
        index = index or proof.fresh_name(self.ctx.tree, "_j")
        element = spelled(ast.Subscript(value=iterable, slice=ast.Name(index, ast.Load()), ctx=ast.Load()), iterable)
        return Level(count, count_text, index=index, arange=f"arange({count_text})", stop_text=count_text,
                     aliases={target.id: element})

    def _rows_walked(self, iterable: ast.expr, levels: list):
        """(length, its text) of every row that ``iterable`` is over the outer loops: an outer element of a
        tensor walk, or ``X[i]`` of an outer index into a tensor named outside the loop; else None."""
        if isinstance(iterable, ast.Name):
            for level in levels:
                element = level.elements.get(iterable.id)
                if element is not None and element.kind == "tensor" and isinstance(element.node, (ast.Name, ast.Attribute)) \
                        and element.whole.shape is not None and len(element.whole.shape) >= 2:
                    count = element.whole.shape[1]
                    return count, str(count) if type(count) is int else f"{element.text}.shape[1]", \
                        self._row_of(level, element.node)
            return None
        if not (isinstance(iterable, ast.Subscript) and isinstance(iterable.value, ast.Name)
                and isinstance(iterable.slice, ast.Name)):
            return None
        if not any(iterable.slice.id == level.index for level in levels) or \
                any(iterable.value.id in level.names for level in levels):
            return None
        whole = self.ctx.value(iterable.value)
        if not (isinstance(whole, TensorValue) and whole.shape is not None and len(whole.shape) >= 2):
            return None
        count = whole.shape[1]
        return count, str(count) if type(count) is int else f"{iterable.value.id}.shape[1]", iterable

    def _row_of(self, level: Level, walked: ast.expr) -> ast.expr:
        """``X[i]`` for the element ``row`` of ``for row in X``: the outer level gets an index if it has none (a
        hidden one), so that the inner element is ``X[i][j]``, an index expression the batcher reads whole."""
        if level.index is None:
            level.index = proof.fresh_name(self.ctx.tree, "_i")
            level.arange = f"arange({level.count_text})" if level.count_text else None
        return spelled(ast.Subscript(value=walked, slice=ast.Name(level.index, ast.Load()), ctx=ast.Load()), walked)

    def translate(self, levels: list, statements: list, torch: str):
        oracle = Oracle(self.ctx, self.loop)
        targets, accumulators, lists = classify_names(statements)
        bound = bound_names(statements) - targets
        batcher = Batcher(self.ctx, self.scope, levels, oracle, torch, bound)
        batcher.targets = set(targets)
        batcher.lists = set(lists)
        taken: set = set()

        def fresh_name(wanted: str) -> str:
            name = proof.fresh_name(self.ctx.tree, wanted)
            while name in taken:
                name = proof.fresh_name(self.ctx.tree, name + "_")
            taken.add(name)
            return name

        translator = BodyTranslator(batcher, targets, accumulators, lists, scan_of=lambda w: self.scan_vec(batcher, w),
                                    fresh_name=fresh_name)
        body = translator.run(statements)
        return Emitter(self, self.loop, batcher, body, levels, fresh_name).build()

    def _pure(self, node: ast.expr) -> None:
        Batcher(self.ctx, self.scope, [], None, "torch").check_pure(node)

    # -- scans ----------------------------------------------------------------------------------------------
    def scan_vec(self, batcher: Batcher, write) -> Vec:
        """The accumulator's value after each iteration: ``torch.cumsum`` (``cumprod``) of what it adds."""
        if len(batcher.levels) != 1:
            raise Refuse("a running value inside nested loops")
        value = write.value
        if not (value.batched and value.is_tensor and value.batch_dims == 1 and not value.lost):
            raise Refuse("a running value of something that is not a tensor per element")
        init = proof.binding_before(self.ctx, self.loop, write.name)
        if init is None:
            raise Doubt(f"`{write.name}`'s starting value is not right before the loop")
        start = self.ctx.value(init.value)
        torch = batcher.torch
        if write.op in ("max", "min"):
            return self._running_extreme(batcher, write, init, start)
        if write.op not in ("+", "*"):
            raise Refuse("a running difference")
        fn = "cumsum" if write.op == "+" else "cumprod"
        neutral = 0 if write.op == "+" else 1
        dtype = value.dtype
        from torchwise.analysis.dtypes import DType, is_floating, is_integral

        if dtype not in (DType.float32, DType.float64) and not is_integral(dtype):
            raise Doubt(f"a running {fn[3:]} of {dtype.short} rounds differently one step at a time")
        if isinstance(start, ScalarValue) and start.kind in ("int", "float"):
            literal = init.value
            is_neutral = isinstance(literal, ast.Constant) and literal.value == neutral \
                and not isinstance(literal.value, bool)
            if start.kind == "float" and not is_floating(dtype):
                raise Refuse("a running value that turns integers into floats")
            elem = batcher.oracle.binary(_binop(write.op), start, value.elem)
        elif isinstance(start, TensorValue) and start.shape == () and start.dtype == dtype:
            is_neutral = False
            elem = batcher.oracle.binary(_binop(write.op), start, value.elem)
        else:
            raise Doubt(f"the starting value of `{write.name}` is unknown")
        if not isinstance(elem, TensorValue) or elem.dtype != dtype:
            raise Refuse("a running value whose dtype changes")
        kw = ""
        if is_integral(dtype) and dtype is not DType.int64:
            kw = f", dtype={torch}.{dtype.short}"
        text = f"{torch}.{fn}({value.text}, dim=0{kw})"
        if not is_neutral:
            symbol = "+" if write.op == "+" else "*"
            text = f"{wrap(rewrite_text(self.source, init.value), _precedence(init.value), ARITH)} {symbol} {text}"
        whole = value.whole.with_(strides=layout.contiguous_strides(value.whole.shape))
        prec = ATOM if is_neutral else (ARITH if write.op == "+" else TERM)
        vec = Vec(text, prec, elem.with_(shape=value.elem.shape), whole, value.deps)
        batcher.prove(vec)
        return vec

    def _running_extreme(self, batcher: Batcher, write, init, start) -> Vec:
        """``best = torch.maximum(best, v[i])`` read per step: ``torch.maximum(start, torch.cummax(v, dim=0).values)``
        (a NaN propagates in both from where it appears). The start must be a 0-d tensor of the values' dtype and
        shape (``torch.maximum`` takes no Python number, and would promote or broadcast)."""
        from torchwise.analysis.dtypes import DType, is_complex

        value = write.value
        fn = "cummax" if write.op == "max" else "cummin"
        dtype = value.dtype
        if not (isinstance(start, TensorValue) and start.shape == () and value.rank == 0 and dtype is not None
                and start.dtype == dtype and dtype is not DType.bool and not is_complex(dtype)):
            raise Doubt(f"the starting value of `{write.name}` is not a 0-d tensor of the values' dtype")
        if start.device != "cpu" or value.whole.device != "cpu":
            raise Doubt("a running maximum off the CPU")
        if not proof.adjacent(self.ctx, init, self.loop):  # its text is evaluated where the loop was
            raise Doubt(f"`{write.name}`'s starting value is not right before the loop")
        scanned = f"{batcher.torch}.{fn}({value.text}, dim=0).values"
        pair = "maximum" if write.op == "max" else "minimum"
        text = f"{batcher.torch}.{pair}({rewrite_text(self.source, init.value)}, {scanned})"
        first, level = init.value, batcher.levels[0]
        if value.base is not None and value.base == value.text and isinstance(first, ast.Subscript) \
                and isinstance(first.slice, ast.Constant) and type(first.slice.value) is int and first.slice.value == 0 \
                and rewrite_text(self.source, first.value) == value.base and level.start == 0 and level.step == 1 \
                and proof.certainly_positive(level.count):
            text = scanned  # the start is the first element walked: already in the scan (and `v[0]` cannot raise)
        whole = value.whole.with_(strides=layout.contiguous_strides(value.whole.shape), memory=None)
        grad = _either(start.requires_grad, value.elem.requires_grad)
        vec = Vec(text, ATOM, value.elem.with_(requires_grad=grad, memory=None), whole.with_(requires_grad=grad),
                  value.deps)
        batcher.prove(vec)
        return vec

    # -- obligations the emitter asks for ------------------------------------------------------------------------
    def fresh_allocation(self, value: ast.expr) -> bool:
        if not isinstance(value, ast.Call) or self.scope.qualname(value.func) not in _ALLOCATORS:
            return False
        if any(k.arg not in ("dtype", "device") for k in value.keywords):
            return False
        try:
            for arg in [*value.args, *(k.value for k in value.keywords)]:
                self._pure(arg)
        except Refuse:
            return False
        return True

    def fresh_memory(self, value: ast.expr) -> bool:
        """The value is new memory no other name refers to: an allocation, a factory, a copy (``x.clone()``), or an
        operator's result (``torch.randn(n) * 5``: operators never return a view)."""
        if self.fresh_allocation(value) or self.fresh_factory(value) or isinstance(value, ast.BinOp):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "clone" \
                and self.scope.qualname(value.func) is None and not value.args:
            try:
                self._pure(value.func.value)
            except Refuse:
                return False
            return True
        return False

    def fresh_factory(self, value: ast.expr) -> bool:
        return isinstance(value, ast.Call) and self.scope.qualname(value.func) in _FRESH_FACTORIES

    def fresh_local(self, name: str) -> bool:
        """``name`` is bound once in this scope, to a fresh tensor nothing else refers to."""
        owner = self.scope.owner_of(name)
        if owner is not self.scope or len(owner.bindings.get(name, ())) != 1:
            return False
        binding = owner.bindings[name][0]
        value = getattr(binding, "value", None)
        if not self.fresh_factory(value):
            return False
        return not proof.captured(self.scope_node, name) and not proof.declared_shared(self.scope, name)

    def allocated_apart(self, name: str, others: set) -> bool:
        """``name`` was last bound to a fresh allocation before the loop (in its block or an enclosing one), and
        none of ``others`` is bound between that statement and the loop, nor in the loops around it (so none of
        them can be a view of it)."""
        if proof.captured(self.scope_node, name) or proof.declared_shared(self.scope, name):
            return False
        between: list = []
        stmt = self.loop
        while True:
            place = proof.place_of(self.ctx, stmt)
            if place is None:
                return False
            for i in range(place.index - 1, -1, -1):
                candidate = place.block[i]
                if isinstance(candidate, ast.Assign) and len(candidate.targets) == 1 \
                        and isinstance(candidate.targets[0], ast.Name) and candidate.targets[0].id == name:
                    if not self.fresh_memory(candidate.value):
                        return False
                    between += place.block[i + 1:place.index]
                    bound = {n.id for s in between for n in ast.walk(s) if isinstance(n, ast.Name)
                             and isinstance(n.ctx, ast.Store)}
                    return all(self._fresh_each_time(other, between) for other in bound & others) \
                        and not any(isinstance(n, ast.Call) and _calls_user(n, self.scope)
                                    for s in between for n in ast.walk(s))
            if not place.parents or not isinstance(place.parents[-1], (ast.For, ast.If)):
                return False
            parent = place.parents[-1]
            between += [s for s in parent.body + getattr(parent, "orelse", []) if s is not stmt]
            between += place.block[:place.index]
            stmt = parent

    def _fresh_each_time(self, name: str, statements: list) -> bool:
        """Every binding of ``name`` in ``statements`` is ``name = <new memory>`` (``torch.tensor([...])``, ``a + b``):
        it cannot be a view of anything allocated before."""
        stores = [n for s in statements for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name
                  and isinstance(n.ctx, ast.Store)]
        assigns = [s for s in statements for s in ast.walk(s) if isinstance(s, ast.Assign) and len(s.targets) == 1
                   and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
        return len(stores) == len(assigns) and all(self.fresh_memory(a.value) for a in assigns)

    def untouched_since_allocation(self, name: str) -> bool:
        """``name`` is a fresh allocation right before the loop (nothing in between mentions it), no nested code
        holds it: no other name can refer to its memory."""
        alloc = proof.binding_before(self.ctx, self.loop, name)
        return alloc is not None and self.fresh_allocation(alloc.value) and not proof.captured(self.scope_node, name) \
            and not proof.declared_shared(self.scope, name)

    def facts_of(self, name: str):
        """What a name read in the loop is (the engine's facts at its first read there)."""
        for node in ast.walk(self.loop):
            if isinstance(node, ast.Name) and node.id == name:
                return self.ctx.value(node)
        return None

    def is_tensor_name(self, name: str) -> bool:
        """A name that may hold a tensor at the loop (anything but a known number, list of numbers, or module)."""
        from torchwise.analysis.values import SeqValue

        owner = self.scope.owner_of(name)
        if owner is None and self.scope.qualname(ast.Name(name, ast.Load())) is not None:
            return False
        for node in ast.walk(self.loop):
            if isinstance(node, ast.Name) and node.id == name:
                value = self.ctx.value(node)
                if isinstance(value, ScalarValue):
                    return False
                if isinstance(value, SeqValue) and value.items is not None and all(
                        isinstance(i, ScalarValue) for i in value.items):
                    return False
                return True
        return True

    def fresh_output(self, out: str, alloc) -> None:
        if alloc is None or not self.fresh_allocation(alloc.value):
            raise Doubt(f"`{out}` is not freshly allocated right before the loop")
        if not rewrite.stands_alone(self.source, alloc):
            raise Doubt(f"`{out}`'s allocation shares its line")
        if (proof.captured(self.scope_node, out) or proof.declared_shared(self.scope, out)) \
                and not proof.adjacent(self.ctx, alloc, self.loop):
            raise Doubt(f"`{out}` may be seen by other code between its creation and the loop")
        between = proof.statements_between(self.ctx, alloc, self.loop) or []
        if any(proof.mentions(stmt, out) for stmt in between):
            raise Doubt(f"`{out}` is used between its allocation and the loop")

    def deletable(self, init) -> Optional[ast.stmt]:
        return proof.deletable(self.ctx, self.scope_node, self.scope, self.loop, init)

    def new_row_major(self, vec: Vec) -> Vec:
        """``vec`` as new memory laid out row-major, as the loop's result is: a copy where it is the data itself,
        ``.contiguous()`` where the data's layout would carry over."""
        if vec.rank == 0 and vec.batch_dims <= 1 or vec.row_major:
            return vec if vec.fresh else replace(vec, text=f"{vec.atom()}.clone()", prec=ATOM, base=None, fresh=True)
        if vec.fresh:
            return replace(vec, text=f"{vec.atom()}.contiguous()", prec=ATOM, base=None)
        return replace(vec, text=f"{vec.atom()}.clone(memory_format={self.torch()}.contiguous_format)", prec=ATOM,
                       base=None, fresh=True)

    @staticmethod
    def stack_layout(vec: Vec) -> None:
        if vec.rank >= 3 and not vec.row_major:
            raise Doubt("the stacked values may not be row-major, and `torch.stack` would keep their layout")

    def stacked_after(self, name: str):
        """(statement, call, ``name = []``, how) for the statement right after the loop that turns the list
        ``name`` into a tensor (``torch.stack``, ``torch.cat``, ``torch.tensor``), or keeps it ("list")."""
        init = proof.binding_before(self.ctx, self.loop, name)
        if init is None or not (isinstance(init.value, ast.List) and not init.value.elts):
            return None
        if not rewrite.stands_alone(self.source, init):
            return None
        if proof.captured(self.scope_node, name) or proof.declared_shared(self.scope, name):
            return None
        after = self._stacking_statement(name)
        uses = [n for n in proof.own_nodes(self.scope_node) if isinstance(n, ast.Name) and n.id == name
                and not _inside(n, self.loop) and n is not init.targets[0]]
        if after is not None:
            calls = [n for n in ast.walk(after) if isinstance(n, ast.Call) and len(n.args) == 1
                     and isinstance(n.args[0], ast.Name) and n.args[0].id == name]
            if len(calls) == 1:
                call = calls[0]
                how = {"torch.stack": "stack", "torch.cat": "cat", "torch.tensor": "tensor",
                       "torch.concat": "cat", "torch.concatenate": "cat"}.get(self.scope.qualname(call.func))
                loads = [u for u in uses if _inside(u, after)]
                stores = [u for u in loads if isinstance(u.ctx, ast.Store)]
                reads = [u for u in loads if isinstance(u.ctx, ast.Load)]
                rest = [u for u in uses if not _inside(u, after)]
                rebound_here = bool(stores) and isinstance(after, ast.Assign)
                if how is not None and len(reads) == 1 and (not rest or rebound_here and _after_rebinding(
                        rest, after)) and _call_options_ok(call, how):
                    if how == "tensor" and call.keywords:
                        return None
                    return after, call, init, how
        # The list itself is the result: every later use sees a list (of Python numbers, exactly).
        return (None, None, init, "list") if all(_after_loop(u, self.loop) for u in uses) else None

    _JOINS = frozenset({"torch.stack", "torch.cat", "torch.tensor", "torch.concat", "torch.concatenate"})

    def _stacking_statement(self, name: str) -> Optional[ast.stmt]:
        """The first statement after the loop that mentions ``name``, where the ones before it only join the loop's
        other lists (``variances = torch.stack(variances)`` then ``stds = torch.stack(stds)``): each is rewritten in
        its place, and none rebinds a name the loop reads."""
        stmt = self.loop
        for _ in range(4):
            stmt = proof.next_statement(self.ctx, stmt)
            if stmt is None or proof.mentions(stmt, name):
                return stmt
            if not self._joins_another_list(stmt):
                return None
        return None

    def _joins_another_list(self, stmt: ast.stmt) -> bool:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            return False
        joined = [n for n in ast.walk(stmt.value) if isinstance(n, ast.Call) and len(n.args) == 1
                  and isinstance(n.args[0], ast.Name) and self.scope.qualname(n.func) in self._JOINS]
        if len(joined) != 1:
            return False
        rebound = stmt.targets[0].id
        appended = {id(n.func.value) for n in ast.walk(self.loop) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute) and n.func.attr == "append"
                    and isinstance(n.func.value, ast.Name)}
        return all(id(n) in appended for n in ast.walk(self.loop) if isinstance(n, ast.Name) and n.id == rebound)

    def cat_dim(self, call: ast.Call) -> int:
        if len(call.args) > 1:
            return -1
        for keyword in call.keywords:
            if keyword.arg == "dim" and isinstance(keyword.value, ast.Constant):
                return keyword.value.value
            return -1
        return 0


def walks_tensors(ctx, levels: list, body: list) -> bool:
    """The loop is over tensor elements: a level walks a tensor (or a list of them), or the body indexes a
    tensor with a loop index (``x[i]``). Only such loops are flagged when no rewrite is proven."""
    if any(e.kind in ("tensor", "list", "tolist") for level in levels for e in level.elements.values()):
        return True
    if any(level.aliases for level in levels):  # `for v in X[i]`: a walk along a tensor's rows (``row_walk``)
        return True
    names = {name for level in levels for name in level.names}
    for stmt in body:
        # a loop variable and a tensor in one statement: `out[i] = ...`, `x ** i`, `m[bi, :] = v`
        found = [n for n in ast.walk(stmt) if isinstance(n, ast.Name)]
        if any(n.id in names for n in found) and any(_tensor_like(ctx.value(n)) for n in found if n.id not in names):
            return True
    return False


def _tensor_like(value) -> bool:
    return isinstance(value, TensorValue) or isinstance(value, SeqValue) and isinstance(value.each, TensorValue)


def _calls_user(call: ast.Call, scope) -> bool:
    """A call of code that is not torch's (it could make views or aliases we cannot see); Python's own pure
    builtins (``range``, ``len``) are not."""
    if isinstance(call.func, ast.Name) and call.func.id in _PURE_BUILTINS and scope.owner_of(call.func.id) is None:
        return False
    return scope.qualname(call.func) is None and not (isinstance(call.func, ast.Attribute))


def rewrite_text(source, node: ast.AST) -> str:
    return source.text_of(source.span(node))


def _index_plus_constant(node: ast.expr, indices: dict):
    """``i`` / ``i + 2`` / ``2 + i`` of an outer range index ``i``: (``i``, the constant), else None."""
    if isinstance(node, ast.Name) and node.id in indices:
        return node.id, 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for a, b in ((node.left, node.right), (node.right, node.left)):
            if isinstance(a, ast.Name) and a.id in indices and isinstance(b, ast.Constant) and type(b.value) is int:
                return a.id, b.value
    return None


def _binop(op: str) -> ast.BinOp:
    kinds = {"+": ast.Add(), "*": ast.Mult(), "-": ast.Sub()}
    return ast.BinOp(left=ast.Constant(0), op=kinds[op], right=ast.Constant(0))


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return outer.lineno <= node.lineno and node.end_lineno <= outer.end_lineno and any(n is node
                                                                                        for n in ast.walk(outer))


def _after_loop(node: ast.AST, loop: ast.AST) -> bool:
    return node.lineno > loop.end_lineno


def _after_rebinding(rest: list, after: ast.stmt) -> bool:
    """Every other use of the name comes after ``after`` rebinds it."""
    return all(u.lineno > after.end_lineno for u in rest)


def _call_options_ok(call: ast.Call, how: str) -> bool:
    if how == "stack":
        return all(k.arg == "dim" and isinstance(k.value, ast.Constant) and k.value.value == 0
                   for k in call.keywords) and len(call.args) == 1
    if how == "cat":
        return len(call.args) == 1 and all(k.arg == "dim" and isinstance(k.value, ast.Constant)
                                           and k.value.value == 0 for k in call.keywords)
    return True


def _has_effects(loop: ast.For, scope, ctx) -> bool:
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _IO_CALLS:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TRAINING \
                and not (scope.qualname(node.func) or "").startswith("torch.") \
                and not isinstance(ctx.value(node.func.value), TensorValue):
            return True  # `optimizer.step()`, `logger.log(...)`; not `torch.log(p)` or `p.log()`
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal, ast.While, ast.Try,
                             ast.With, ast.FunctionDef, ast.ClassDef, ast.Lambda, ast.Raise, ast.Assert,
                             ast.Delete)):
            return True
    return False


def _syntactic_code(statements: list, levels: list) -> Optional[str]:
    """The rule a per-element body is for (to flag it when no rewrite is proven), or None: not one."""
    appends = stores = accumulates = conditional = False
    for stmt in statements:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Break, ast.Return)):
                return None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append":
                appends = True
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) for t in node.targets):
                stores = True
            if isinstance(node, ast.Expr) and copy_store(node.value) is not None:
                stores = True  # `T[i].copy_(v)`: the store `T[i] = v`
            if isinstance(node, ast.AugAssign):
                if isinstance(node.target, ast.Subscript):
                    stores = True
                else:
                    accumulates = True
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.BinOp) and any(isinstance(side, ast.Name) and
                                                                  side.id == node.targets[0].id
                                                                  for side in (node.value.left, node.value.right)):
                accumulates = True  # `total = total + x[i].sum()`
            if isinstance(node, ast.If):
                conditional = True
    if stores:
        return "TW401"
    if appends:
        if levels[0].kind == "list":
            return "TW406"
        return "TW403" if conditional else "TW401"
    if accumulates:
        return "TW405"
    return None
