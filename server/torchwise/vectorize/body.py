"""A loop body, statement by statement, as a set of *writes* on batched values.

Each statement of the body is translated in order into a small batched environment: a name is either
loop-invariant or bound to a batched value (``batch.Vec``). What the loop leaves behind is its writes,
classified by where they go:

- ``Store``: ``out[i] = v`` (and ``out[i, j]``, ``X[:, j]``, ``out[i, labels[i]]``, ``mask[b, :n[b]]``): the
  output *is* the batched value, written once (a fresh output is replaced, an existing one written in place);
- ``Append``: ``res.append(v)`` then ``torch.stack(res)`` / ``torch.cat`` / ``torch.tensor`` / the list itself;
- ``Accumulate``: ``s += v``, ``n += 1``, ``p *= v`` into a name: one reduction over the loop dims; read again
  in the body after the update, it is a scan (``torch.cumsum``, ``torch.cumprod``);
- ``Scatter``: ``out[idx[i]] += v``: ``index_put_(..., accumulate=True)``;
- ``InPlaceScan``: ``x[i] += x[i - 1]``: ``x.cumsum_(0)``.

``if``/``elif``/``else`` become conditions: temporaries assigned in both branches are ``torch.where``, stores and
appends under a condition are masked, ``continue`` masks the rest of the body. Anything else (a ``break``, a
call with effects, a value carried from one iteration to the next that is not a scan) refuses the loop.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Optional

from torchwise.analysis.dtypes import DType
from torchwise.analysis.values import ScalarValue, TensorValue
from torchwise.vectorize.batch import Batcher
from torchwise.vectorize.carried import carried_tensor
from torchwise.vectorize.vec import Vec
from torchwise.vectorize.expr import ATOM, BAND, BOR, UNARY, Inherent, Refuse, no_raising_ops, number_literal, wrap


@dataclass
class Store:
    target: str  # the tensor written
    node: ast.Subscript  # the target as written
    value: Vec
    cond: Optional[Vec]
    stmt: ast.stmt
    parts: list = field(default_factory=list)  # the index parts (`out[i][j]` is `out[i, j]`)
    value_node: Optional[ast.expr] = None
    clamp: Optional[str] = None  # `if x[i] < c: x[i] = c`: "min" (`x.clamp_(min=c)`), "max" for `>`


@dataclass
class Append:
    name: str
    value: Vec
    cond: Optional[Vec]
    stmt: ast.stmt
    value_node: Optional[ast.expr] = None


@dataclass
class Accumulate:
    name: str
    op: str  # "+" | "-" | "*"
    value: Vec
    cond: Optional[Vec]
    stmt: ast.stmt
    augmented: bool  # `s += v` (in place for a tensor) rather than `s = s + v`
    node: Optional[ast.expr] = None  # the value added, as written
    scanned: bool = False  # read again in the body after the update


@dataclass
class Scatter:
    target: str
    node: ast.Subscript
    value: Vec
    op: str
    cond: Optional[Vec]
    stmt: ast.stmt
    parts: list = field(default_factory=list)


@dataclass
class InPlaceScan:
    target: str
    op: str
    stmt: ast.stmt


@dataclass
class StoreScan:
    """``out[i] = out[i - 1] + v`` over ``range(1, N)`` (``*``, ``torch.maximum``/``minimum``), or backwards
    ``out[t] = out[t + 1] + v`` over ``range(N - 2, -1, -1)``: each slot combines the one written just before it."""
    target: str
    op: str  # "+", "*", "max", "min"
    value: Vec
    stmt: ast.stmt
    node: ast.expr  # the store's target (``out[i]``)
    forward: bool


@dataclass
class Body:
    writes: list = field(default_factory=list)
    temps: dict = field(default_factory=dict)  # name -> Vec: the body's temporaries (last value)
    prelude: list = field(default_factory=list)  # statements computing hoisted temporaries, first
    scans: dict = field(default_factory=dict)  # accumulator name -> its Accumulate (read after the update)


class BodyTranslator:
    """Runs the body's statements over a ``Batcher`` and collects its writes."""

    def __init__(self, batcher: Batcher, targets: set, accumulators: set, lists: set, scan_of=None,
                 fresh_name=None):
        self.batcher = batcher
        self.fresh_name = fresh_name or (lambda wanted: wanted)  # a name the program does not use
        self.uses: dict = {}
        self.scan_of = scan_of  # (Accumulate) -> Vec: the accumulator's values, one per iteration
        self.targets = targets  # tensors the body writes by subscript
        self.accumulators = accumulators  # names the body updates with `+=` (or `s = s + v`)
        self.lists = lists  # lists the body appends to
        self.body = Body()
        self.pending_scans: dict = {}

    def run(self, statements: list) -> Body:
        self.uses = {}
        for stmt in statements:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    self.uses[node.id] = self.uses.get(node.id, 0) + 1
        self._updated_twice(statements)
        self.statements = statements
        self.block(statements, None)
        return self.body

    def _updated_twice(self, statements: list) -> None:
        """``p = p + q`` then later ``p = (1 - k) * p`` (a Kalman filter's step): each iteration updates the running
        value again from what it just wrote, a recurrence no scan gives. Said before any statement is translated:
        the first update alone reads as a running sum, and its refusal would name the wrong reason."""
        seen: set = set()
        for stmt in statements:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
                if isinstance(stmt, ast.AugAssign) else []
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(t, (
                ast.Name, ast.Tuple, ast.List))}
            for name in sorted(names & set(self.accumulators)):
                if name in seen:
                    raise Inherent(f"`{name}` is updated twice in each iteration, from its own new value: a "
                                   "recurrence with no scan")
                seen.add(name)

    # -- statements ----------------------------------------------------------------------------------
    def block(self, statements: list, cond: Optional[Vec]) -> None:
        for index, stmt in enumerate(statements):
            if isinstance(stmt, ast.If) and self._continues(stmt):
                # `if c: continue` masks the rest of the block
                test = self.batcher(stmt.test)
                if stmt.orelse:
                    raise Refuse("an `else` after `continue`")
                rest = self._and(cond, self._not(test))
                self.block(stmt.body[:-1], self._and(cond, test)) if len(stmt.body) > 1 else None
                self.block(statements[index + 1:], rest)
                return
            self.statement(stmt, cond)

    def _continues(self, stmt: ast.If) -> bool:
        return bool(stmt.body) and isinstance(stmt.body[-1], ast.Continue)

    def statement(self, stmt: ast.stmt, cond: Optional[Vec]) -> None:
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            return  # a docstring-like comment
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            self.assign(stmt, stmt.targets[0], stmt.value, cond)
            return
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and stmt.simple:
            self.assign(stmt, stmt.target, stmt.value, cond)
            return
        if isinstance(stmt, ast.AugAssign):
            self.augmented(stmt, cond)
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self.call_statement(stmt, cond)
            return
        if isinstance(stmt, ast.If):
            self.branch(stmt, cond)
            return
        if isinstance(stmt, (ast.Break, ast.Return)):
            raise Inherent("the loop may stop early")
        if isinstance(stmt, ast.Assign):
            if all(_target(target) is not None for target in stmt.targets):
                self.chained_stores(stmt, cond)
                return
            raise Refuse("a chained assignment (`a[i] = b[j] = ...`) in the loop body")
        if isinstance(stmt, (ast.For, ast.While)):
            carried = carried_tensor(getattr(self, "statements", [stmt]))
            if carried is not None:
                raise Refuse(f"`{carried}` is written at one slot and read at another: each iteration depends on "
                             "the ones before, so there is no vectorized form")
        raise Refuse(f"a `{type(stmt).__name__.lower()}` statement in the loop body")

    def assign(self, stmt, target: ast.expr, value: ast.expr, cond: Optional[Vec]) -> None:
        if isinstance(target, ast.Name):
            name = target.id
            if name in self.accumulators:
                self.accumulation(stmt, name, value, cond)
                return
            if name in self.lists:
                raise Refuse(f"`{name}` is rebound in the loop")
            if name in self.batcher.env or name in self.batcher.defs:
                self.batcher.rebound.add(name)  # an idiom reading an earlier value through it would be wrong
            self.bind(name, self.batcher(value), cond)
            # what the name holds, for idioms read across temporaries (`e = exp(r - r.max())`, then `e / e.sum()`)
            if cond is None:
                self.batcher.defs[name] = value
            else:
                self.batcher.defs.pop(name, None)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target, value, cond)
            return
        found = _target(target)
        if found is not None:
            name, parts = found
            scan = self._store_scan(stmt, target, name, value, cond)
            if scan is not None:
                self.batcher.written_slot(name, parts)
                self.body.writes.append(scan)
                return
            self.store(stmt, target, self.batcher(value), value, cond)
            return
        raise Refuse("an assignment target not understood")

    def store(self, stmt, target: ast.Subscript, vec: Vec, value: ast.expr, cond: Optional[Vec]) -> None:
        name, parts = _target(target)
        constant = number_literal(vec.text) if not vec.batched and cond is None else None
        self.batcher.written_slot(name, parts, repeatable=None if constant is None else ("number", constant))
        self.body.writes.append(Store(name, target, vec, cond, stmt, parts, value))

    def chained_stores(self, stmt: ast.Assign, cond: Optional[Vec]) -> None:
        """``a[i] = b[i] = v``: Python evaluates ``v`` once, then stores it into each slot, left to right; so do the
        stores here, each converting the one value to its own tensor's dtype. Scans are single stores only."""
        vec = self.batcher(stmt.value)
        if vec.batched and _computed(vec):  # computed once, as the loop does
            vec = replace(vec, text=self.hoist(_target(stmt.targets[0])[0], vec), prec=ATOM, keepdim=None, kept=0,
                          moved=None, base=None, fresh=False)
        for target in stmt.targets:
            self.store(stmt, target, vec, stmt.value, cond)

    _SCAN_CALLS = {"torch.maximum": "max", "torch.minimum": "min", "torch.max": "max", "torch.min": "min"}

    def _store_scan(self, stmt, target: ast.expr, name: str, value: ast.expr, cond) -> Optional[StoreScan]:
        """``out[i] = OP(out[i - 1], v)`` (either order), the only read of ``out``, one loop, unconditional."""
        levels = self.batcher.levels
        if len(levels) != 1 or levels[0].index is None or cond is not None or not isinstance(target, ast.Subscript):
            return None
        if self.batcher.affine(target.slice) != (0, 1, 0):
            return None
        if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Mult)):
            op, operands = ("+" if isinstance(value.op, ast.Add) else "*"), [value.left, value.right]
        elif isinstance(value, ast.Call) and len(value.args) == 2 and not value.keywords \
                and self.batcher.scope.qualname(value.func) in self._SCAN_CALLS:
            op, operands = self._SCAN_CALLS[self.batcher.scope.qualname(value.func)], list(value.args)
        else:
            return None
        for k, operand in enumerate(operands):
            if isinstance(operand, ast.Subscript) and isinstance(operand.value, ast.Name) \
                    and operand.value.id == name:
                shift = self.batcher.affine(operand.slice)
                other = operands[1 - k]
                if shift in ((0, 1, -1), (0, 1, 1)) and not _mentions(other, name):
                    return StoreScan(name, op, self.batcher(other), stmt, target, forward=shift == (0, 1, -1))
        return None

    def bind(self, name: str, vec: Vec, cond: Optional[Vec]) -> None:
        """A temporary: its batched value (computed for every element; under a condition only the writes are
        masked, and the end of an ``if`` picks between the branches' values). Read more than once, a computed
        value is hoisted into a statement of its own, so the rewrite computes it once as the loop does."""
        if self.uses.get(name, 0) >= 2 and vec.batched and _computed(vec):
            hoisted = self.hoist(name, vec)
            vec = replace(vec, text=hoisted, prec=ATOM, keepdim=None, kept=0, moved=None, base=None, fresh=False)
        self.batcher.env[name] = vec
        self.body.temps[name] = vec

    def hoist(self, name: str, vec: Vec) -> str:
        fresh = self.fresh_name(f"{name}_all")
        self.body.prelude.append(f"{fresh} = {vec.text}")
        return fresh

    def unpack(self, target, value: ast.expr, cond) -> None:
        names = target.elts
        if any(not isinstance(n, ast.Name) for n in names):
            raise Refuse("unpacking into something other than names")
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(names):
            vecs = [self.batcher(v) for v in value.elts]
        else:
            whole = self.batcher(value)
            if whole.parts is not None and len(whole.parts) == len(names):
                vecs = list(whole.parts)
            elif whole.is_tensor and whole.batched and whole.rank >= 1 and whole.shape[0] == len(names) \
                    and whole.lost == 0:
                vecs = [self.batcher.element_index(whole, k) for k in range(len(names))]
            else:
                raise Refuse("unpacking a value that is not a known tuple or row")
        for name, vec in zip(names, vecs):
            if name.id in self.accumulators or name.id in self.lists:
                raise Refuse(f"`{name.id}` is rebound in the loop")
            self.bind(name.id, vec, cond)

    def augmented(self, stmt: ast.AugAssign, cond) -> None:
        ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
        if isinstance(stmt.target, ast.Subscript):
            ops[ast.Div] = "/"  # each slot divided once: exact; a running quotient of a name is no reduction
        op = ops.get(type(stmt.op))
        if op is None:
            raise Refuse("an in-place operator other than `+=`, `-=`, `*=`")
        if isinstance(stmt.target, ast.Name):
            name = stmt.target.id
            if name not in self.accumulators:
                raise Inherent(f"`{name}` carries a value from one iteration to the next")
            self._accumulate(stmt, name, op, stmt.value, cond, augmented=True)
            return
        found = _target(stmt.target)
        if found is not None:
            name, parts = found
            scan = self._in_place_scan(stmt, name, op)
            if scan is not None:
                self.body.writes.append(scan)
                return
            vec = self.batcher(stmt.value)
            self.batcher.written_slot(name, parts, read=True, repeatable="add" if op in ("+", "-") else None)
            self.body.writes.append(Scatter(name, stmt.target, vec, op, cond, stmt, parts))
            return
        raise Refuse("an in-place update not understood")

    def _in_place_scan(self, stmt: ast.AugAssign, name: str, op: str) -> Optional[InPlaceScan]:
        """``x[i] += x[i - 1]`` over ``range(1, len(x))``: each slot adds the one already updated before it."""
        target, value = stmt.target, stmt.value
        levels = self.batcher.levels
        if len(levels) != 1 or op not in ("+", "*") or not isinstance(value, ast.Subscript):
            return None
        if not (isinstance(value.value, ast.Name) and value.value.id == name):
            return None
        index = levels[0].index
        if not isinstance(target, ast.Subscript):
            return None
        current = self.batcher.affine(target.slice) if index is not None else None
        previous = self.batcher.affine(value.slice) if index is not None else None
        if current != (0, 1, 0) or previous != (0, 1, -1):
            return None
        return InPlaceScan(name, op, stmt)

    def accumulation(self, stmt: ast.Assign, name: str, value: ast.expr, cond) -> None:
        """``s = s + v`` / ``s = v + s`` / ``s = s * v``."""
        if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Mult, ast.Sub)):
            op = {ast.Add: "+", ast.Mult: "*", ast.Sub: "-"}[type(value.op)]
            left, right = value.left, value.right
            if isinstance(left, ast.Name) and left.id == name and not _mentions(right, name):
                self._accumulate(stmt, name, op, right, cond, augmented=False)
                return
            if op != "-" and isinstance(right, ast.Name) and right.id == name and not _mentions(left, name):
                self._accumulate(stmt, name, op, left, cond, augmented=False, flipped=True)
                return
        extreme = _running_extreme(value, name)
        if extreme is not None and self.batcher.scope.qualname(value.func) in (
                "torch.maximum", "torch.minimum", "torch.max", "torch.min"):
            op, other = extreme
            self._accumulate(stmt, name, op, other, cond, augmented=False)
            return
        raise Inherent(f"`{name}` carries a value from one iteration to the next")

    def _accumulate(self, stmt, name: str, op: str, value: ast.expr, cond, augmented: bool,
                    flipped: bool = False) -> None:
        if name in self.batcher.env or any(isinstance(w, Accumulate) and w.name == name for w in self.body.writes):
            raise Inherent(f"`{name}` is updated twice, or read before its update")
        if _mentions(value, name):
            raise Inherent(f"`{name}` is read in its own update")
        vec = self.batcher(value)
        write = Accumulate(name, op, vec, cond, stmt, augmented, node=value)
        self.body.writes.append(write)
        if self.scan_of is not None:
            def scanned():
                if write.cond is not None:
                    raise Refuse(f"`{name}` is read after a conditional update")
                write.scanned = True
                return self.scan_of(write)
            self.batcher.scans[name] = scanned

    def call_statement(self, stmt: ast.Expr, cond) -> None:
        call = stmt.value
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name) \
                and func.value.id in self.lists and len(call.args) == 1 and not call.keywords \
                and not isinstance(call.args[0], ast.Starred):
            if _masked_selection(call.args[0]) and self.batcher.mentions_loop(call.args[0]):
                # `kept.append(row[row > 0])`: no one tensor holds the results, however the loop is written
                raise Inherent("each element keeps its own number of values (a boolean mask): the results are "
                               "tensors of different lengths")
            vec = self.batcher(call.args[0])
            self.body.writes.append(Append(func.value.id, vec, cond, stmt, call.args[0]))
            return
        copied = copy_store(call)
        if copied is not None and isinstance(self.batcher.ctx.value(_base(copied[0])), TensorValue):
            self.copy_into(stmt, copied[0], copied[1], cond)
            return
        raise Inherent("a call whose result is thrown away (it may have effects)")

    def copy_into(self, stmt: ast.Expr, target: ast.Subscript, value: ast.expr, cond) -> None:
        """``T[i].copy_(v)``, its result thrown away: the store ``T[i] = v``. Both write ``v`` cast to ``T``'s
        dtype and broadcast to the slot's shape, in place, into the view ``T[i]`` is; they part only where ``T[i]``
        is not a view (an index that is a tensor, a copy), ``v`` is a Python number (``copy_`` wraps it where the
        store checks it fits the dtype), or ``v`` has more dims than the slot (the store drops leading ones of
        size 1, ``copy_`` raises): those are refused."""
        name, parts = _target(target)
        ctx = self.batcher.ctx
        for part in parts:
            if isinstance(part, ast.Slice) or isinstance(part, ast.Constant) and part.value in (None, Ellipsis):
                continue
            facts = ctx.value(part)
            if not (isinstance(facts, ScalarValue) and facts.kind == "int"):
                raise Refuse("`copy_` into a slot whose index may not be a Python int (not a view)")
        vec = self.batcher(value)
        if not vec.is_tensor:
            raise Refuse("`copy_` of something that is not a tensor")
        slot = ctx.value(target)
        shape = getattr(vec.elem, "shape", None)
        if not (isinstance(slot, TensorValue) and isinstance(slot.shape, tuple) and isinstance(shape, tuple)):
            raise Refuse("`copy_` into a slot whose rank is unknown")
        if len(shape) > len(slot.shape):
            raise Refuse("`copy_` of values with more dims than the slot (it raises where a store would not)")
        self.batcher.written_slot(name, parts)
        self.body.writes.append(Store(name, target, vec, cond, stmt, parts, value))

    def branch(self, stmt: ast.If, cond) -> None:
        test = self.batcher(stmt.test)
        clamp = _clamp_of(stmt)
        for part in stmt.body + stmt.orelse:
            no_raising_ops(part, self.batcher.ctx)  # a branch the loop skips for some elements is computed for all
            if not _is_append(part) and self.batcher.gathers_in(part):  # (an append is selected first: see emit)
                raise Refuse("a read at a data-dependent index in a branch: computed for every element, it may be "
                             "out of range where the loop skips it")
        before = dict(self.batcher.env)
        taken = self._and(cond, test)
        start = len(self.body.writes)
        written = set(self.batcher.written)
        self.block(stmt.body, taken)
        middle = len(self.body.writes)
        after_body = dict(self.batcher.env)
        self.batcher.env = dict(before)
        body_written, self.batcher.written = self.batcher.written, written
        otherwise = self._and(cond, self._not(test)) if stmt.orelse else None
        if stmt.orelse:
            self.block(stmt.orelse, otherwise)
        self.batcher.written |= body_written
        if clamp is not None and middle == start + 1 == len(self.body.writes):
            self.body.writes[start] = replace(self.body.writes[start], clamp=clamp)
        self._merge_branches(start, middle, test, cond, taken, otherwise)
        after_else = self.batcher.env
        merged = dict(before)
        for name in set(after_body) | set(after_else):
            a, b = after_body.get(name), after_else.get(name)
            if a is b:
                merged[name] = a
            elif a is not None and b is not None:
                merged[name] = self.batcher.where(test, a, b, python_choice=True) if a is not before.get(name) \
                    or b is not before.get(name) else a
            else:
                merged.pop(name, None)  # set in one branch only: read after the `if`, it would carry a value
        self.batcher.env = merged
        self.body.temps.update({k: v for k, v in merged.items() if k in self.body.temps})

    def _merge_branches(self, start: int, middle: int, test: Vec, cond: Optional[Vec], taken: Vec,
                        otherwise: Optional[Vec]) -> None:
        """A store (append) to the same slot in both branches, each made whenever its branch runs, is one store of
        ``torch.where(test, a, b)``. A store under a further condition (``elif`` without ``else``: some elements
        get neither) stays two conditional stores."""
        writes = self.body.writes
        first, second = writes[start:middle], writes[middle:]
        merged = []
        for write in first:
            twin = next((w for w in second if type(w) is type(write) and isinstance(w, (Store, Append))
                         and _same_slot(w, write)), None) \
                if write.cond is taken and otherwise is not None else None
            if twin is None or twin.cond is not otherwise and not isinstance(twin, Store):
                merged.append(write)
                continue
            second.remove(twin)
            value = self.batcher.where(test, write.value, twin.value, python_choice=True)
            # `if a: s = 1` / `elif b: s = -1` (no `else`): the one store is made where either branch makes one
            made = cond if twin.cond is otherwise else self._or(taken, twin.cond)
            merged.append(replace(write, value=value, cond=made, value_node=None))
        writes[start:] = merged + second

    # -- conditions ------------------------------------------------------------------------------------
    def _and(self, a: Optional[Vec], b: Vec) -> Vec:
        self._is_mask(b)
        if a is None:
            return b
        return self.batcher.pointwise(
            [a, b], lambda t, p: (f"{wrap(t[0], p[0], BAND)} & {wrap(t[1], p[1], BAND + 1)}", BAND),
            lambda values: _both(values), python_op="&")

    def _or(self, a: Vec, b: Vec) -> Vec:
        self._is_mask(a)
        self._is_mask(b)
        return self.batcher.pointwise(
            [a, b], lambda t, p: (f"{wrap(t[0], p[0], BOR)} | {wrap(t[1], p[1], BOR + 1)}", BOR),
            lambda values: _both(values), python_op="|")

    def _not(self, a: Vec) -> Vec:
        self._is_mask(a)
        return self.batcher.pointwise([a], lambda t, p: (f"~{wrap(t[0], p[0], UNARY)}", UNARY),
                                      lambda values: values[0], python_op="~")

    def _is_mask(self, vec: Vec) -> None:
        if not vec.batched:
            raise Refuse("a condition that does not depend on the loop")
        if vec.python and getattr(vec.elem, "kind", None) == "bool":
            return
        if not (vec.is_tensor and vec.dtype is DType.bool and vec.rank == 0):
            raise Refuse("a condition that is not one bool per element")


def _computed(vec: Vec) -> bool:
    """Worth computing once: not a bare name, attribute or slice of one."""
    text = vec.text
    return not all(c.isalnum() or c in "_.[]:, " for c in text) or "(" in text


def _both(values):
    a, b = values
    if isinstance(a, ScalarValue) and isinstance(b, ScalarValue):
        return ScalarValue("bool")
    tensors = [v for v in values if isinstance(v, TensorValue)]
    if len(tensors) == 2 and tensors[0].shape == tensors[1].shape == ():
        return tensors[0].with_(requires_grad=False)
    if len(tensors) == 2:
        from torchwise.analysis import shapes
        from torchwise.analysis.tensors import output_strides

        try:
            shape = shapes.broadcast(tensors[0].shape, tensors[1].shape)
        except shapes.ShapeError:
            return None
        return tensors[0].with_(shape=shape, strides=output_strides(shape, *tensors), requires_grad=False)
    if len(tensors) == 1:
        return tensors[0].with_(requires_grad=False) if tensors[0].dtype is DType.bool else None
    return None


def _clamp_of(stmt: ast.If) -> Optional[str]:
    """``if x[i] < c: x[i] = c`` (``>``: max) with one number ``c``: the bound it clamps to."""
    if stmt.orelse or len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Assign):
        return None
    test, store = stmt.test, stmt.body[0]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and len(store.targets) == 1):
        return None
    left, right, op = test.left, test.comparators[0], type(test.ops[0])
    flipped = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
    if op not in flipped:
        return None
    target = ast.unparse(store.targets[0])
    if ast.unparse(right) == target:
        left, right, op = right, left, flipped[op]
    if ast.unparse(left) != target or ast.unparse(right) != ast.unparse(store.value):
        return None
    number = right.operand if isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub) else right
    if not (isinstance(number, ast.Constant) and type(number.value) in (int, float)):
        return None
    return "min" if op in (ast.Lt, ast.LtE) else "max"


def _target(node: ast.expr):
    """(name, index parts) of a store target ``out[i, j]`` / ``out[i][j]``."""
    from torchwise.vectorize.vec import flatten_subscript

    if not isinstance(node, ast.Subscript):
        return None
    chained = flatten_subscript(node)
    if chained is not None:
        base, parts = chained
    else:
        base = node.value
        parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not isinstance(base, ast.Name):
        return None
    return base.id, parts


def _base(node: ast.Subscript) -> ast.expr:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node


def copy_store(call: ast.expr):
    """(target, value) of ``T[i].copy_(v)`` (``non_blocking`` a constant allowed), as a statement of its own the
    store ``T[i] = v`` where ``T`` is a tensor (see ``BodyTranslator.copy_into``); None: not that shape."""
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "copy_" and _target(func.value) is not None):
        return None
    args, keywords = list(call.args), {k.arg: k.value for k in call.keywords}
    if any(isinstance(a, ast.Starred) for a in args) or set(keywords) - {"non_blocking"}:
        return None  # the source by keyword is `src=` or `other=` depending on the version: not read
    if len(args) == 2 and "non_blocking" not in keywords:
        keywords["non_blocking"] = args.pop()
    if len(args) != 1:
        return None
    blocking = keywords.get("non_blocking")
    if blocking is not None and not (isinstance(blocking, ast.Constant) and isinstance(blocking.value, bool)):
        return None
    return func.value, args[0]


def _same_slot(a, b) -> bool:
    if isinstance(a, Append):
        return a.name == b.name
    return a.target == b.target and [ast.dump(p) for p in a.parts] == [ast.dump(p) for p in b.parts]


def _masked_selection(node: ast.expr) -> bool:
    """``x[x > 0]``, ``x[m & (x < 1)]``, ``x[~m]``: a selection whose length depends on the data."""
    if not isinstance(node, ast.Subscript):
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return any(isinstance(p, ast.Compare) or isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Invert)
               or isinstance(p, ast.BinOp) and isinstance(p.op, (ast.BitAnd, ast.BitOr))
               and any(isinstance(n, ast.Compare) for n in ast.walk(p)) for p in parts)


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def bound_names(statements: list) -> set:
    """Every name the statements bind (assignment targets, loop targets, `with ... as`)."""
    names = set()
    for stmt in statements:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names.add(node.id)
    return names


def classify_names(statements: list) -> tuple:
    """(subscript-written tensors, accumulators, appended lists) of a loop body."""
    targets, accumulators, lists = set(), set(), set()
    for stmt in statements:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                        targets.add(target.value.id)
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                accumulators.add(node.target.id)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, (ast.Add, ast.Mult, ast.Sub)):
                name = node.targets[0].id
                left, right = node.value.left, node.value.right
                if (isinstance(left, ast.Name) and left.id == name) or (isinstance(right, ast.Name)
                                                                        and right.id == name):
                    accumulators.add(name)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and _running_extreme(node.value, node.targets[0].id) is not None:
                accumulators.add(node.targets[0].id)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
                    and isinstance(node.func.value, ast.Name):
                lists.add(node.func.value.id)
            if isinstance(node, ast.Expr) and copy_store(node.value) is not None:
                base = _base(node.value.func.value)
                if isinstance(base, ast.Name):
                    targets.add(base.id)
    return targets, accumulators, lists


__all__ = ["Accumulate", "Append", "Body", "BodyTranslator", "InPlaceScan", "Scatter", "Store", "StoreScan",
           "bound_names", "classify_names", "copy_store"]


def _is_append(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
        and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append"


def _running_extreme(value: ast.expr, name: str):
    """``torch.maximum(name, v)`` / ``torch.maximum(v, name)`` (``minimum``, two-tensor ``torch.max`` / ``min``):
    ("max" | "min", v), v not reading ``name``; None otherwise (the qualname is checked where the scope is known)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and len(value.args) == 2
            and not value.keywords and value.func.attr in ("maximum", "minimum", "max", "min")):
        return None
    op = "max" if value.func.attr in ("maximum", "max") else "min"
    first, second = value.args
    if isinstance(first, ast.Name) and first.id == name and not _mentions(second, name):
        return op, second
    if isinstance(second, ast.Name) and second.id == name and not _mentions(first, name):
        return op, first
    return None
