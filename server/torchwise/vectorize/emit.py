"""From a translated loop body (``body.Body``) to the rewrite: the new statements, and what they replace.

Each write of the body becomes one statement after the proofs that only the loop can discharge:

- a ``Store`` that covers a freshly allocated output exactly once replaces the allocation (``out = V``, cast to
  its dtype, laid out row-major as the loop leaves it); otherwise it writes in place (``out[1:-1] = V``,
  ``X[:] = V``, ``out[torch.arange(n), labels] = V``, masked under a condition: ``out[c] = V[c]``);
- an ``Append`` becomes the value of the statement that stacks, concatenates or converts the list;
- an ``Accumulate`` becomes one reduction over the loop dims (``s += V.sum()``, ``n += int(c.sum())``,
  ``total += V.sum(dtype=torch.float64).item()`` for Python floats);
- a ``Scatter`` becomes ``index_put_(..., accumulate=True)`` (duplicate indices add up, negative ones wrap,
  out-of-range ones raise: as the loop does);
- an ``InPlaceScan`` becomes ``x.cumsum_(0)``.

``Doubt`` is raised where the pattern is certain but one obligation cannot be shown: the loop is flagged
with that reason and no fix.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from typing import Optional

from torchwise.analysis import dims, layout
from torchwise.analysis.dtypes import DType, category, is_floating, is_integral
from torchwise.analysis.values import ScalarValue, TensorValue
from torchwise.vectorize import proof, rewrite, shared
from torchwise.vectorize.vec import Vec, _certain, _known, _shaped
from torchwise.vectorize.body import Accumulate, Append, Body, InPlaceScan, Scatter, Store, StoreScan
from torchwise.vectorize.expr import ATOM, TERM, UNARY, Inherent, Refuse, number_literal, precedence_of, wrap

_ALLOCATORS = frozenset({"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.empty_like",
                         "torch.zeros_like", "torch.ones_like", "torch.full_like"})
_FRESH_FACTORIES = _ALLOCATORS | {"torch.tensor", "torch.randn", "torch.rand", "torch.arange", "torch.randint"}
_SUM_DTYPES = frozenset({DType.float32, DType.float64})


class Doubt(Exception):
    """The pattern is certain, but one proof obligation is not: flag it without a fix."""


@dataclass
class Rewrite:
    code: str
    message: str
    title: str
    lines: list  # statements replacing the loop
    deletes: list = field(default_factory=list)  # statements deleted (allocations, starting values)
    # the statements right after the loop that stack its lists, in order: (statement, the call in it, its replacement
    # text, precedence) each
    after: Optional[tuple] = None
    empty_differs: bool = False  # only the empty loop differs (said in the title)


# `if x[i, 1] > 0:` inside `for j`: its mask is (N, 1), and a boolean index must match the (N, M) slots exactly
_PARTIAL_CONDITION = "a condition that does not vary along every loop, used to select slots (a mask does not broadcast)"


class Emitter:
    def __init__(self, matcher, loop: ast.For, batcher, body: Body, levels: list, fresh_name=None):
        self.m = matcher  # the loop matcher: ctx, scope, source, torch(), obligations
        self.fresh_name = fresh_name or (lambda wanted: proof.fresh_name(matcher.ctx.tree, wanted))
        self.loop = loop
        self.batcher = batcher
        self.body = body
        self.levels = levels
        self.ctx = matcher.ctx
        self.source = matcher.source
        self.lines: list = []
        self.deletes: list = []
        self.after = None
        self.codes: list = []
        self.summary: list = []
        self.empty_differs = False
        self._tensor_names: Optional[set] = None

    def torch(self) -> str:
        return self.batcher.torch

    # -- the whole loop -------------------------------------------------------------------------------
    def build(self) -> Rewrite:
        if not self.body.writes:
            raise Refuse("the loop writes nothing")
        names = set()
        for write in self.body.writes:
            key = getattr(write, "target", None) or getattr(write, "name", None)
            if key in names and not self._repeatable(key):
                raise Refuse(f"`{key}` is written by two statements")
            names.add(key)
        for write in self.body.writes:
            if getattr(write.value, "ragged", None) is not None if hasattr(write, "value") else False:
                raise Refuse("a ragged slice used other than summed or averaged")
            if isinstance(write, Store):
                self.store(write)
            elif isinstance(write, Append):
                self.append(write)
            elif isinstance(write, Accumulate):
                self.accumulate(write)
            elif isinstance(write, Scatter):
                self.scatter(write)
            elif isinstance(write, InPlaceScan):
                self.in_place_scan(write)
            elif isinstance(write, StoreScan):
                self.store_scan(write)
        self.obligations()
        self.lines[:0] = _live(self.body.prelude, self.lines)
        self.lines = shared.computed_once(_unpacked(self.lines), self.torch(), self.fresh_name, self._known_tensor)
        self.summary = _unpacked(self.summary)
        code = self.codes[0] if len(set(self.codes)) == 1 else "TW401"
        text = "; ".join(self.summary)
        message = self.head() + f"; vectorized: `{_short(text)}`"
        title = f"Vectorize: `{_short(text, 50)}`"
        if self.empty_differs:
            title += " (differs when the loop runs zero times)"
        after = None
        if self.after:
            after = tuple(sorted(self.after, key=lambda a: a[0].lineno))
            if not proof.consecutive_after(self.ctx, self.loop, [a[0] for a in after]):
                raise Refuse("the lists are stacked by statements that do not follow the loop one after the other")
        return Rewrite(code, message, title, self.lines, self.deletes, after, self.empty_differs)

    def _literal_indices_in_range(self, write: Store, target: TensorValue) -> None:
        """``out[i, 2] = v``: the vectorized ``out[:, 2] = ...`` raises on a size-2 dim even where the loop does not
        (it runs zero times, or its condition never holds): an int literal index must be certainly in range."""
        for position, part in enumerate(write.parts):
            if isinstance(part, ast.Constant) and type(part.value) is int:
                size = target.shape[position] if position < len(target.shape) else None
                if type(size) is not int or not -size <= part.value < size:
                    raise Refuse(f"`{write.target}`'s index {part.value} may be out of range")
            if not self.batcher._one_dim(part):
                return  # the later positions may not be the later dims

    def _repeatable(self, key: str) -> bool:
        """Several writes into ``key`` in one iteration whose order cannot matter (``written_slot``): additions into
        slots, or one number into gathered slots (``A[u, v] = 1; A[v, u] = 1``), each written as its own statement."""
        writes = [w for w in self.body.writes if getattr(w, "target", None) == key]
        kind = self.batcher.repeatable_writes.get(key)
        if kind == "add":
            return all(isinstance(w, Scatter) for w in writes)
        if kind == "apart":  # stores whose slots never meet (``written_slot``): in any order, each its own statement
            return all(isinstance(w, Store) for w in writes)
        if kind is None or not all(isinstance(w, Store) for w in writes):
            return False
        target = self.ctx.value(_base_of(writes[0].node))
        return _known(target) and all(self._slots(key, target, w.parts)["kind"] == "gather" for w in writes)

    def _known_tensor(self, name: str) -> bool:
        """The loop reads ``name`` as a tensor (what is known of it there)."""
        if self._tensor_names is None:
            self._tensor_names = {node.id for node in ast.walk(self.loop) if isinstance(node, ast.Name)
                                  and isinstance(self.ctx.value(node), TensorValue)}
        return name in self._tensor_names

    def head(self) -> str:
        """What the loop does, in the words of its writes."""
        writes = [w for w in self.body.writes if not (isinstance(w, Accumulate) and w.scanned)]
        names = ", ".join(dict.fromkeys(f"`{getattr(w, 'target', None) or w.name}`" for w in writes))
        if all(isinstance(w, Store) for w in writes):
            return f"loop fills {names} one element at a time"
        if len(writes) == 1:
            write = writes[0]
            if isinstance(write, Scatter):
                verb = {"*": "multiplies", "/": "divides"}.get(write.op, "adds into")
                return f"loop {verb} {names} one element at a time"
            if isinstance(write, StoreScan):
                kind = {"+": "sums", "*": "products", "max": "maxima", "min": "minima"}[write.op]
                return f"loop fills {names} with running {kind} one element at a time"
            if isinstance(write, InPlaceScan):
                kind = "sums" if write.op == "+" else "products"
                return f"loop turns {names} into running {kind} one element at a time"
            if isinstance(write, Append):
                if write.cond is not None:
                    return "filter loop over tensor elements; a boolean mask selects them in one op"
                if self.levels[0].kind == "list":
                    return "loop applies the same tensor ops to each item of a list"
                if not self.after:  # the list itself is the result
                    return "loop builds a list of numbers one element at a time"
                return "loop builds a list one element at a time, then stacks it"
            if isinstance(write, Accumulate):
                if write.cond is not None and not write.value.batched:
                    return "counting loop tests one element at a time"
                return f"reduction loop {'multiplies' if write.op == '*' else 'adds'} one element at a time"
        return f"loop computes {names} one element at a time"

    def obligations(self) -> None:
        """Nothing after the loop sees a loop variable or a temporary (the rewrite binds neither)."""
        scope_node = self.m.scope_node
        loops = [self.loop] + self.m.inner_loops
        for loop in loops:
            for name in _target_names(loop.target):
                if proof.read_outside(scope_node, self.loop, name):
                    raise Doubt(f"`{name}` is read after the loop")
        for name in self.body.temps:
            if proof.read_outside(scope_node, self.loop, name):
                raise Doubt(f"`{name}` (set in the loop) is read after it")
        if len(self.batcher.devices) > 1:
            raise Refuse("tensors on different devices")

    # -- out[i] = v --------------------------------------------------------------------------------------
    def store(self, write: Store) -> None:
        self.codes.append("TW401")
        value = write.value
        if value.parts is not None:
            raise Refuse("a tuple stored")
        if not value.batched and not (value.is_tensor or isinstance(value.elem, ScalarValue)
                                      and value.elem.kind in ("int", "float", "bool")):
            raise Refuse("a store of something that is not a tensor or a number")
        target_value = self.ctx.value(_base_of(write.node))
        if not _shaped(target_value):
            # nothing is known of what the loop writes into (a shape from `self.spatial_shape`): say nothing
            raise Inherent(f"`{write.target}`'s shape is unknown")
        self._literal_indices_in_range(write, target_value)
        plan = self._slots(write.target, target_value, write.parts)
        kind = plan["kind"]
        if kind == "gather":
            self._store_gathered(write, target_value, plan)
            return
        if kind == "ragged":
            self._store_ragged(write, target_value, plan)
            return
        if kind == "diagonal":
            self._store_diagonal(write, target_value, plan)
            return
        self._store_walk(write, target_value, plan)

    def _slots(self, name: str, target: TensorValue, parts: list) -> dict:
        """How the target's index follows the loop: walks (slices), gathers, or a ragged bound."""
        b = self.batcher
        walks, basics, gathers, ragged = [], [], [], None
        dim = 0
        texts, items = [], []
        for position, part in enumerate(parts):
            if not b.mentions_loop(part):
                item, code = b._basic_item(part)
                if item is Ellipsis:
                    raise Refuse("`...` in a store index")
                texts.append(code)
                items.append(item)
                basics.append((position, item))
                if item is not None:
                    dim += 1
                continue
            affine = b.affine(part)
            if affine is not None:
                if dim >= len(target.shape):
                    raise Refuse("more indices than dims")
                k, c1, c0 = affine
                item, code = b._slice(k, c1, c0, target.shape[dim])
                walks.append((k, dim, c1, c0, position))
                texts.append(code)
                items.append(item)
                dim += 1
                continue
            if isinstance(part, ast.Slice):
                if ragged is not None or part.step is not None:
                    raise Refuse("a store into a slice whose bounds depend on the loop")
                ragged = (position, dim, part)
                texts.append(None)
                items.append(slice(None))
                dim += 1
                continue
            gathers.append((position, b(part), dim))
            texts.append(None)
            items.append(0)
            dim += 1
        levels_written = {w[0] for w in walks}
        kind = "walk"
        if len(levels_written) != len(walks):
            if len(walks) == 2 and walks[0][0] == walks[1][0] and walks[0][2:4] == walks[1][2:4] == (1, 0) \
                    and not gathers and ragged is None and len(self.levels) == 1:
                kind = "diagonal"
            else:
                raise Refuse("the same loop index twice in a store")
        if gathers:
            kind = "gather"
        elif ragged is not None:
            kind = "ragged"
        return {"kind": kind, "walks": walks, "basics": basics, "gathers": gathers, "ragged": ragged,
                "texts": texts, "items": items, "levels": levels_written}

    def _store_diagonal(self, write: Store, target: TensorValue, plan: dict) -> None:
        """``eye[i, i] = 1``: the diagonal (``out.fill_diagonal_(1)``; values per element go in by index)."""
        (k, d1, _, _, p1), (_, d2, _, _, p2) = plan["walks"]
        level = self.levels[k]
        if len(target.shape) != 2 or len(write.parts) != 2 or level.step != 1 \
                or not _certain(dims.dim_eq(level.start, 0)):
            raise Refuse("a diagonal store other than `out[i, i]` of a matrix")
        size = target.shape[0]
        if not (_certain(dims.dim_eq(target.shape[0], target.shape[1])) and _certain(dims.dim_eq(level.count, size))):
            raise Refuse("a store into part of a diagonal, or of a matrix that may not be square")
        value = write.value
        if value.batched and (value.batch_dims != 1 or value.rank != 0):
            raise Refuse("a diagonal store of values that are not one number per element")
        alloc = proof.binding_before(self.ctx, self.loop, write.target)
        if alloc is None or not self._fresh_allocation(alloc.value):
            self._in_place_allowed(write)
        self._device_check(write, target)
        if write.cond is not None:
            raise Refuse("a conditional diagonal store")
        if value.batched or value.is_tensor:
            index = f"{self.torch()}.arange({size if type(size) is int else write.target + '.shape[0]'})"
            line = f"{write.target}[{index}, {index}] = {self._same_dtype(value, target, write.target)}"
        else:
            line = f"{write.target}.fill_diagonal_({value.text})"  # the scalar cast to `out`'s dtype, as stores do
            line = self._identity_alone(write, target, value) or line
        self.lines.append(line)
        self.summary.append(line)

    def _store_walk(self, write: Store, target: TensorValue, plan: dict) -> None:
        b = self.batcher
        value = write.value
        walks = plan["walks"]
        if plan["levels"] != set(range(len(self.levels))):
            raise Refuse("each slot is written by several iterations (the loop keeps the last)")
        if not value.batched:
            self._store_invariant(write, target, plan)
            return
        from torchwise.vectorize.vec import _index

        region = _index(target, plan["items"])  # the slots, as one view
        walk_dims = _walk_result_dims(plan["items"], [w[1] for w in walks])
        slot_shape = tuple(s for i, s in enumerate(region.shape) if i not in walk_dims)
        # the stored value broadcasts to the slot per element (`out[i] = v` copies with broadcasting)
        if not _broadcasts_to(value.shape, slot_shape):
            raise Doubt(f"each value written has shape {dims.fmt_shape(value.elem.shape)}, a slot of "
                        f"`{write.target}` {dims.fmt_shape(slot_shape)}")
        order = [w[0] for w in sorted(walks, key=lambda w: w[1])]
        leading = walk_dims == list(range(len(walks))) and order == sorted(order)
        padded = b.pad(value, len(slot_shape)) if value.rank < len(slot_shape) else value
        if value.rank > len(slot_shape):
            # per element a (1, ...) value fills a slot of fewer dims; vectorized its size-1 dims follow the loop
            # dims, where broadcasting would not drop them: select them away
            extra = value.rank - len(slot_shape)
            index = ", ".join([":"] * value.batch_dims + ["0"] * extra)
            keep = list(range(value.batch_dims)) + list(range(value.batch_dims + extra, len(value.whole.shape)))
            whole = value.whole.with_(shape=tuple(value.whole.shape[d] for d in keep),
                                      strides=None if value.whole.strides is None
                                      else tuple(value.whole.strides[d] for d in keep))
            padded = replace(value, text=f"{value.atom()}[{index}]", prec=ATOM, base=None, moved=None, whole=whole,
                             elem=value.elem.with_(shape=tuple(value.elem.shape[value.lost + extra:]),
                                                   strides=None), lost=0)
            value = padded
        backwards = [w[0] for w in walks if w[2] * self.levels[w[0]].step < 0]
        if backwards:
            # the slots are walked backwards: the value's loop dims are flipped to the slots' order
            if padded.batch_dims != len(self.levels):
                raise Refuse("a backwards store of a value that does not follow every loop")
            flipped = ", ".join(str(k) for k in backwards)
            padded = replace(padded, text=f"{padded.atom()}.flip({flipped})", prec=ATOM, fresh=True, base=None,
                             moved=None, whole=padded.whole.with_(strides=layout.contiguous_strides(
                                 padded.whole.shape)))
            value = padded
        text = padded.text
        moved = None
        if not leading:
            if len(walks) == 1 and value.moved is not None and value.moved[2] == walk_dims[0] and \
                    len(slot_shape) == value.rank:
                moved = value.moved
                text = value.moved[0]
            elif len(walks) == 1 and value.batch_dims == 1:
                text = f"{padded.atom()}.movedim(0, {walk_dims[0]})"
            else:
                raise Refuse("a store whose loop dims are out of order")
        full = self._covers(target, plan)
        alloc = proof.binding_before(self.ctx, self.loop, write.target)
        fresh = alloc is not None and self._fresh_allocation(alloc.value)
        if moved is not None and write.cond is None and full and fresh and len(slot_shape) == value.rank \
                and self.replaceable(target, value):
            # a column walk computed in the data's own dim order is already laid out as the output
            facts = moved[1] or _unmoved(value.whole, moved[2])
            if all(_certain(dims.dim_eq(a, c)) for a, c in zip(facts.shape, target.shape)):
                vec = replace(value, text=_unwrapped(moved[0]), prec=0, whole=facts, moved=None, base=None)
                self._replace_allocation(write, target, vec, alloc)
                return
        if write.cond is None and full and fresh and leading and value.batch_dims == len(self.levels) \
                and len(slot_shape) == value.rank and self.replaceable(target, value) \
                and all(_certain(dims.dim_eq(a, c)) for a, c in zip(value.whole.shape, target.shape)):
            self._replace_allocation(write, target, value, alloc)
            return
        if not fresh:
            self._in_place_allowed(write)
        elif self._alloc_is_empty(alloc) and (not full or write.cond is not None):
            self._uninitialized_ok(write)
        sel = ", ".join(t for t in plan["texts"])
        sel = _trim_selection(sel)
        view = f"{write.target}[{sel}]" if sel else write.target
        if not sel:
            view = f"{write.target}[:]"
        if write.cond is not None:
            cond = write.cond
            if cond.batch_dims != len(self.levels) or not cond.is_tensor and not cond.python:
                raise Refuse("a condition that does not cover every loop dim")
            if not leading:
                raise Refuse("a conditional store whose loop dims are out of order")
            if cond.deps != frozenset(range(len(self.levels))):
                raise Refuse(_PARTIAL_CONDITION)
            mask = cond.text
            if not value.batched:
                line = f"{view}[{mask}] = {value.text}"
            else:
                chosen = f"{wrap(text, padded.prec if moved is None else ATOM, ATOM)}[{mask}]"
                if value.dtype != target.dtype or value.dtype is None:
                    chosen = f"{chosen}.to({self._dtype_text(target, write.target)})"  # index_put_ does not cast
                line = f"{view}[{mask}] = {chosen}"
            if not sel:
                line = line.replace(f"{write.target}[:][", f"{write.target}[", 1)
        else:
            line = f"{view} = {text}"
            chain = self._in_place_chain(write, target, leading, len(slot_shape))
            if chain is not None:
                line = f"{view if sel else write.target}{chain}"
        self._device_check(write, target)
        if not _fits(value, target):
            raise Doubt(f"the values do not fit `{write.target}`'s dtype")
        self.lines.append(line)
        self.summary.append(line)

    def _in_place_chain(self, write: Store, target: TensorValue, leading: bool, slot_rank: int) -> Optional[str]:
        """``x[c] = (x[c] - m[c]) / s[c]``: the same arithmetic in place (``x.sub_(m).div_(s)``), no temporaries.
        Exact where every step keeps ``x``'s dtype: each other operand is a number, or a tensor of that dtype."""
        node = write.value_node
        steps = []
        while isinstance(node, ast.BinOp) and type(node.op) in _IN_PLACE:
            steps.append((_IN_PLACE[type(node.op)], node.right))
            node = node.left
        if not steps or not leading or ast.unparse(node) != ast.unparse(write.node) or target.dtype is None \
                or not is_floating(target.dtype):
            return None
        texts = []
        for method, right in reversed(steps):
            if proof.mentions(right, write.target):
                return None
            try:
                operand = self.batcher(right)
            except Refuse:
                return None
            if operand.is_tensor:
                if operand.dtype != target.dtype or operand.rank > slot_rank:
                    return None
                text = (self.batcher.pad(operand, slot_rank) if operand.batched else operand).text
            elif operand.python and operand.batched:
                # numbers from a list: `torch.tensor(mean)`, rounded to its dtype as the loop's op rounds them
                if operand.whole.dtype != target.dtype or operand.batch_dims != 1:
                    return None
                text = f"{operand.atom()}[:{', None' * slot_rank}]" if slot_rank else operand.text
            elif isinstance(operand.elem, ScalarValue) and operand.elem.kind in ("int", "float"):
                text = operand.text
            else:
                return None
            if texts and _reads_name(text, write.target):
                return None  # a later step's operand would read the target the earlier steps changed
            texts.append(f".{method}({text})")
        return "".join(texts)

    def _store_invariant(self, write: Store, target: TensorValue, plan: dict) -> None:
        """The same value into every slot the loop walks (under its condition): one broadcasting write."""
        value = write.value
        sel = _trim_selection(", ".join(plan["texts"]))
        view = f"{write.target}[{sel}]" if sel else write.target
        alloc = proof.binding_before(self.ctx, self.loop, write.target)
        if alloc is None or not self._fresh_allocation(alloc.value):
            self._in_place_allowed(write)
        self._device_check(write, target)
        if value.is_tensor and not _broadcasts_to(value.shape, ()) and not plan["walks"]:
            raise Refuse("internal: no walk")
        if write.cond is not None:
            cond = write.cond
            one_number = value.is_tensor and value.rank == 0 or isinstance(value.elem, ScalarValue)
            # (one number under a condition of the inner loops only, `if j > i: m[h, i, j] = -inf`: the mask
            # broadcasts over the outer loops' dims, as `masked_fill_` lines it up from the right)
            if cond.batch_dims != len(self.levels) and not (one_number and (cond.is_tensor or cond.python)
                                                            and 0 < cond.batch_dims < len(self.levels)):
                raise Refuse("a condition that does not cover every loop dim")
            walk_dims = _walk_result_dims(plan["items"], [w[1] for w in plan["walks"]])
            order = [w[0] for w in sorted(plan["walks"], key=lambda w: w[1])]
            if walk_dims != list(range(len(plan["walks"]))) or order != sorted(order):
                raise Refuse("a conditional store whose loop dims are out of order")
            line = f"{view}[{cond.text}] = {value.text}" if sel else f"{write.target}[{cond.text}] = {value.text}"
            # the view's own dims past the loop dims: an int index (`out[i, j, 0]`) drops its dim from the view
            dropped = sum(1 for part in write.parts if isinstance(part, ast.Constant) and type(part.value) is int)
            slot = len(target.shape) - len(self.levels) - dropped
            if slot < 0:
                raise Refuse("a conditional store whose slots are not understood")
            if cond.batch_dims != len(self.levels) and not one_number:
                raise Refuse("a condition that does not cover every loop dim")
            if not one_number and cond.deps != frozenset(range(len(self.levels))):
                raise Refuse(_PARTIAL_CONDITION)
            if one_number:
                # one number into the chosen slots: `masked_fill_` (the mask broadcast over each slot's dims)
                spread = ", ".join([":"] * cond.batch_dims + ["None"] * slot)
                mask = cond.text if slot == 0 else f"{cond.atom()}[{spread}]"
                line = f"{view if sel else write.target}.masked_fill_({mask}, {value.text})"
                line = self._triangle_alone(write, target, plan, cond, value) or line
            if write.clamp is not None and self._clamps(target, value):
                # `if x[i] < c: x[i] = c` is `clamp_(min=c)`: NaN stays NaN in both (`NaN < c` is False)
                line = f"{view if sel else write.target}.clamp_({write.clamp}={value.text})"
        else:
            line = f"{view} = {value.text}" if sel else f"{write.target}[:] = {value.text}"
        self.lines.append(line)
        self.summary.append(line)

    def _triangle_alone(self, write: Store, target: TensorValue, plan: dict, cond: Vec, value: Vec) -> Optional[str]:
        """``out = torch.zeros(n, m)`` then ``if j > i: out[i, j] = c``: ``c`` in a triangle and zeros elsewhere,
        which is ``out = torch.full((n, m), c).triu_(1)`` (the causal mask), not zeros, a mask and a fill."""
        torch = re.escape(self.torch())
        found = re.fullmatch(rf"{torch}\.ones\(.+, dtype={torch}\.bool\)\.(triu|tril)\((-?\d+)\)", cond.text)
        kind = getattr(value.elem, "kind", None)
        if found is None or value.batched or len(self.levels) != 2 or not self._covers(target, plan) \
                or not _holds(target.dtype, kind):
            return None
        zeros = self._fresh_zeros(write, target)
        if zeros is None:
            return None
        sizes, options = zeros
        if kind != "float" and not any(option.startswith("dtype=") for option in options):
            options.append(f"dtype={self.torch()}.{target.dtype.short}")  # `torch.full` takes the value's type
        arguments = ", ".join([f"({sizes[0]}, {sizes[1]})", value.text] + options)
        return f"{write.target} = {self.torch()}.full({arguments}).{found.group(1)}_({found.group(2)})"

    def _identity_alone(self, write: Store, target: TensorValue, value: Vec) -> Optional[str]:
        """``out = torch.zeros(n, n)`` then ``out[i, i] = 1``: ``out = torch.eye(n, n)``, made as it is filled."""
        kind = getattr(value.elem, "kind", None)
        if value.batched or number_literal(value.text) != 1 or not _holds(target.dtype, kind):
            return None
        zeros = self._fresh_zeros(write, target)
        if zeros is None:
            return None
        sizes, options = zeros
        return f"{write.target} = {self.torch()}.eye({', '.join(sizes + options)})"

    def _fresh_zeros(self, write: Store, target: TensorValue) -> Optional[tuple]:
        """The sizes and options (texts) of ``torch.zeros(n, m)`` allocating a matrix right before the loop that
        nothing else sees first (the rewrite makes it at once, deleting the allocation), else None."""
        alloc = proof.binding_before(self.ctx, self.loop, write.target)
        if alloc is None or not isinstance(alloc.value, ast.Call) or len(target.shape) != 2 \
                or target.requires_grad is not False:
            return None
        call = alloc.value
        sizes = call.args[0].elts if len(call.args) == 1 and isinstance(call.args[0], (ast.Tuple, ast.List)) \
            else call.args
        if self.m.scope.qualname(call.func) != "torch.zeros" or len(sizes) != 2 \
                or any(isinstance(a, ast.Starred) for a in sizes) \
                or any(k.arg not in ("dtype", "device") for k in call.keywords):
            return None
        try:
            self.m.fresh_output(write.target, alloc)
        except Doubt:
            return None
        self.deletes.append(alloc)
        text = self.source.text_of
        return [text(self.source.span(a)) for a in sizes], \
            [f"{k.arg}={text(self.source.span(k.value))}" for k in call.keywords]

    def _same_dtype(self, value: Vec, target: TensorValue, name: str) -> str:
        """An advanced-index write (``index_put_``) does not cast as ``out[i] = v`` does: cast first."""
        if not value.is_tensor or value.dtype == target.dtype and value.dtype is not None:
            return value.text
        if not value.exact_cast:
            raise Doubt("the branches have different dtypes from the output")
        return f"{value.atom()}.to({self._dtype_text(target, name)})"

    def _dtype_text(self, target: TensorValue, name: str) -> str:
        return f"{self.torch()}.{target.dtype.short}" if target.dtype is not None else f"{name}.dtype"

    def _clamps(self, target: TensorValue, value: Vec) -> bool:
        kind = getattr(value.elem, "kind", None)
        if target.dtype is None or target.dtype is DType.bool or kind not in ("int", "float"):
            return False
        return is_floating(target.dtype) or (is_integral(target.dtype) and kind == "int")

    def _covers(self, target: TensorValue, plan: dict) -> bool:
        """Every slot of the target is written: the walks run over whole dims and the rest are `:`."""
        for position, item in plan["basics"]:
            if not (isinstance(item, slice) and item == slice(None)):
                return False
        for k, dim, c1, c0, _ in plan["walks"]:
            level = self.levels[k]
            first = c1 * level.start + c0
            stride = c1 * level.step
            if abs(stride) != 1:
                return False
            low = first if stride > 0 else first + stride * (level.count - 1)
            if not (_certain(dims.dim_eq(low, 0)) and _certain(dims.dim_eq(level.count, target.shape[dim]))):
                return False
        return True

    def _replace_allocation(self, write: Store, target: TensorValue, value: Vec, alloc: ast.stmt) -> None:
        """``out = torch.empty(...)`` then the loop: ``out = V`` (cast to ``out``'s dtype, row-major as the loop
        leaves it)."""
        name = write.target
        self.m.fresh_output(name, alloc)
        if not rewrite.stands_alone(self.source, alloc):
            raise Doubt(f"`{name}`'s allocation shares its line")
        if len(target.shape) >= 2 and layout.is_contiguous(target.shape, target.strides) is not True:
            raise Doubt(f"`{name}` may not be row-major (`*_like` copies its model's layout), the vectorized result is")
        self._device_check(write, target)
        vec = value
        if vec.dtype != target.dtype:
            if not vec.exact_cast:
                raise Doubt("the branches have different dtypes from the output")
            vec = replace(vec, text=f"{vec.atom()}.to({self.torch()}.{target.dtype.short})", prec=ATOM, base=None,
                          fresh=True, whole=vec.whole.with_(dtype=target.dtype))
        if target.requires_grad:
            raise Doubt(f"`{name}` requires grad")
        text = self.m.new_row_major(vec).text
        if write.value_node is not None and len(self.levels) == 2 and vec is value:
            outer = self.batcher.contraction(write.value_node, [])
            if outer is not None and outer.startswith(f"{self.torch()}.outer("):
                text = outer
        self.deletes.append(alloc)
        line = f"{name} = {text}"
        self.lines.append(line)
        self.summary.append(line)

    def _store_gathered(self, write: Store, target: TensorValue, plan: dict) -> None:
        """``out[i, labels[i]] = v``: one advanced-index write; the loop index makes every slot distinct."""
        b = self.batcher
        if len(self.levels) != 1:
            raise Refuse("a gathered store inside nested loops")
        value = write.value
        walks = plan["walks"]
        if not walks and value.batched and not self._distinct_slots(write, plan):
            if write.target in b.target_reads:  # `memory[y[i]] = 0.9 * memory[y[i]] + ...`: an EMA per slot
                raise Refuse(f"two elements may update the same slot of `{write.target}`, the later one reading what "
                             "the earlier wrote (a recurrence per slot)")
            raise Refuse("two elements may write the same slot, and the loop keeps the last")
        if plan["ragged"] is not None:
            raise Refuse("a gathered store into a ragged slice")
        masked = self._masked_rows(write, target, plan)
        if masked is not None:
            self.lines.append(masked)
            self.summary.append(masked)
            return
        rows = self._rows_of_indices(write, plan)
        if rows is not None:
            self.lines.append(rows)
            self.summary.append(rows)
            return
        texts = _index_texts(b, plan, walks, "store")
        if any(t is None for t in texts):
            raise Refuse("a store index not understood")
        # advanced indices must be adjacent (with ints between them counting as advanced too)
        first_advanced = min([w[4] for w in walks] + [g[0] for g in plan["gathers"]])
        if any(isinstance(item, slice) for position, item in plan["basics"] if position < first_advanced):
            raise Refuse("a store whose gathered index comes after a slice")
        if write.cond is not None:
            raise Refuse("a conditional gathered store")
        self._write_checks(write, target)
        if not _fits(value, target):
            raise Doubt(f"the values do not fit `{write.target}`'s dtype")
        line = f"{write.target}[{', '.join(texts)}] = {self._same_dtype(value, target, write.target)}"
        self.lines.append(line)
        self.summary.append(line)

    def _distinct_slots(self, write: Store, plan: dict) -> bool:
        """``inv[perm[i]] = i``: the one gathered index is a permutation made before the loop (each slot once)."""
        from torchwise.vectorize.permutations import distinct_by_construction

        gathers = plan["gathers"]
        if len(gathers) != 1 or len(write.parts) != 1:
            return False
        position, index, _ = gathers[0]
        return index.batch_dims == 1 and index.rank == 0 and distinct_by_construction(
            self.ctx, self.m.scope, self.loop, write.parts[position])

    def _masked_rows(self, write: Store, target: TensorValue, plan: dict) -> Optional[str]:
        """``acts[i][acts[i] < 0] = 0`` over every row: each row's own boolean mask picks its slots for one number;
        the masks of all rows are the mask of the whole tensor (computed from the rows before any is written, as
        each iteration computes its row's before writing it): ``acts[acts < 0] = 0``."""
        walks, gathers, value = plan["walks"], plan["gathers"], write.value
        if len(self.levels) != 1 or len(walks) != 1 or len(gathers) != 1 or len(plan["items"]) != 2 \
                or value.batched or write.cond is not None:
            return None
        (k, dim, c1, c0, position), (g_position, mask, g_dim) = walks[0], gathers[0]
        if (position, dim, g_position, g_dim) != (0, 0, 1, 1) or not self._covers_dim0(target, walks[0]):
            return None
        if not (mask.is_tensor and mask.dtype is DType.bool and mask.batch_dims == 1 and not mask.lost
                and len(mask.shape) == len(target.shape) - 1
                and all(_certain(dims.dim_eq(a, b)) for a, b in zip(mask.shape, target.shape[1:]))):
            return None
        if not (value.is_tensor and value.rank == 0 or isinstance(value.elem, ScalarValue)) \
                or not _fits(value, target):
            return None
        self._write_checks(write, target)
        return f"{write.target}[{mask.text}] = {value.text}"

    def _rows_of_indices(self, write: Store, plan: dict) -> Optional[str]:
        """``mask[i, scores[i].topk(k).indices] = True``: one number into several slots of each row, picked by a
        row of indices: one advanced-index write with the row numbers as a column (``arange(n)[:, None]``).
        Negative indices wrap as in the loop; a slot picked twice gets the same number."""
        walks, gathers, value = plan["walks"], plan["gathers"], write.value
        if len(walks) != 1 or len(gathers) != 1 or len(plan["items"]) != 2 or value.batched \
                or write.cond is not None:
            return None
        (k, dim, c1, c0, position), (g_position, index, g_dim) = walks[0], gathers[0]
        if (position, dim, g_position, g_dim, k) != (0, 0, 1, 1, 0) or index.deps != frozenset({0}) \
                or not (index.is_tensor and index.rank == 1 and index.batch_dims == 1 and index.dtype is not None
                        and index.dtype in (DType.int64, DType.int32)):
            return None
        target = self.ctx.value(_base_of(write.node))
        if not (value.is_tensor and value.rank == 0 or isinstance(value.elem, ScalarValue)) \
                or not _fits(value, target):
            return None
        self._write_checks(write, target)
        rows = self.batcher._walk_indices(("walk", k, c1, c0))
        return f"{write.target}[{wrap(rows, precedence_of(rows), ATOM)}[:, None], {index.text}] = {value.text}"

    def _store_ragged(self, write: Store, target: TensorValue, plan: dict) -> None:
        """``mask[b, :n[b]] = True`` / ``x[b, n[b]:] = 0``: the slots of each row up to (from) its own bound, as one
        comparison with ``torch.arange`` (Python's slice rules: a negative bound counts from the end)."""
        b = self.batcher
        walks = plan["walks"]
        position, dim, part = plan["ragged"]
        value = write.value
        if len(self.levels) != 1 or len(walks) != 1 or walks[0][1] != 0 or dim != 1 or position != 1:
            raise Refuse("a ragged store other than `out[b, :n[b]]`")
        if value.batched:
            raise Refuse("a ragged store of values that depend on the loop")
        if write.cond is not None:
            raise Refuse("a conditional ragged store")
        if not self._covers_dim0(target, walks[0]):
            raise Refuse("a ragged store into part of the rows")
        if any(not (isinstance(item, slice) and item == slice(None)) for p, item in plan["basics"]):
            raise Refuse("a ragged store with other indices")
        lower, upper = part.lower, part.upper
        if lower is None and upper is None:
            raise Refuse("a ragged slice without bounds")
        # (comparison, bound) per given bound: `x[b, lo[b]:hi[b]]` is the positions >= lo and < hi (each bound
        # counted from the end when negative, as Python does; an empty slice when hi <= lo)
        bounds = ([(">=", b(lower))] if lower is not None else []) + ([("<", b(upper))] if upper is not None else [])
        for _, bound in bounds:
            if not (bound.batched and ((bound.is_tensor and bound.rank == 0 and bound.dtype is not None
                                        and is_integral(bound.dtype) and bound.dtype not in (DType.uint8,))
                                       or (bound.python and bound.elem.kind == "int"))):
                raise Refuse("a slice bound that is not one integer per row")
        size_text = f"{write.target}.shape[1]"  # the row length, as the program sizes it
        torch = self.torch()
        mask = self._ragged_mask(f"{torch}.arange({size_text})", size_text, bounds)
        alloc = proof.binding_before(self.ctx, self.loop, write.target)
        fresh = self._ragged_mask_alone(write, target, alloc, value, bounds)
        if fresh is not None:
            self.lines.append(fresh)
            self.summary.append(fresh)
            return
        self._write_checks(write, target)
        if not _fits(value, target):
            raise Doubt(f"the values do not fit `{write.target}`'s dtype")
        line = f"{write.target}[{mask}] = {self._same_dtype(value, target, write.target)}"
        self.lines.append(line)
        self.summary.append(line)

    def _ragged_mask(self, positions: str, length: str, bounds: list) -> str:
        """``positions < n[:, None]`` (``>=`` for a lower bound; both, and-ed, for two)."""
        parts = []
        for compare, bound in bounds:
            exact = f"{bound.text}[:, None]" if self._nonnegative(bound.text) else \
                f"{self.torch()}.where({bound.text} < 0, {bound.atom()} + {length}, {bound.text})[:, None]"
            parts.append(f"{positions} {compare} {exact}")
        return parts[0] if len(parts) == 1 else " & ".join(f"({p})" for p in parts)

    def _ragged_mask_alone(self, write, target: TensorValue, alloc, value: Vec, bounds: list):
        """``mask = torch.zeros(B, T, dtype=torch.bool)`` then ``mask[b, :n[b]] = True`` for every row: the mask is
        the comparison itself (``mask = torch.arange(T) < n[:, None]``), no zeros and no masked write. Its shape
        is (B, T): ``n`` has one bound per row (the walk covers dim 0) and the arange is the row's length."""
        if alloc is None or not isinstance(alloc.value, ast.Call) or target.dtype is not DType.bool \
                or value.text != "True" or len(target.shape) != 2 or target.requires_grad:
            return None
        call = alloc.value
        if self.m.scope.qualname(call.func) != "torch.zeros" or any(k.arg != "dtype" for k in call.keywords):
            return None
        sizes = call.args[0].elts if len(call.args) == 1 and isinstance(call.args[0], (ast.Tuple, ast.List)) \
            else call.args
        if len(sizes) != 2 or not isinstance(sizes[1], (ast.Name, ast.Constant)) or \
                isinstance(sizes[1], ast.Name) and sizes[1].id in self.batcher.loop_names:
            return None
        if self.batcher.devices - {"cpu"} or self.batcher.unknown_device or target.device != "cpu":
            return None  # `torch.arange` is made on the CPU
        try:
            self.m.fresh_output(write.target, alloc)
        except Doubt:
            return None
        length = self.source.text_of(self.source.span(sizes[1]))
        self.deletes.append(alloc)
        positions = f"{self.torch()}.arange({length})"
        if len(bounds) == 2:
            positions = self.fresh_name("pos")
            self.lines.append(f"{positions} = {self.torch()}.arange({length})")
        return f"{write.target} = {self._ragged_mask(positions, length, bounds)}"

    def _covers_dim0(self, target: TensorValue, walk) -> bool:
        k, dim, c1, c0, _ = walk
        level = self.levels[k]
        return (c1, c0) == (1, 0) and level.step == 1 and _certain(dims.dim_eq(level.start, 0)) \
            and _certain(dims.dim_eq(level.count, target.shape[0]))

    def _write_checks(self, write, target: TensorValue) -> None:
        """What one write into ``target`` needs: a target not freshly allocated right before the loop shares no
        memory with what the loop reads; an uninitialized one is wholly written before it is read; and the
        values are on its device."""
        alloc = proof.binding_before(self.ctx, self.loop, write.target)
        if alloc is None or not self._fresh_allocation(alloc.value):
            self._in_place_allowed(write)
        elif self._alloc_is_empty(alloc):
            self._uninitialized_ok(write)
        self._device_check(write, target)

    def _in_place_allowed(self, write) -> None:
        """Writing into a tensor while the loop reads others: none of them may share its memory. Certain when
        the target is freshly allocated right before the loop (nothing could have taken a view of it), or when
        the loop reads no other tensor."""
        name = write.target
        target = self.ctx.value(_base_of(write.node)) if hasattr(write, "node") else None
        others = {n for n in self.batcher.read_tensors() if n != name and self.m.is_tensor_name(n)
                  and not _other_kind(self.m.facts_of(n), target)}
        if others and not self.m.allocated_apart(name, others):
            view = next((n for n in sorted(others) if self._view_of(n, name)), None)
            if view is not None:  # `xt = x.T`: each iteration reads what the earlier ones wrote (a recurrence)
                raise Inherent(f"`{view}` is a view of `{name}`: the loop reads elements it has already written")
            raise Doubt(f"`{sorted(others)[0]}` and `{name}` may share memory, and the loop reads one while writing "
                        f"the other")
        if proof.inside_try(self.ctx, self.loop, self.m.scope_node):
            raise Doubt("an exception handler could see the half-written result")

    def _view_of(self, name: str, target: str) -> bool:
        """``name`` is bound once, in this scope, to a view of ``target`` (``target.T``, ``target[1:]``,
        ``target.transpose(0, 1)``): its memory is the target's, certainly."""
        owner = self.m.scope.owner_of(name)
        bindings = owner.bindings.get(name, ()) if owner is self.m.scope else ()
        value = getattr(bindings[0], "value", None) if len(bindings) == 1 else None
        facts = self.m.facts_of(name)
        memory = getattr(facts, "memory", None) or ""
        while isinstance(value, (ast.Attribute, ast.Subscript)) or isinstance(value, ast.Call) \
                and isinstance(value.func, ast.Attribute):
            value = value.func.value if isinstance(value, ast.Call) else value.value
        return isinstance(value, ast.Name) and value.id == target and memory.startswith("a view")

    def _uninitialized_ok(self, write) -> None:
        """A masked or partial write keeps the allocation: the slots it skips hold what ``torch.empty`` made,
        in the loop and in the rewrite alike."""

    def _alloc_is_empty(self, alloc) -> bool:
        return alloc is not None and isinstance(alloc.value, ast.Call) and \
            self.m.scope.qualname(alloc.value.func) in ("torch.empty", "torch.empty_like")

    def _fresh_allocation(self, value: ast.expr) -> bool:
        return self.m.fresh_allocation(value)

    def _device_check(self, write, target: TensorValue) -> None:
        """A write in place copies across devices as the loop's stores do; only a replaced output must be made on
        the device it was allocated on."""

    def replaceable(self, target: TensorValue, value: Vec) -> bool:
        """``out = V`` instead of writing into ``out``: V must be on ``out``'s device and cast to its dtype, which
        needs both known (an input known only by rank may live anywhere)."""
        if not _known(target) or self.batcher.unknown_device or value.dtype is None:
            return False
        return not (self.batcher.devices - {target.device})

    # -- res.append(v) -------------------------------------------------------------------------------------
    def append(self, write: Append) -> None:
        value = write.value
        if not value.batched:
            raise Refuse("appending a loop-invariant value")
        if len(self.levels) != 1:
            raise Refuse("appending inside nested loops")
        stacked = self.m.stacked_after(write.name)
        if stacked is None:
            raise Refuse(f"`{write.name}` is not stacked, concatenated or converted right after the loop")
        after, call, init, how = stacked
        mask = None
        if write.cond is not None:
            mask = write.cond
        if mask is not None and write.value_node is not None:
            chosen = self.batcher.selected(write.value_node, mask)
            if chosen is not None:
                value, mask = chosen, None
                text, prec = self.converted(value, how, None, call, filtered=True)
            else:
                if self.batcher.gathers_in(write.value_node):
                    raise Refuse("a read at a data-dependent index of elements the loop skips (it may be out of "
                                 "range there)")
                text, prec = self.converted(value, how, mask, call)
        else:
            text, prec = self.converted(value, how, mask, call)
        mask = write.cond
        if mask is not None:
            self.codes.append("TW403")
        else:
            self.codes.append("TW406" if self.levels[0].kind == "list" else "TW401")
        if mask is None and how in ("stack", "cat") and self.levels[0].kind != "list":
            self.empty(f"`torch.{how}([])` raises where the vectorized code would not")
        self.deletes.append(init)
        if after is None:  # the list itself is the result: bound where the loop was
            self.lines.append(f"{write.name} = {text}")
        else:
            self.after = (self.after or []) + [(after, call, text, prec)]
        self.summary.append(text)

    def converted(self, value: Vec, how: str, mask: Optional[Vec], call: Optional[ast.Call],
                  filtered: bool = False) -> tuple:
        """The text of ``torch.stack(res)`` (``cat``, ``tensor``, the list itself) for the appended values."""
        torch = self.torch()
        if value.parts is not None:
            raise Refuse("appending tuples")
        if value.python:
            if how == "list":
                base = self._selected(value, mask)
                return f"{_as_python_kind(base, torch)}.tolist()", ATOM
            if how == "tensor":
                kind = value.elem.kind
                dtype = {"float": self.m.default_float, "int": DType.int64, "bool": DType.bool}.get(kind)
                if dtype is None:
                    raise Refuse("the default dtype is unknown")
                if dtype != self.m.default_float and (mask is not None or filtered or not proof.certainly_positive(
                        self.levels[0].count)):
                    raise Doubt("an empty list gives the default dtype, not the numbers' one")
                base = self._selected(value, mask)
                text = base.atom()
                if base.whole.dtype != dtype:
                    text = f"{text}.to({torch}.{dtype.short})"
                elif base.fresh is False:
                    text = f"{text}.clone()"
                if self.batcher.grad:
                    text = f"{text}.detach()" if "clone" not in text else text.replace(".clone()", ".detach().clone()")
                return text, ATOM
            raise Refuse(f"`torch.{how}` of Python numbers")
        if not value.is_tensor:
            raise Refuse("appending something that is not a tensor")
        if not value.exact_cast:
            raise Refuse("a choice between values of different dtypes, collected")
        if how == "tensor":
            if value.rank != 0:
                raise Refuse("`torch.tensor` of tensors that are not 0-d raises")
            if value.whole.device != "cpu":
                raise Doubt("`torch.tensor` makes a CPU tensor")
            if self.batcher.grad:
                raise Doubt("`torch.tensor` cuts the autograd graph the vectorized code would keep")
            if (mask is not None or filtered) and value.dtype != self.m.default_float:
                raise Doubt("an empty list gives the default dtype, not the elements'")
            base = self._selected(value, mask)
            laid = self.m.new_row_major(base)
            return laid.text, laid.prec
        if how == "stack":
            base = self._selected(value, mask)
            self.m.stack_layout(base)
            laid = self.m.new_row_major(base)
            return laid.text, laid.prec
        if how == "cat":
            if value.rank == 0:
                raise Refuse("`torch.cat` of 0-d tensors raises")
            dim = self.m.cat_dim(call)
            if dim != 0:
                raise Refuse("`torch.cat` along another dim")
            base = self._selected(value, mask)
            if value.lost:
                raise Refuse("concatenating values with leading dims from an invariant operand")
            text = f"{base.atom()}.flatten(0, 1)"
            if not base.row_major:
                text = f"{text}.contiguous()"
            return text, ATOM
        if how == "list":
            raise Inherent("a list of tensors kept as a list")
        raise Refuse(f"`{how}` of the list")

    def _selected(self, value: Vec, mask: Optional[Vec]) -> Vec:
        if mask is None:
            return value
        if value.lost:
            raise Refuse("a filter of values with leading dims from an invariant operand")
        text = value.base if value.base is not None else value.atom()
        shape = (dims.Sym.fresh("k"),) + tuple(value.whole.shape[1:])
        return replace(value, text=f"{wrap(text, ATOM, ATOM)}[{mask.text}]", prec=ATOM, base=None, fresh=True,
                       whole=value.whole.with_(shape=shape, strides=layout.contiguous_strides(shape)), moved=None,
                       keepdim=None)

    # -- s += v ----------------------------------------------------------------------------------------------
    def _summed_outer(self, node: ast.expr) -> Optional[str]:
        """``C += torch.outer(x[i], y[i])`` over the rows: ``X.T @ Y``, one matrix product (no (N, d, d) products)."""
        if not (isinstance(node, ast.Call) and self.m.scope.qualname(node.func) == "torch.outer" and len(node.args) == 2
                and not node.keywords):
            return None
        a, b = (self.batcher(arg) for arg in node.args)
        if not all(v.batched and v.is_tensor and v.rank == 1 and v.batch_dims == 1 and not v.lost and v.dtype is not None
                   and is_floating(v.dtype) for v in (a, b)):
            return None
        return f"{a.atom()}.T @ {b.atom()}"

    def accumulate(self, write: Accumulate) -> None:
        if write.scanned:
            self.scan(write)
            return
        name, value = write.name, write.value
        self.codes.append("TW405")
        if write.op in ("max", "min"):
            raise Refuse(f"a running {write.op}imum kept only at the end (only its values per step are a scan)")
        init = proof.binding_before(self.ctx, self.loop, name)
        start = self.ctx.value(init.value) if init is not None else None
        if not value.batched:
            if write.cond is not None and isinstance(value.elem, ScalarValue) and value.elem.kind == "int" \
                    and write.op in ("+", "-"):
                self._count(write, init, start)
                return
            if write.cond is None and isinstance(value.elem, ScalarValue) and value.elem.kind == "int" \
                    and write.op in ("+", "-"):
                self._repeated(write, init, start)
                return
            raise Refuse(f"`{name}` adds the same value every time")
        if value.parts is not None or not value.exact_cast:
            raise Refuse("an accumulation of a choice between values of different dtypes")
        if value.batch_dims != len(self.levels) or value.lost:
            raise Refuse(f"`{name}` accumulates a value that does not vary along every loop")
        selected = self._masked_for_sum(value, write.cond, write.op)
        total, total_facts = self.reduction(selected, write.op)
        if write.cond is None and write.op in ("+", "-") and value.rank == 0 and not value.python:
            contraction = self.batcher.contraction(write.node, list(range(len(self.levels))))
            if contraction is not None:
                total = contraction
        if write.cond is None and write.op == "+" and len(self.levels) == 1 and value.rank == 2:
            total = self._summed_outer(write.node) or total
        python_start = isinstance(start, ScalarValue) and start.kind in ("int", "float")
        if python_start and not value.python:
            self.needs_additions(write, f"`{name}` would stay a Python number")
        if not (python_start or isinstance(start, TensorValue) and init is not None
                and self.m.fresh_factory(init.value)):
            raise Doubt(f"the starting value of `{name}` is unknown")
        if isinstance(start, TensorValue) and write.augmented:
            # added in place: the result keeps `name`'s dtype and shape, in the loop and vectorized
            if start.shape is None or len(start.shape) != value.rank \
                    or any(not _certain(dims.dim_eq(a, c)) for a, c in zip(start.shape, value.shape)):
                raise Doubt(f"`{name}` has another shape than what the loop adds to it")
            line = f"{name} {write.op}= {total}"
        else:
            line = self._combine(name, write, total, total_facts, init, start)
        self.lines.append(line)
        self.summary.append(line)

    def _combine(self, name: str, write: Accumulate, total: str, total_facts, init, start) -> str:
        """``s = total`` where the starting value adds nothing and the types agree, else ``s += total``: the
        result must have the type the loop's one-at-a-time updates give it."""
        oracle = self.batcher.oracle
        node = _binop(write.op)
        looped = oracle.binary(node, start, write.value.elem)
        again = oracle.binary(node, looped, write.value.elem) if looped is not None else None
        if looped is None or again is None or _kind(looped) != _kind(again):
            raise Refuse(f"the type of `{name}` changes from one iteration to the next")
        if _kind(looped) != _kind(start):  # `s = s + v` of a float32 `s` and float64 `v`: the first step promotes
            self.needs_additions(write, f"`{name}` keeps its starting {_kind_words(start)}")
        literal = init.value
        neutral = isinstance(literal, ast.Constant) and not isinstance(literal.value, bool) and \
            literal.value == (1 if write.op == "*" else 0)
        in_tuple = getattr(init, "_tw_part_of", None) is not None  # `a, b = 0, 0`: kept (it binds the other name)
        if neutral and (in_tuple or self.m.deletable(init) is not None) and _kind(total_facts) == _kind(looped):
            if not in_tuple:
                self.deletes.append(init)
            if write.op == "-":
                # `0.0 - total` is a tensor op on a wrapped number (twice the cost of the sum it negates)
                return f"{name} = -{wrap(total, precedence_of(total), UNARY)}"
            return f"{name} = {total}"
        kept = oracle.binary(node, start, total_facts)
        if kept is None or _kind(kept) != _kind(looped):
            raise Refuse(f"`{name}` would have another type than the loop gives it")
        if write.augmented:
            return f"{name} {write.op}= {total}"
        return f"{name} = {name} {write.op} {wrap(total, precedence_of(total), TERM + 1)}"

    def _count(self, write: Accumulate, init, start) -> None:
        """``if c: n += 1``: the number of elements passing the test (times the step)."""
        name = write.name
        if not (isinstance(start, ScalarValue) and start.kind in ("int", "float")):
            raise Refuse(f"the starting value of `{name}` is not a number")
        if self.m.scope.owner_of("int") is not None:
            raise Refuse("`int` is not the builtin here")
        cond = write.cond
        if cond.batch_dims != len(self.levels):
            raise Refuse("a condition that does not vary along every loop")
        counted = f"int({cond.atom()}.sum())"
        step = write.value
        if step.text not in ("1",):
            counted = f"{step.atom()} * {counted}"
        zero = isinstance(init.value, ast.Constant) and type(init.value.value) is int and init.value.value == 0
        if zero and write.op == "+" and self.m.deletable(init) is not None and \
                (start.kind == "int" or step.elem.kind == "float"):
            self.deletes.append(init)
            line = f"{name} = {counted}"
        else:
            line = f"{name} {write.op}= {counted}" if write.augmented else f"{name} = {name} {write.op} {counted}"
        self.lines.append(line)
        self.summary.append(line)

    def _repeated(self, write: Accumulate, init, start) -> None:
        """``count += img.shape[1] * img.shape[2]``: the same Python int added on every iteration, to a Python int:
        that int times the number of iterations, exactly (Python ints do not round)."""
        name = write.name
        if not (isinstance(start, ScalarValue) and start.kind == "int"):
            raise Refuse(f"`{name}` adds the same value every time, to a start that is not a Python int")
        counts = [level.count_text for level in self.levels]
        if any(count is None for count in counts):
            raise Refuse(f"`{name}` adds the same value every time, a number of times not known here")
        total = " * ".join([write.value.atom()] + [wrap(count, precedence_of(count), UNARY) for count in counts])
        zero = isinstance(init.value, ast.Constant) and type(init.value.value) is int and init.value.value == 0
        if zero and write.op == "+" and self.m.deletable(init) is not None:
            self.deletes.append(init)
            line = f"{name} = {total}"
        else:
            line = f"{name} {write.op}= {total}" if write.augmented else f"{name} = {name} {write.op} ({total})"
        self.lines.append(line)
        self.summary.append(line)

    def _masked_for_sum(self, value: Vec, cond: Optional[Vec], op: str) -> Vec:
        if cond is None:
            return value
        if cond.batch_dims != len(self.levels):
            raise Refuse("a condition that does not vary along every loop")
        return self._selected(value, cond)

    def reduction(self, value: Vec, op: str) -> tuple:
        """One reduction of ``value`` over its loop dims: (text, the facts of the result)."""
        torch = self.torch()
        depth = len(self.levels)
        over = "" if value.rank == 0 else ("0" if depth == 1 else f"dim={tuple(range(depth))}")
        if value.python:
            kind = value.elem.kind
            if op == "*":
                raise Refuse("a product of Python numbers")
            if kind == "float":
                inner = f"dtype={torch}.float64" if not over else f"{over}, dtype={torch}.float64"
                return f"{value.atom()}.sum({inner}).item()", ScalarValue("float")
            if kind in ("int", "bool"):
                if value.whole.dtype is DType.bool:
                    return f"int({value.atom()}.sum())", ScalarValue("int")
                return f"{value.atom()}.sum({over}).item()", ScalarValue("int")
            raise Refuse("a sum of Python values")
        dtype = value.dtype
        if dtype not in _SUM_DTYPES and not (dtype is not None and is_integral(dtype, True)):
            raise Doubt(f"adding {dtype.short if dtype else '?'} values one at a time rounds differently from one sum")
        name = "prod" if op == "*" else "sum"
        if op == "*" and (value.rank != 0 or depth != 1):
            raise Refuse("a product of slices")
        args = over
        result = DType.int64 if is_integral(dtype, True) else dtype
        if is_integral(dtype, True) and dtype not in (DType.int64, DType.bool):
            args = f"{over + ', ' if over else ''}dtype={torch}.{dtype.short}"
            result = dtype
        facts = value.elem.with_(dtype=result, shape=tuple(value.shape), strides=layout.contiguous_strides(
            tuple(value.shape)))
        matrix = _diagonal_of(value.text)
        if matrix is not None and name == "sum" and not args and len(value.whole.shape) == 1 \
                and (is_floating(dtype) or dtype is DType.int64):
            # the sum of a matrix's diagonal is its trace: one op (no bool trace; narrower ints sum with a dtype)
            return f"{matrix}.trace()", facts
        return f"{value.atom()}.{name}({args})", facts

    def needs_iterations(self, what: str) -> None:
        count = self.levels[0].count if len(self.levels) == 1 else None
        if count is None or not proof.certainly_positive(count):
            raise Doubt(f"the loop may run zero times, and then {what}")

    def needs_additions(self, write: Accumulate, what: str) -> None:
        """The first update changes the accumulator's type: it must happen. Under an ``if`` nothing proves that one
        element passes the test (``total = 0`` then ``if c: total += v.item()`` stays the int 0 where none does)."""
        if write.cond is not None:
            raise Doubt(f"no element may pass the `if`, and then {what}")
        self.needs_iterations(what)

    def empty(self, what: str) -> None:
        count = self.levels[0].count
        if count is None or not proof.certainly_positive(count):
            raise Doubt(f"the loop may run zero times, and then {what}")

    # -- scans ------------------------------------------------------------------------------------------------
    def scan(self, write: Accumulate) -> None:
        """The accumulator is read again in the body: its values per iteration are a scan, it is not kept."""
        self.codes.append("TW405")
        init = proof.binding_before(self.ctx, self.loop, write.name)
        if init is None or self.m.deletable(init) is None:
            raise Doubt(f"`{write.name}`'s starting value is not right before the loop")
        if proof.read_outside(self.m.scope_node, self.loop, write.name):
            raise Doubt(f"`{write.name}` is read after the loop")
        self.deletes.append(init)

    def in_place_scan(self, write: InPlaceScan) -> None:
        self.codes.append("TW405")
        level = self.levels[0]
        target = self.ctx.value(write.stmt.target.value)
        if not _known(target) or not target.shape:
            raise Doubt(f"`{write.target}`'s dtype or shape is unknown")
        if not (_certain(dims.dim_eq(level.start, 1)) and level.step == 1
                and _certain(dims.dim_eq(level.count + 1, target.shape[0]))):
            raise Refuse("a prefix recurrence over part of the tensor")
        if target.dtype not in _SUM_DTYPES and not is_integral(target.dtype):
            raise Doubt(f"a scan of {target.dtype.short} rounds differently one step at a time")
        self._in_place_allowed(write)
        name = "cumsum_" if write.op == "+" else "cumprod_"
        line = f"{write.target}.{name}(0)"
        self.lines.append(line)
        self.summary.append(line)

    _SCANS = {"+": "cumsum({}, 0)", "*": "cumprod({}, 0)", "max": "cummax({}, 0).values", "min": "cummin({}, 0).values"}

    def store_scan(self, write: StoreScan) -> None:
        """``out[i] = out[i - 1] + v[i]``: the slots from the first one on are the scan of the first slot's value
        followed by the values, ``out[:] = torch.cumsum(torch.cat([out[:1], V]), 0)`` (backwards: from the last slot,
        flipped). The same additions in the same order, for float32/float64 and int64/int32 (ints wrap alike)."""
        self.codes.append("TW401")
        level, value = self.levels[0], write.value
        target = self.ctx.value(_base_of(write.node))
        if not _known(target) or not target.shape:
            raise Doubt(f"`{write.target}`'s dtype or shape is unknown")
        size = target.shape[0]
        if write.forward:
            covers = level.step == 1 and _certain(dims.dim_eq(level.start, 1))
        else:
            covers = level.step == -1 and _certain(dims.dim_eq(level.start + 2, size))
        if not (covers and _certain(dims.dim_eq(level.count + 1, size))):
            raise Refuse("a running recurrence over part of the tensor")
        if target.dtype not in (DType.float32, DType.float64, DType.int64, DType.int32):
            raise Doubt(f"a scan of {target.dtype.short} rounds differently one step at a time")
        if not (value.is_tensor and value.batched and value.batch_dims == 1 and not value.lost
                and value.dtype is target.dtype and len(value.shape) == len(target.shape) - 1
                and all(_certain(dims.dim_eq(a, b)) for a, b in zip(value.shape, target.shape[1:]))):
            raise Refuse(f"the values combined into `{write.target}` are not its slots' shape and dtype")
        self._in_place_allowed(write)
        self._device_check(write, target)
        first = f"{write.target}[:1]" if write.forward else f"{write.target}[-1:]"
        scan = f"{self.torch()}." + self._SCANS[write.op].format(f"{self.torch()}.cat([{first}, {value.text}])")
        line = f"{write.target}[:] = {scan if write.forward else wrap(scan, ATOM, ATOM) + '.flip(0)'}"
        self.lines.append(line)
        self.summary.append(line)

    def _scatter_spans_nest(self, write: Scatter, plan: dict) -> bool:
        """``counts[i, tok] += 1`` inside ``for i ...: for tok in docs[i]``: the indices, broadcast, take one slot per
        iteration of the nest (every loop dim is followed by some index), so one accumulating ``index_put_`` adds
        what the loop adds. Unconditional only."""
        if write.cond is not None:
            return False
        followed = {w[0] for w in plan["walks"]}
        for _, gathered, _ in plan["gathers"]:
            followed |= set(gathered.deps)
        return followed == set(range(len(self.levels)))

    # -- out[idx[i]] += v -------------------------------------------------------------------------------------
    def scatter(self, write: Scatter) -> None:
        value = write.value
        target = self.ctx.value(_base_of(write.node))
        if not _known(target) or (value.is_tensor and value.dtype is None):
            raise Doubt(f"`{write.target}`'s (or the values') dtype is unknown: an in-place add may raise or cast")
        plan = self._slots(write.target, target, write.parts)
        if plan["kind"] == "walk":
            self._accumulate_walk(write, target, plan)
            return
        depth = len(self.levels)
        if plan["kind"] != "gather" or depth > 1 and not self._scatter_spans_nest(write, plan):
            raise Refuse("an accumulation into slots not understood")
        self.codes.append("TW401")
        if write.op not in ("+", "-"):
            raise Refuse("a scattered product")
        b = self.batcher
        texts = _index_texts(b, plan, plan["walks"], "scatter", depth)
        if any(isinstance(item, slice) and item != slice(None) for _, item in plan["basics"]) or \
                any(item is None for _, item in plan["basics"]):
            raise Refuse("a scatter with other indices")
        if plan["basics"] and max(p for p, _ in plan["basics"]) < max(g[0] for g in plan["gathers"]):
            raise Refuse("a scatter index after a slice")
        mask = write.cond
        indices = [t for t in texts if t != ":"]
        if any(t == ":" for t in texts[:len(indices)]):
            raise Refuse("a scatter with slices before its index")
        slot_rank = len(target.shape) - len(indices)
        if value.batched:
            if not value.is_tensor:
                raise Refuse("scattering Python numbers")
            vals = self.batcher.pad(value, slot_rank) if value.rank < slot_rank else value
            if vals.rank != slot_rank or value.lost:
                raise Refuse("scattered values of another shape than the slots")
            if value.dtype != target.dtype:
                if not (is_floating(target.dtype) and (is_integral(value.dtype, True) or
                                                       (is_floating(value.dtype)))):
                    raise Doubt(f"`{write.target}` {write.op}= values of another dtype")
                vals = replace(vals, text=f"{vals.atom()}.to({write.target}.dtype)", prec=ATOM)
            vtext = vals.text
        else:
            kind = getattr(value.elem, "kind", None)
            if isinstance(value.elem, TensorValue):
                raise Refuse("scattering a loop-invariant tensor")
            if kind == "float" and not is_floating(target.dtype):
                raise Doubt(f"adding a float to the integer `{write.target}` raises")
            if kind not in ("int", "float") or not (is_floating(target.dtype) or is_integral(target.dtype)):
                raise Refuse("a scattered value not understood")
            vtext = f"{write.target}.new_full((), {value.text})" if value.text not in ("1",) \
                else f"{write.target}.new_ones(())"
            if mask is not None:
                vtext = f"{vtext}.expand({mask.atom()}.sum())"
        if write.op == "-":
            vtext = f"-{wrap(vtext, ATOM, 14)}"
        if mask is not None:
            if mask.batch_dims != 1:
                raise Refuse("a condition that does not vary along the loop")
            indices = [f"{wrap(t, ATOM, ATOM)}[{mask.text}]" if not t.isidentifier() or True else t
                       for t in indices]
            if value.batched:
                vtext = f"{wrap(vtext, ATOM, ATOM)}[{mask.text}]"
        self._device_check(write, target)
        self._in_place_target_ok(write)
        line = f"{write.target}.index_put_(({', '.join(indices)},), {vtext}, accumulate=True)"
        if depth > 1:
            pass  # the indices broadcast over the loop dims: `index_add_` takes one 1-d index only
        elif value.batched and len(indices) == 1 and not plan["walks"] and len(plan["gathers"]) == 1:
            # rows added at their index: `index_add_`, its negative indices wrapped as Python's (past the end
            # they still raise, as the loop does)
            index = indices[0]
            size = f"{write.target}.shape[0]"
            wrapped = index if self._nonnegative(index) else \
                f"{self.torch()}.where({index} < 0, {wrap(index, ATOM, 12)} + {size}, {index})"
            line = f"{write.target}.index_add_(0, {wrapped}, {vtext})"
        elif value.batched is False and len(indices) == 1 and not plan["walks"] and len(plan["gathers"]) == 1 \
                and mask is None and self._nonnegative(indices[0]) and vtext == f"{write.target}.new_ones(())":
            # a histogram (`counts[t] += 1`): ones added at each index, as `index_add_` does it (half the cost of
            # an accumulating `index_put_`); only for indices known >= 0 (`index_add_` does not wrap)
            index = indices[0]
            line = f"{write.target}.index_add_(0, {index}, {write.target}.new_ones(()).expand({index}.shape[0]))"
        self.lines.append(line)
        self.summary.append(line)

    def _nonnegative(self, text: str) -> bool:
        """The index tensor named ``text`` holds no negative value (``ranges``): Python's wrap is the identity."""
        from torchwise.vectorize.ranges import nonnegative_name

        listed = re.fullmatch(rf"{re.escape(self.torch())}\.tensor\(([A-Za-z_]\w*)\)", text)
        if listed is not None:  # `torch.tensor(lengths)` of a list the walker proved unchanged: its known ints
            items = getattr(self.m.facts_of(listed.group(1)), "items", None)
            return bool(items) and all(isinstance(i, ScalarValue) and type(i.value) is int and i.value >= 0
                                       for i in items)
        return text.isidentifier() and nonnegative_name(self.ctx, self.m.scope, text)

    def _in_place_target_ok(self, write) -> None:
        alloc = proof.binding_before(self.ctx, self.loop, write.target)
        if alloc is None or not self._fresh_allocation(alloc.value):
            self._in_place_allowed(write)

    def _accumulate_walk(self, write: Scatter, target: TensorValue, plan: dict) -> None:
        """``out[i] += v`` (each slot its own): one in-place update; levels not in the index are summed
        (``C[i, j] += A[i, p] * B[p, j]`` is ``C += A @ B``)."""
        self.codes.append("TW401")
        value = write.value
        walks = plan["walks"]
        levels_written = plan["levels"]
        summed = [k for k in range(len(self.levels)) if k not in levels_written]
        if write.op not in ("+", "-") and (summed or write.op not in ("*", "/")):
            raise Refuse("an in-place product per slot")  # a product over a summed loop is a `prod`, not this
        if write.cond is not None:
            raise Refuse("a conditional accumulation per slot")
        if value.lost or not value.is_tensor:
            raise Refuse("an accumulation per slot not understood")
        order = [w[0] for w in sorted(walks, key=lambda w: w[1])]
        from torchwise.vectorize.vec import _index

        region = _index(target, plan["items"])
        walk_dims = _walk_result_dims(plan["items"], [w[1] for w in walks])
        # `X[:, j] *= w[j]`: one number per walked slot, the walked dims last: the numbers broadcast from the right
        trailing = walk_dims == list(range(len(region.shape) - len(walks), len(region.shape))) and not summed \
            and value.rank == 0 and (not value.batched or value.batch_dims == len(walks))
        if (walk_dims != list(range(len(walks))) and not trailing) or order != sorted(order):
            raise Refuse("an accumulation whose loop dims are out of order")
        slot_shape = tuple(s for i, s in enumerate(region.shape) if i not in walk_dims)
        text = value.text
        if summed:
            if value.batch_dims != len(self.levels) or any(k not in value.deps for k in summed):
                raise Refuse("an accumulation of a value that does not vary along the summed loop")
            if value.dtype not in _SUM_DTYPES:
                raise Doubt("adding values one at a time rounds differently from one sum")
            contraction = self.batcher.contraction(write.stmt.value, summed)
            if contraction is not None:
                text = contraction
            else:
                text = f"{value.atom()}.sum(dim={summed[0] if len(summed) == 1 else tuple(summed)})"
        if value.rank > len(slot_shape):
            raise Refuse("an accumulation of values larger than the slots")
        padded = value.rank < len(slot_shape)
        if padded and not trailing:
            # `Z[i] += w[i]` adds one number to each row: `w[:, None]`, not `w` (that lines up with the columns);
            # and it cannot replace `Z`'s zeros, whose shape it does not have
            if summed:
                raise Refuse("a sum per slot smaller than the slots")
            value = self.batcher.pad(value, len(slot_shape))
            text = value.text
        sel = _trim_selection(", ".join(plan["texts"]))
        view = f"{write.target}[{sel}]" if sel else write.target
        alloc = proof.binding_before(self.ctx, self.loop, write.target)
        full = self._covers(target, plan)
        zero_alloc = alloc is not None and isinstance(alloc.value, ast.Call) and \
            self.m.scope.qualname(alloc.value.func) in ("torch.zeros", "torch.zeros_like") and \
            self._fresh_allocation(alloc.value)
        if write.op == "/" and (target.dtype is None or not is_floating(target.dtype)):
            raise Inherent(f"`{write.target}` /= in place raises unless `{write.target}` is floating")
        if value.dtype is not None and target.dtype is not None \
                and category(value.dtype) > category(target.dtype):
            # `int_out[i] += float_row` raises (an in-place result cannot go down a category): so must the rewrite
            raise Inherent(f"`{write.target}` is {target.dtype.short} and the loop adds {value.dtype.short} into it "
                           f"in place, which raises")
        if full and zero_alloc and write.op == "+" and not sel and rewrite.stands_alone(self.source, alloc) \
                and layout.is_contiguous(target.shape, target.strides) is True and not padded:
            result_shape = tuple(target.shape)
            self.m.fresh_output(write.target, alloc)
            if value.dtype != target.dtype:
                text = f"({text}).to({self.torch()}.{target.dtype.short})"
            self.deletes.append(alloc)
            line = f"{write.target} = {text}"
            _ = result_shape
            if not _fresh_text(text) and not (text == value.text and value.fresh):
                line = f"{write.target} = {wrap(text, precedence_of(text), ATOM)}.clone()"
        else:
            if alloc is None or not self._fresh_allocation(alloc.value):
                self._in_place_allowed(write)
            line = f"{view} {write.op}= {text}"
        self._device_check(write, target)
        self.lines.append(line)
        self.summary.append(line)


# -- helpers ---------------------------------------------------------------------------------------------------
_IN_PLACE = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}


def _reads_name(text: str, name: str) -> bool:
    """The emitted expression ``text`` reads ``name`` (temporaries the batcher inlined are in it)."""
    try:
        return proof.mentions(ast.parse(text, mode="eval"), name)
    except SyntaxError:
        return True


def _diagonal_of(text: str) -> Optional[str]:
    """``A`` of ``A.diagonal()``, else None."""
    node = ast.parse(text, mode="eval").body
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "diagonal" \
            and not node.args and not node.keywords:
        matrix = ast.get_source_segment(text, node.func.value)
        return wrap(matrix, precedence_of(matrix), ATOM)
    return None


def _holds(dtype: Optional[DType], kind: Optional[str]) -> bool:
    """A tensor of ``dtype`` holds a Python number of ``kind`` as it is (``torch.full`` need not convert it)."""
    if dtype is None:
        return False
    if kind == "bool":
        return dtype is DType.bool
    if kind == "int":
        return dtype is not DType.bool and (is_integral(dtype) or is_floating(dtype))
    return kind == "float" and is_floating(dtype)


def _other_kind(value, target) -> bool:
    """Tensors of different element types (an int index tensor and a float target): sharing memory would take
    a reinterpreting ``.view(dtype)``, which a loop over elements does not do."""
    if not (isinstance(value, TensorValue) and isinstance(target, TensorValue)):
        return False
    if value.dtype is None or target.dtype is None:
        return False
    return (is_floating(value.dtype) != is_floating(target.dtype)) or value.dtype.short == "bool" != \
        (target.dtype.short == "bool")


def _unpacked(lines: list) -> list:
    """``a = T[0]`` and ``b = T[1]`` of one tuple-valued ``T`` (``x.topk(5, dim=1)``): ``a, b = T``, computed once."""
    import re

    out, taken = [], set()
    for index, line in enumerate(lines):
        if index in taken:
            continue
        first = re.fullmatch(r"(\w+) = (.+)\[0\]", line)
        if first is not None:
            twin = next((j for j in range(index + 1, len(lines)) if j not in taken
                         and re.fullmatch(rf"(\w+) = {re.escape(first.group(2))}\[1\]", lines[j])), None)
            if twin is not None:
                second = lines[twin].split(" = ", 1)[0]
                taken.add(twin)
                out.append(f"{first.group(1)}, {second} = {first.group(2)}")
                continue
        out.append(line)
    return out


def _live(prelude: list, lines: list) -> list:
    """The hoisted temporaries (``e_all = ...``) something later still reads: an idiom that replaced their use
    (``torch.softmax``) leaves them dead. Each is a fresh name computed by a pure translation."""
    kept = list(prelude)
    changed = True
    while changed:
        changed = False
        for i, line in enumerate(kept):
            name = line.split(" = ", 1)[0].strip()
            later = kept[i + 1:] + lines
            if name.isidentifier() and not any(re.search(rf"\b{re.escape(name)}\b", other) for other in later):
                del kept[i]
                changed = True
                break
    return kept


def _unwrapped(text: str) -> str:
    """``(a / b)`` -> ``a / b`` when the parentheses enclose the whole text."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for index, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if depth == 0 and index < len(text) - 1:
            return text
    return text[1:-1]


def _unmoved(facts: TensorValue, k: int) -> TensorValue:
    """The facts of a tensor whose dim ``k`` was moved first (``facts``), in its own dim order."""
    order = list(range(1, k + 1)) + [0] + list(range(k + 1, len(facts.shape)))
    return facts.with_(shape=tuple(facts.shape[d] for d in order),
                       strides=None if facts.strides is None else tuple(facts.strides[d] for d in order))


def _binop(op: str) -> ast.BinOp:
    kinds = {"+": ast.Add(), "*": ast.Mult(), "-": ast.Sub()}
    return ast.BinOp(left=ast.Constant(0), op=kinds[op], right=ast.Constant(0))


def _kind(value):
    """What a value is, for the type of a result: a Python kind, or a tensor's dtype and shape."""
    if isinstance(value, ScalarValue):
        return ("python", value.kind)
    if isinstance(value, TensorValue):
        return ("tensor", value.dtype, tuple(value.shape) if value.shape is not None else None)
    return None


def _kind_words(value) -> str:
    """What of a starting value the first update changes, for a refusal's message."""
    return f"type (`{value.kind}`)" if isinstance(value, ScalarValue) else "dtype and shape"


def _base_of(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node


def _fresh_text(text: str) -> bool:
    return "@" in text or ".sum(" in text or "einsum" in text


def _walk_result_dims(items: list, walk_input_dims: list) -> list:
    """Positions of the walked input dims in the result of basic indexing by ``items``."""
    dim, out = 0, 0
    positions = {}
    for item in items:
        if item is None:
            out += 1
            continue
        if isinstance(item, slice) or hasattr(item, "count"):
            positions[dim] = out
            out += 1
        dim += 1
    return [positions[d] for d in walk_input_dims if d in positions]


def _trim_selection(sel: str) -> str:
    parts = [p.strip() for p in sel.split(",")] if sel else []
    while parts and parts[-1] == ":":
        parts.pop()
    return ", ".join(parts)


def _broadcasts_to(shape: tuple, slot: tuple) -> bool:
    if len(shape) > len(slot):
        extra = shape[: len(shape) - len(slot)]
        if any(not (type(d) is int and d == 1) for d in extra):
            return False
        shape = shape[len(shape) - len(slot):]
    for a, b in zip(reversed(shape), reversed(slot)):
        if not (_certain(dims.dim_eq(a, b)) or (type(a) is int and a == 1)):
            return False
    return True


def _fits(value: Vec, target: TensorValue) -> bool:
    """A store casts to the target's dtype as ``copy_`` does, in the loop and vectorized alike; only a
    Python-level choice between dtypes would differ."""
    return value.exact_cast or value.dtype == target.dtype


def _target_names(target: ast.expr) -> list:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _index_texts(batcher, plan: dict, walks, what: str, depth: int = 1) -> list:
    """The texts of a store's (or scatter's) indices on whole tensors: each walked index an ``arange``, each
    gathered one the batched index itself, which must be one integer per element following the loop (in a nest,
    laid out along the loop dims it follows, so that the indices broadcast)."""
    texts = list(plan["texts"])
    for k, dim, c1, c0, position in walks:
        texts[position] = batcher._walk_indices(("walk", k, c1, c0))
    for position, gathered, dim in plan["gathers"]:
        if depth == 1 and gathered.deps != frozenset({0}) or depth > 1 and not (
                gathered.deps and gathered.batch_dims == depth and not gathered.lost):
            raise Refuse(f"a {what} index that does not follow the loop")
        if gathered.is_tensor:
            if not (gathered.rank == 0 and gathered.dtype is not None and is_integral(gathered.dtype)
                    and gathered.dtype is not DType.uint8):
                raise Refuse(f"a {what} index that is not one integer per element")
        elif not (gathered.python and gathered.elem.kind == "int"):
            raise Refuse(f"a {what} index that is not one integer per element")
        texts[position] = gathered.text
    return texts


def _as_python_kind(vec: Vec, torch: str) -> str:
    """The whole's text cast so that ``.tolist()`` gives the Python numbers of the element's kind: ``float()`` of
    an int tensor is a float (``.double()``, the same rounding), ``int()`` of a bool tensor an int (``.long()``)."""
    kind, dtype = vec.elem.kind, vec.whole.dtype
    if kind == "float" and not is_floating(dtype):
        return f"{vec.atom()}.double()"
    if kind == "int" and dtype is DType.bool:
        return f"{vec.atom()}.long()"
    return vec.atom()
