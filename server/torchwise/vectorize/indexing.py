"""Reading slices in a loop body: ``x[i]``, ``m[i, j]``, ``X[:, j]``, ``A[i, i]``, ``x[i + 1]``, ``emb[ids[i]]``,
``x[i:i + k]``, ``x[b, :n[b]]``, the loop index itself, and the rows of a list.

Each read becomes the whole tensor with the walked dims first, one per loop (``X[:, j]`` is ``X.T``,
``A[i, i]`` is ``A.diagonal()``, ``x[i + 1]`` is ``x[1:]``, a gather is advanced indexing with
``torch.arange``), after proving that every index the loop takes is inside its dim (Python wraps negative
indices and raises past the end; a slice would do neither).
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Optional

from torchwise.analysis import dims, layout, shapes
from torchwise.analysis.dtypes import DType, is_floating, is_integral
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue
from torchwise.vectorize.expr import ATOM, TERM, Inherent, Refuse, Unknown, wrap
from torchwise.vectorize.vec import (
    Vec, _SymSlice, _UNKNOWN, _certain, _clip, _dims_value, _drop, _index, _int, _row, _shaped, _slot_key,
    flatten_subscript, stacks_samples,
)


class Indexing:
    """The reads of a loop body's slices (part of ``batch.Batcher``)."""

    def index_value(self, k: int) -> Vec:
        """The loop index as a value: ``torch.arange(...)`` along loop dimension ``k``."""
        level = self.levels[k]
        if level.arange is None:
            raise Refuse("the loop index is used as a value, and its range has no known code")
        if level.arange_raises:
            raise Refuse("the range may be empty with its stop before its start, where `torch.arange` raises")
        device = self._arange_device()
        text = f"{self.torch}.{level.arange}"
        if device:
            if text.endswith(".flip(0)"):
                text = text[: -len(".flip(0)")].rstrip(")") + f", {device}).flip(0)"
            else:
                text = text.rstrip(")") + f", {device})"
        whole = TensorValue(DType.int64, (level.count,), "cpu" if not device else next(iter(self.devices)),
                            (1,), False, True)
        vec = Vec(text, ATOM, ScalarValue("int"), whole, frozenset({k}), python=True)
        return self._masked(self.place(vec, k))

    def _arange_device(self) -> str:
        devices = self.devices - {"cpu"}
        if not devices:
            return ""
        raise Refuse("the loop index is used as a value on a non-CPU device")

    def element_leaf(self, k: int, element, start=0, step=1, count=None) -> Vec:
        """The element variable of level ``k`` (or a walk of ``start + step * j``): its whole tensor."""
        whole = element.whole
        if element.kind in ("numbers", "tolist"):
            vec = Vec(element.text, ATOM, element.item, whole, frozenset({k}), fresh=element.fresh, python=True,
                      base=element.text)
            return self._masked(self.place(vec, k))
        if not _shaped(whole):
            raise Refuse("the walked tensor's shape is unknown")
        self.grad |= whole.requires_grad is not False
        self.reads.update(element.roots)
        self._device(whole)
        elem = _row(whole)
        vec = Vec(element.text, ATOM, elem, whole, frozenset({k}), base=element.text, fresh=element.fresh,
                  free=whole.dtype is None)
        return self._masked(self.place(vec, k))

    def _masked(self, vec: Vec) -> Vec:
        """In a filter's value, each walk keeps only the elements that pass (``x[mask]``): a new tensor."""
        if self.select is None:
            return vec
        mask, count = self.select
        shape = (count,) + tuple(vec.whole.shape[1:])
        whole = vec.whole.with_(shape=shape, strides=layout.contiguous_strides(shape))
        return replace(vec, text=f"{vec.atom()}[{mask}]", prec=ATOM, whole=whole, fresh=True, moved=None,
                       keepdim=None)

    def selected(self, node: ast.expr, mask: Vec) -> Optional[Vec]:
        """``node`` computed only for the elements where ``mask`` holds (every walk masked first), or None."""
        if self.depth != 1 or any(isinstance(n, ast.Name) and n.id in self.env for n in ast.walk(node)):
            return None
        other = type(self)(self.ctx, self.scope, self.levels, self.oracle, self.torch, self.bound)
        other.targets, other.lists = self.targets, self.lists
        other.select = (mask.text, dims.Sym.fresh("k"))
        try:
            return other(node)
        except Refuse:
            return None

    def place(self, vec: Vec, k: int) -> Vec:
        """A value along loop dimension ``k`` only: ``None`` dims for the later loop dimensions."""
        later = self.depth - 1 - k
        if later == 0:
            return vec
        text = f"{vec.atom()}[:{', None' * later}]"
        whole = vec.whole
        shape, strides = tuple(whole.shape), whole.strides
        for _ in range(later):
            strides = layout.unsqueeze_strides(shape, strides, 1) if strides is not None else None
            shape = shape[:1] + (1,) + shape[1:]
        return replace(vec, text=text, prec=ATOM, whole=whole.with_(shape=shape, strides=strides), base=None,
                       keepdim=None, moved=None)

    def _Subscript(self, node: ast.Subscript) -> Vec:
        chained = flatten_subscript(node)
        if chained is not None and not self.mentions_loop(chained[0]):
            return self.indexed_leaf(node, chained[0], chained[1])
        if self.mentions_loop(node.value):
            return self.index_batched(node)
        base = node.value
        parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        return self.indexed_leaf(node, base, parts)

    def index_batched(self, node: ast.Subscript) -> Vec:
        """``row[0]``, ``v[:, 1]``, ``pair[1]`` of a batched value: the index moves past the loop dims."""
        if isinstance(node.slice, ast.Constant) and node.slice.value == 0 and type(node.slice.value) is int:
            batch_of_one = self.batch_of_one(node, node.value)
            if batch_of_one is not None:
                return batch_of_one
        value = self(node.value)
        parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if value.parts is not None:
            if len(parts) == 1 and isinstance(parts[0], ast.Constant) and parts[0].value in (0, 1) \
                    and type(parts[0].value) is int:
                return value.parts[parts[0].value]
            raise Refuse("an index of a tuple result")
        size = _size_item(value, parts)
        if size is not None:
            return size
        if not value.is_tensor or not value.batched or value.ragged is not None:
            raise Refuse("an index of a body value that is not a tensor")
        if value.lost:
            raise Refuse("indexing a value whose loop-invariant operand added leading dims")
        if any(self.mentions_loop(p) for p in parts):
            return self._computed_gather(value, parts)
        items = [self._basic_item(p) for p in parts]
        try:
            elem_shape = shapes.index(value.elem.shape, [i for i, _ in items])
        except shapes.ShapeError:
            raise Refuse("an index outside the slice") from None
        if elem_shape is None:
            raise Refuse("an index not understood")
        lead = [":"] * value.batch_dims + [t for _, t in items]
        elem = value.elem.with_(shape=elem_shape, strides=layout.index_strides(value.elem.shape, value.elem.strides,
                                                                             [i for i, _ in items]))
        whole_items = [slice(None)] * value.batch_dims + [i for i, _ in items]
        whole = value.whole.with_(shape=shapes.index(value.whole.shape, whole_items),
                                  strides=layout.index_strides(value.whole.shape, value.whole.strides, whole_items))
        return Vec(_subscripted(value.atom(), lead), ATOM, elem, whole, value.deps, fresh=value.fresh,
                   exact_cast=value.exact_cast)

    def _computed_gather(self, value: Vec, parts: list) -> Vec:
        """``logp[targets[i]]`` of a value computed per element (``logp = F.log_softmax(logits[i], dim=0)``): the
        batched value indexed by the rows and the index tensor, ``logp_all[torch.arange(n), targets]``: advanced
        indexing takes each row's item as the loop does (a negative index wraps, one past the end raises)."""
        if self.depth != 1 or self.select is not None or len(parts) != 1 or isinstance(parts[0], ast.Slice):
            raise Refuse("an index that depends on the loop, into a computed value")
        level = self.levels[0]
        index = self(parts[0])
        if not (value.batch_dims == 1 and value.rank >= 1 and index.deps == frozenset({0}) and index.batch_dims == 1
                and not index.lost and level.count_text is not None):
            raise Refuse("an index that depends on the loop, into a computed value")
        if index.python:
            if not (isinstance(index.elem, ScalarValue) and index.elem.kind == "int" and index.whole.dtype is DType.int64):
                raise Refuse("an index into a computed value that is not an int")
        elif not (index.is_tensor and index.rank == 0 and index.dtype is DType.int64):
            raise Refuse("an index into a computed value that is not one int64 per element")
        device = self._arange_device()
        rows = f"{self.torch}.arange({level.count_text}{', ' + device if device else ''})"
        shape = (level.count,) + tuple(value.elem.shape[1:])
        whole = value.whole.with_(shape=shape, strides=layout.contiguous_strides(shape), memory=None)
        elem = _drop(whole, 1)
        return Vec(f"{value.atom()}[{rows}, {index.text}]", ATOM, elem, whole, value.deps | index.deps,
                   exact_cast=value.exact_cast)

    def _basic_item(self, part: ast.expr):
        """(the item for ``shapes.index``, its text) of a loop-invariant basic index part."""
        if isinstance(part, ast.Slice):
            bounds = []
            for bound in (part.lower, part.upper, part.step):
                if bound is None:
                    bounds.append(None)
                    continue
                value = _int(self.ctx, bound)
                if type(value) is not int:
                    raise Refuse("a slice bound that is not a known int")
                bounds.append(value)
            return slice(*bounds), self.src(part)
        if isinstance(part, ast.Constant) and part.value is None:
            return None, "None"
        if isinstance(part, ast.Constant) and part.value is Ellipsis:
            return Ellipsis, "..."
        value = _int(self.ctx, part)
        if value is None:
            facts = self.ctx.value(part)
            if not (isinstance(facts, ScalarValue) and facts.kind == "int"):
                raise Refuse("an index that is not a known int")
            value = dims.Sym.fresh("i")  # an int of unknown value: the same select in the loop and vectorized
        self.check_pure(part)
        return value, self.src(part)

    # -- x[i], m[i, j], X[:, j], A[i, i], x[i + 1], emb[ids[i]] ------------------------------------------
    def indexed_leaf(self, node: ast.Subscript, base_node: ast.expr, parts: list) -> Vec:
        base_value = self.ctx.value(base_node)
        if isinstance(base_node, ast.Name) and base_node.id in self.targets:
            # an in-place map reads each slot before writing it: only that slot
            if base_node.id in self.written:
                raise Inherent(f"the loop reads `{base_node.id}` after writing it")
            self.target_reads.setdefault(base_node.id, set()).add(_slot_key(parts))
            targets, self.targets = self.targets, self.targets - {base_node.id}
            try:
                base = self.invariant(base_node)
            finally:
                self.targets = targets
        else:
            try:
                base = self.invariant(base_node)
            except Unknown as unknown:
                # `R[b]` beside the known tensors the loop walks: per element, whatever `R` is; say why. Not items
                # of items (`batch[i][0]`: a Python list of samples, as a collate function reads it)
                if node.value is base_node and any(not isinstance(p, ast.Slice) and self.mentions_loop(p)
                                                   and self.affine(p) is not None for p in parts):
                    raise _UnknownRead(f"{unknown}, and the loop reads it per element", str(unknown)) from None
                raise
        if isinstance(base_value, SeqValue):
            return self._sequence_item(base_node, base_value, parts)
        if not base.is_tensor:
            raise Refuse("indexing something that is not a tensor")
        whole = base.elem
        if not whole.shape:
            raise Refuse("indexing a 0-d tensor")
        if len(parts) == 1 and isinstance(parts[0], ast.Slice) and self.mentions_loop(parts[0]):
            return self._window(base, parts[0])
        kinds = []  # per part: ("walk", k, c1, c0) | ("basic", item, text) | ("gather", Vec) | ("none",)
        for part in parts:
            if isinstance(part, ast.Starred):
                raise Refuse("a starred index")
            if not self.mentions_loop(part):
                item, code = self._basic_item(part)
                kinds.append(("basic", item, code))
                continue
            affine = self.affine(part)
            if affine is not None:
                kinds.append(("walk",) + affine)
                continue
            if isinstance(part, ast.Slice):
                return self._ragged(base, parts)
            try:
                gathered = self(part)
            except (Unknown, _UnknownRead) as unknown:
                # `x[b, idx[b]]` of a known tensor: per element, whatever `idx` is; say why it is not rewritten
                what = unknown.unknown if isinstance(unknown, _UnknownRead) else str(unknown)
                raise Refuse(f"the index `{_clip(self.src(part))}` is unknown ({what})") from None
            kinds.append(("gather", gathered))
        if any(kind[0] == "gather" for kind in kinds):
            return self._gather(base, kinds)
        return self._walk(base, kinds)

    def _ragged(self, base: Vec, parts: list) -> Vec:
        """``x[b, :n[b]]`` (or ``x[b, n[b]:]``): each row's own prefix (suffix). Only a sum or mean of it has a
        batched form: the rows masked by ``torch.arange(T) < n`` (Python's slice rules: a negative bound counts
        from the end), summed along that dim."""
        if self.depth != 1 or len(parts) < 2 or not isinstance(parts[1], ast.Slice) or parts[1].step is not None:
            raise Refuse("a slice whose bounds depend on the loop (a ragged walk)")
        if self.affine(parts[0]) != (0, 1, 0) or any(not (isinstance(p, ast.Slice) and p.lower is None
                                                          and p.upper is None and p.step is None) for p in parts[2:]):
            raise Refuse("a ragged slice other than `x[b, :n[b]]`")
        level, facts = self.levels[0], base.elem
        if not (level.step == 1 and _certain(dims.dim_eq(level.start, 0))
                and _certain(dims.dim_eq(level.count, facts.shape[0])) and len(facts.shape) >= 2):
            raise Refuse("a ragged walk over part of the rows")
        lower, upper = parts[1].lower, parts[1].upper
        if (lower is None) == (upper is None):
            raise Refuse("a ragged slice with two bounds")
        bound = self(upper if upper is not None else lower)
        if not (bound.batched and bound.deps == frozenset({0}) and (
                bound.is_tensor and bound.rank == 0 and bound.dtype is not None and is_integral(bound.dtype)
                and bound.dtype is not DType.uint8 or bound.python and bound.elem.kind == "int")):
            raise Refuse("a slice bound that is not one integer per row")
        size_text = f"{base.atom()}.shape[1]"  # the row length, as the program sizes it
        exact = f"{self.torch}.where({bound.text} < 0, {bound.atom()} + {size_text}, {bound.text})"
        mask = f"{self.torch}.arange({size_text}) {'<' if upper is not None else '>='} {exact}[:, None]"
        elem = facts.with_(shape=(dims.Sym.fresh("n"),) + tuple(facts.shape[2:]), strides=None, memory=None)
        self.grad |= facts.requires_grad is not False
        return Vec(base.text, base.prec, elem, facts, frozenset({0}), fresh=False, ragged=(base.atom(), facts, mask),
                   free=base.free)

    def ragged_sum(self, vec: Vec, op, bound: dict, node) -> Vec:
        """The sum (mean) of each row's ragged slice, over the slice's dim or all its dims."""
        if op.name not in ("sum", "mean") or set(bound) - {"input", "dim"} or not is_floating(vec.elem.dtype):
            raise Refuse("a ragged slice used other than summed or averaged")
        dim = _dims_value(bound["dim"].elem) if "dim" in bound else None
        rank = len(vec.elem.shape)
        if dim is _UNKNOWN or not (dim is None or dim in (0, -rank) or dim == (0,)):
            raise Refuse("a ragged slice reduced along another dim")
        if dim is None and rank > 1:
            raise Refuse("a ragged slice of more than one dim, reduced whole")
        text, facts, mask = vec.ragged
        extra = len(facts.shape) - 2
        keep = f"({mask})[:, :{', None' * extra}]" if extra else mask
        # `where`, not a product with the mask: a NaN or inf outside a row's slice must not reach its sum
        total = f"{self.torch}.where({keep}, {text}, 0).sum(dim=1)"
        text_out = total
        if op.name == "mean":
            count = f"({mask}).sum(dim=1{', keepdim=True' if extra else ''})"
            text_out = f"{total} / {count}"
        shape = (facts.shape[0],) + tuple(facts.shape[2:])
        whole = facts.with_(shape=shape, strides=layout.contiguous_strides(shape), memory=None)
        elem = vec.elem.with_(shape=tuple(facts.shape[2:]), strides=layout.contiguous_strides(tuple(facts.shape[2:])))
        return Vec(text_out, TERM if op.name == "mean" else ATOM, elem, whole, vec.deps)

    def _window(self, base: Vec, part: ast.Slice) -> Vec:
        """``x[i:i + w]``: a sliding window of ``w`` items; all windows at once are ``x.unfold(0, w, step)``."""
        if part.step is not None or part.lower is None or part.upper is None:
            raise Refuse("a slice whose bounds depend on the loop (a ragged walk)")
        low, high = self.affine(part.lower), self.affine(part.upper)
        if low is None or high is None or low[0] != high[0] or low[1] != 1 or high[1] != 1 or self.depth != 1:
            raise Refuse("a slice whose bounds depend on the loop (a ragged walk)")
        k, _, c0 = low
        width = high[2] - c0
        level = self.levels[k]
        if type(width) is not int or width < 1 or level.step < 1 or level.count is None:
            raise Refuse("a window of a size that is not a known positive int")
        facts = base.elem
        size = facts.shape[0]
        first = level.start + c0
        last = first + level.step * (level.count - 1) + width
        # Python's slices stop at the end: only windows that all fit are one `unfold`
        if not (_certain(dims.dim_lt(-1, first)) and _certain(dims.dim_lt(last - 1, size))
                or _certain(dims.dim_eq(level.count, 0))):
            raise Refuse("a window that may run past the end (Python would give a shorter one)")
        start = "" if _certain(dims.dim_eq(first, 0)) else f"[{self._dim_text(first, size, k)}:]"
        text = f"{base.atom()}{start}.unfold(0, {width}, {level.step})"
        available = (size - first - width) // level.step + 1 if all(type(d) is int for d in (size, first)) else None
        if available is None and not _certain(dims.dim_eq(level.count, size - first - width + 1)):
            raise Refuse("a window walk whose length has no known code")
        if available is not None and available != level.count:
            text = f"{text}[:{level.count}]"
        rest = tuple(facts.shape[1:])
        shape = (level.count,) + rest + (width,)
        if rest:
            text = f"{text}.movedim(-1, 1)"
            shape = (level.count, width) + rest
        whole = facts.with_(shape=shape, strides=None, memory=None)
        self.grad |= facts.requires_grad is not False
        return self._masked(Vec(text, ATOM, _row(whole), whole, frozenset({k}), fresh=False, free=base.free))

    def gathers_in(self, node: ast.AST) -> bool:
        """A read at a data-dependent slot (``x[i, ids[i]]``, ``emb[j]`` of a temporary ``j``): computed for every
        element where the loop reads it for some only, it may be out of range (and raise) at the others."""
        varying = self.loop_names | set(self.env)
        for sub in ast.walk(node):
            if not (isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Load)):
                continue
            for part in sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]:
                if isinstance(part, ast.Slice):
                    continue  # a slice past the end is shorter, it never raises
                if any(isinstance(n, ast.Name) and n.id in varying for n in ast.walk(part)) \
                        and self.affine(part) is None:
                    return True
        return False

    def affine(self, node: ast.expr) -> Optional[tuple]:
        """``i``, ``i + 1``, ``n - 1 - i``, ``2 * i``: (level, c1, c0) with the value ``c1 * index + c0``."""
        if isinstance(node, ast.Name) and node.id in self.level_of and node.id not in self.env:
            k = self.level_of[node.id]
            if node.id == self.levels[k].index:
                return k, 1, 0
            return None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.affine(node.operand)
            return None if inner is None else (inner[0], -inner[1], -inner[2])
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            left = self.affine(node.left) if self.mentions_loop(node.left) else None
            right = self.affine(node.right) if self.mentions_loop(node.right) else None
            if (left is None) == (right is None):
                return None
            walk, other = (left, node.right) if left is not None else (right, node.left)
            if self.mentions_loop(other):
                return None
            constant = _int(self.ctx, other)
            if constant is None:
                return None
            k, c1, c0 = walk
            if isinstance(node.op, ast.Mult):
                return (k, c1 * constant, c0 * constant) if type(constant) is int else None
            if isinstance(node.op, ast.Add):
                return k, c1, c0 + constant
            return (k, c1, c0 - constant) if left is not None else (k, -c1, constant - c0)
        return None

    def _walk(self, base: Vec, kinds: list) -> Vec:
        whole = base.elem
        items, texts, walked = [], [], []  # walked: (level, result dim) of the walk parts
        result_dim, dim = 0, 0
        diagonal = None
        seen: dict = {}
        for kind in kinds:
            if kind[0] == "basic":
                item, code = kind[1], kind[2]
                items.append(item)
                texts.append(code)
                if item is None:
                    result_dim += 1
                elif item is Ellipsis:
                    raise Refuse("`...` with a loop index")
                else:
                    if isinstance(item, slice):
                        result_dim += 1
                    dim += 1
                continue
            _, k, c1, c0 = kind
            if dim >= len(whole.shape):
                raise Refuse("more indices than dims")
            size = whole.shape[dim]
            if k in seen:
                first = seen[k]
                if diagonal is not None or kinds[first[0]][1:] != kind[1:] or (c1, c0) != (1, 0):
                    raise Refuse("the same loop index in two places other than `A[i, i]`")
                diagonal = (first[1], dim)
                item, code = self._slice(k, c1, c0, size)
                items.append(slice(None))
                texts.append(":")
                result_dim += 1
                dim += 1
                continue
            seen[k] = (len(items), dim)
            item, code = self._slice(k, c1, c0, size)
            items.append(item)
            texts.append(code)
            walked.append((k, result_dim))
            result_dim += 1
            dim += 1
        text = base.atom()
        if any(t != ":" for t in texts):
            while texts and texts[-1] == ":":
                texts.pop()
            text = _subscripted(text, texts)
        facts = _index(whole, items)
        flipped = [kind[1] for kind in kinds if kind[0] == "walk" and kind[2] * self.levels[kind[1]].step < 0]
        if flipped:
            dims_text = ", ".join(str(d) for k, d in walked if k in flipped)
            text = f"{wrap(text, ATOM, ATOM)}.flip({dims_text})"
            facts = facts.with_(strides=layout.contiguous_strides(facts.shape))
        if diagonal is not None:
            return self._diagonal(base, text, facts, walked, diagonal, kinds)
        return self._move_walks(base, text, facts, walked, fresh=bool(flipped))

    def _slice(self, k: int, c1: int, c0, size) -> tuple:
        """(slice item, its text) of the values ``c1 * index + c0`` of level ``k`` along a dim of ``size``."""
        level = self.levels[k]
        first = c1 * level.start + c0
        stride = c1 * level.step
        count = level.count
        if count is None:
            raise Refuse("the number of iterations is unknown")
        last = first + stride * (count - 1)
        low, high = (first, last) if stride > 0 else (last, first)
        # Python wraps negative indices and raises past the end: only a walk inside the dim is a slice.
        if not (_certain(dims.dim_lt(-1, low)) and _certain(dims.dim_lt(high, size))) \
                and not _certain(dims.dim_eq(count, 0)):
            raise Refuse(f"the index may leave the dim of size {dims.fmt_dim(size)} (Python would wrap or raise)")
        step = abs(stride)
        start, stop = low, high + 1
        lo = "" if _certain(dims.dim_eq(start, 0)) else self._dim_text(start, size, k)
        hi = "" if _certain(dims.dim_lt(size - 1, stop + step - 1)) or _certain(dims.dim_eq(stop, size)) \
            else self._dim_text(stop, size, k, stop=True)
        st = "" if step == 1 else f":{step}"
        code = f"{lo}:{hi}{st}"
        item = slice(start if type(start) is int else None, None, step)
        if type(start) is not int or type(stop) is not int or not hi:
            item = _SymSlice(start, stop, step, count)
        else:
            item = slice(start, stop, step)
        return item, code

    def _dim_text(self, value, size, k: int, stop: bool = False) -> str:
        """Code for an index bound: an int, ``-m`` (``size - m``), or the loop's own count (``N``, ``N + 1``)."""
        offset = value - size
        level = self.levels[k]
        written = level.stop_text or level.count_text or ""
        relative = stop and any(word in written for word in ("len(", "shape", "size"))  # the range counts from the end
        if type(value) is int and not (relative and type(offset) is int and offset < 0 < value):
            return str(value)
        if type(offset) is int and offset < 0:
            return str(offset)
        if level.count_text is not None:
            offset = value - level.count
            if type(offset) is int:
                if offset == 0:
                    return level.count_text
                return f"{level.count_text} {'+' if offset > 0 else '-'} {abs(offset)}"
        raise Refuse("an index bound with no known code")

    def _move_walks(self, base: Vec, text: str, facts: TensorValue, walked: list, fresh: bool) -> Vec:
        """Put the walked dims first, in loop order (``X[:, j]`` -> ``X.T``), with ``None`` for missing levels."""
        if not walked:
            raise Refuse("internal: no walk")
        order = sorted(walked)
        levels_here = [k for k, _ in order]
        positions = [d for _, d in order]
        rank = len(facts.shape)
        moved = None
        if positions != list(range(len(positions))):
            perm = positions + [d for d in range(rank) if d not in positions]
            original = (text, facts)
            if rank == 2:
                text = f"{wrap(text, ATOM, ATOM)}.T"
            elif len(positions) == 1:
                text = f"{wrap(text, ATOM, ATOM)}.movedim({positions[0]}, 0)"
            else:
                text = f"{wrap(text, ATOM, ATOM)}.permute({', '.join(map(str, perm))})"
            if len(positions) == 1:
                moved = original + (positions[0],)
            facts = facts.with_(shape=tuple(facts.shape[d] for d in perm),
                                strides=None if facts.strides is None else tuple(facts.strides[d] for d in perm))
        elem = _drop(facts, len(positions))
        # Loop dims between and after the walked ones are `None` (size 1), leading ones are left out.
        first = levels_here[0]
        wanted = list(range(first, self.depth))
        if levels_here != wanted:
            index, shape, strides = [], list(facts.shape), facts.strides
            cursor = 0
            for k in wanted:
                if k in levels_here:
                    index.append(":")
                    cursor += 1
                else:
                    index.append("None")
                    strides = layout.unsqueeze_strides(tuple(shape), strides, cursor) if strides else None
                    shape.insert(cursor, 1)
                    cursor += 1
            while index and index[-1] == ":":
                index.pop()
            text = f"{wrap(text, ATOM, ATOM)}[{', '.join(index)}]"
            facts = facts.with_(shape=tuple(shape), strides=strides)
            moved = None
        vec = Vec(text, ATOM, elem, facts, frozenset(levels_here), fresh=fresh, moved=moved,
                  base=text if not fresh else None, free=base.free)
        self.grad |= facts.requires_grad is not False
        return self._masked(vec)

    def _diagonal(self, base: Vec, text: str, facts: TensorValue, walked: list, diagonal: tuple, kinds) -> Vec:
        """``A[i, i]``: the diagonal of the two dims, as the loop dimension."""
        d1, d2 = diagonal
        if len(self.levels) != 1 or walked[0][1] != d1 or any(kind[0] == "basic" and not isinstance(kind[1], slice)
                                                              for kind in kinds):
            raise Refuse("a diagonal together with other indices")
        size1, size2 = facts.shape[d1], facts.shape[d2]
        if not (_certain(dims.dim_eq(size1, size2)) and _certain(dims.dim_eq(size1, self.levels[0].count))):
            raise Refuse("a diagonal of a matrix that may not be square, or only part of it")
        rank = len(facts.shape)
        call = f"{wrap(text, ATOM, ATOM)}.diagonal()" if (d1, d2) == (0, 1) \
            else f"{wrap(text, ATOM, ATOM)}.diagonal(dim1={d1}, dim2={d2})"
        shape = tuple(s for i, s in enumerate(facts.shape) if i not in (d1, d2)) + (size1,)
        strides = layout.diagonal_strides(facts.shape, facts.strides, 0, d1, d2) if facts.strides else None
        if rank > 2:
            call = f"{call}.movedim(-1, 0)"
            shape = shape[-1:] + shape[:-1]
            strides = strides[-1:] + strides[:-1] if strides else None
        whole = facts.with_(shape=shape, strides=strides)
        return self._masked(Vec(call, ATOM, _row(whole), whole, frozenset({0}), fresh=False, base=call,
                                free=base.free))

    def _gather(self, base: Vec, kinds: list) -> Vec:
        """``emb[ids[i]]``, ``logits[i, targets[i]]``: advanced indexing with the whole index tensors."""
        if self.depth != 1:
            return self._nested_gather(base, kinds)
        whole = base.elem
        texts, dropped = [], 0
        advanced_done = False
        for position, kind in enumerate(kinds):
            if kind[0] in ("walk", "gather"):
                if advanced_done:
                    raise Refuse("gather indices apart from each other")
                if kind[0] == "walk":
                    texts.append(self._walk_indices(kind))
                else:
                    gathered = kind[1]
                    if gathered.deps != frozenset({0}):
                        raise Refuse("a gather index that does not follow the loop")
                    if gathered.python:
                        if not isinstance(gathered.elem, ScalarValue) or gathered.elem.kind != "int":
                            raise Refuse("a gather index that is not an int")
                    elif gathered.is_tensor and gathered.dtype is DType.bool and gathered.rank > 0:
                        # `feats[labels == c].mean(0)`: each mask keeps its own number of rows
                        raise Refuse("a boolean mask per element keeps a different number of rows each time "
                                     "(a ragged selection)")
                    elif not (gathered.is_tensor and gathered.rank == 0 and gathered.dtype is not None
                              and is_integral(gathered.dtype) and gathered.dtype not in (DType.uint8,)):
                        raise Refuse("a gather index that is not one integer per element")
                    if gathered.python and gathered.whole.dtype not in (DType.int64, DType.int32):
                        raise Refuse("a gather index that is not an int")
                    texts.append(gathered.text)
                dropped += 1
                continue
            if position < dropped or not advanced_done:
                if dropped == 0:
                    raise Refuse("a gather after other indices")
                advanced_done = True
            item, code = kind[1], kind[2]
            if not (isinstance(item, slice) and item == slice(None)):
                raise Refuse("a gather together with other indices")
            texts.append(code)
        while texts and texts[-1] == ":":
            texts.pop()
        rest = tuple(whole.shape[dropped:])
        # in a filter's value the index tensors are masked already (`emb[ids[mask]]`): the rows are the selected ones
        count = self.levels[0].count if self.select is None else self.select[1]
        facts = whole.with_(shape=(count,) + rest, strides=layout.contiguous_strides((count,) + rest))
        elem = _drop(facts, 1)
        text = (self._row_gather(base, kinds) if self.select is None else None) or \
            f"{base.atom()}[{', '.join(texts)}]"
        self.grad |= whole.requires_grad is not False
        return Vec(text, ATOM, elem, facts, frozenset({0}), fresh=True, free=base.free)

    def _nested_gather(self, base: Vec, kinds: list) -> Vec:
        """``emb[tokens[b, t]]`` inside ``for b`` / ``for t``: one integer per element of every level, laid out as the
        levels: ``emb[tokens]`` (the gathered rows in a (B, T) grid)."""
        depth = self.depth
        if not kinds or kinds[0][0] != "gather" or any(kind[0] != "basic" or kind[1] != slice(None)
                                                       for kind in kinds[1:]):
            raise Refuse("a gather inside nested loops")
        index = kinds[0][1]
        whole = index.whole
        if index.python or not (index.is_tensor and index.rank == 0 and index.batch_dims == depth
                                and index.deps == frozenset(range(depth)) and index.dtype is not None
                                and is_integral(index.dtype) and index.dtype is not DType.uint8) \
                or not _shaped(whole) or len(whole.shape) != depth \
                or not all(_certain(dims.dim_eq(whole.shape[k], level.count)) for k, level in enumerate(self.levels)):
            raise Refuse("a gather inside nested loops of an index that is not one integer per element")
        rest = tuple(base.elem.shape[1:])
        shape = tuple(whole.shape) + rest
        facts = base.elem.with_(shape=shape, strides=layout.contiguous_strides(shape))
        self.grad |= base.elem.requires_grad is not False
        return self._masked(Vec(f"{base.atom()}[{index.text}]", ATOM, _drop(facts, depth), facts,
                                frozenset(range(depth)), fresh=True, free=base.free))

    def _row_gather(self, base: Vec, kinds: list) -> Optional[str]:
        """``logits[i, targets[i]]`` over ``range(n)``: ``logits.gather(1, targets[:, None]).squeeze(1)``, a third
        cheaper than indexing with ``torch.arange(n)``. Only where ``gather`` takes what the loop takes: int64
        indices known >= 0 (``gather`` wraps no negative index; past the end both raise) into a matrix."""
        from torchwise.vectorize.ranges import nonnegative_name

        if len(kinds) != 2 or kinds[0][0] != "walk" or kinds[1][0] != "gather" or len(base.elem.shape or ()) != 2:
            return None
        _, k, c1, c0 = kinds[0]
        level, index = self.levels[k], kinds[1][1]
        if (c1, c0) != (1, 0) or level.start != 0 or level.step != 1 or index.python or index.dtype is not DType.int64 \
                or not (index.text.isidentifier() and nonnegative_name(self.ctx, self.scope, index.text)):
            return None
        return f"{base.atom()}.gather(1, {index.text}[:, None]).squeeze(1)"

    def _walk_indices(self, kind) -> str:
        _, k, c1, c0 = kind
        index = self.index_value(k)
        if (c1, c0) == (1, 0):
            return index.text
        text = index.atom() if c1 == 1 else f"{c1} * {index.atom()}"
        if c0:
            text = f"{text} {'+' if c0 > 0 else '-'} {abs(c0)}" if type(c0) is int else None
        if text is None:
            raise Refuse("a gather of an index with no known code")
        return text

    def _sequence_item(self, base_node: ast.expr, value: SeqValue, parts: list) -> Vec:
        """``weights[i]`` of a Python list of numbers, ``images[i]`` of a list of tensors: walked whole."""
        position = _int(self.ctx, parts[1]) if len(parts) == 2 else None
        if len(parts) != 1 and not (type(position) is int and isinstance(base_node, ast.Name)):
            raise Refuse("a tuple index into a list")
        affine = self.affine(parts[0])
        if affine is None or affine[1:] != (1, 0):
            raise Refuse("a list indexed by something other than the loop index")
        k = affine[0]
        level = self.levels[k]
        from torchwise.vectorize.space import Walker

        walker = Walker(self.ctx, self.scope, self.torch, self.check_pure)
        if len(parts) == 2:  # `batch[i][0]`: the first tensor of each pair
            found = walker.list_of_tuple_items(base_node, position)
            if found is None:
                raise Refuse("a list of pairs whose items at that place are not known alike")
        else:
            found = walker.list_of_tensors(base_node) if isinstance(base_node, ast.Name) else None
        if found is None and isinstance(base_node, ast.Name):
            found = walker.list_of_numbers(base_node)
        if found is None:
            raise Refuse("a list whose items are not known alike")
        element, length = found
        if level.start != 0 or level.step != 1 or length is None or level.count is None \
                or not _certain(dims.dim_eq(length, level.count)):
            raise Refuse("a list walked only in part")
        return self.element_leaf(k, element)

    def batch_of_one(self, node: ast.expr, call: ast.expr) -> Optional[Vec]:
        """``F.interpolate(img[None], size=s)[0]``, ``conv(img.unsqueeze(0)).squeeze(0)``: each sample made a batch of
        one, through an op that treats the samples of a batch apart (``SAMPLE_WISE``), then taken out again (``node``
        of ``call``): the op on the whole batch. The engine's facts of one sample's result and of the batch's must
        agree."""
        from torchwise.vectorize.calling import per_sample_layer

        if not (isinstance(call, ast.Call) and call.args and not isinstance(call.args[0], ast.Starred)):
            return None
        qualname = self.scope.qualname(call.func)
        module = self.ctx.value(call.func) if qualname is None else None
        if qualname not in SAMPLE_WISE and not per_sample_layer(module):
            return None
        sample = _one_of_batch(call.args[0])
        rest = call.args[1:] + [k.value for k in call.keywords]
        if sample is None or any(k.arg is None for k in call.keywords) or any(self.mentions_loop(a) for a in rest):
            return None
        for arg in rest:
            self.check_pure(arg)
        value = self(sample)
        if not (value.is_tensor and value.batched and value.batch_dims == 1 and not value.lost
                and value.whole is not None and self.depth == 1):
            return None
        elem = self.ctx.value(node)
        values = [value.whole] + [self.ctx.value(a) for a in call.args[1:]]
        if module is not None:
            whole = self.oracle.module(call, module, values) if len(call.args) == 1 and not call.keywords else None
        else:
            whole = self.oracle.function(call, qualname, values, {k.arg: self.ctx.value(k.value) for k in call.keywords})
        count = self.levels[0].count
        if not stacks_samples(whole, elem, count):
            raise Refuse(f"what `{self.src(call.func)}` gives on the whole batch is not known to be its samples' results")
        others = [self.src(a) for a in call.args[1:]] + [f"{k.arg}={self.src(k.value)}" for k in call.keywords]
        text = f"{wrap(self.src(call.func), ATOM, ATOM)}({', '.join([value.text] + others)})"
        self.grad |= elem.requires_grad is not False
        return Vec(text, ATOM, elem.with_(memory=None), whole.with_(memory=None), value.deps, fresh=True)

    def written_slot(self, name: str, parts: list, read: bool = False, repeatable=None) -> None:
        """A store into ``name`` at the slot ``parts``: every read of ``name`` in this iteration was of this slot.
        Several writes per iteration only when their order cannot matter, all of one ``repeatable`` kind: additions
        (``deg[u] += 1; deg[v] += 1``), or one loop-invariant number (``A[u, v] = 1; A[v, u] = 1``)."""
        key = _slot_key(parts)
        reads = self.target_reads.get(name, set())
        if reads - {key}:
            raise Inherent(f"the loop reads `{name}` at another slot than the one it writes (a recurrence)")
        slots = self.written_parts.setdefault(name, [])
        if name in self.written:
            if not reads and all(self._apart(parts, other) for other in slots):
                # `coords[k, 0] = ...; coords[k, 1] = ...`: no slot of one store is ever a slot of the other
                self.repeatable_writes[name] = "apart"
                slots.append(parts)
                return
            if repeatable is None or self.repeatable_writes.get(name) != repeatable or reads:
                raise Refuse(f"`{name}` is written twice in one iteration")
            return
        self.written.add(name)
        self.repeatable_writes[name] = repeatable
        slots.append(parts)

    def _apart(self, parts: list, other: list) -> bool:
        """Two store targets that never share a slot, on any iterations: at one position both are distinct
        non-negative int literals, and every position before it is one dim in both (an int, a loop index, a plain
        slice), so that position is the same dim of the tensor."""
        if len(parts) != len(other):
            return False
        for a, b in zip(parts, other):
            if all(isinstance(p, ast.Constant) and type(p.value) is int and p.value >= 0 for p in (a, b)):
                if a.value != b.value:
                    return True
            if not all(self._one_dim(p) for p in (a, b)):
                return False
        return False

    def _one_dim(self, part: ast.expr) -> bool:
        if isinstance(part, ast.Constant):
            return type(part.value) is int
        if isinstance(part, ast.Slice):
            return all(bound is None or isinstance(bound, ast.Constant) and type(bound.value) is int
                       for bound in (part.lower, part.upper, part.step))
        return self.mentions_loop(part) and self.affine(part) is not None

    def element_index(self, value: Vec, k: int) -> Vec:
        """``value[k]`` per element (one item of an unpacked row): ``V[:, k]``."""
        lead = [":"] * value.batch_dims + [str(k)]
        elem = value.elem.with_(shape=tuple(value.elem.shape[1:]),
                                strides=None if value.elem.strides is None else tuple(value.elem.strides[1:]))
        at = value.batch_dims
        whole = value.whole.with_(shape=tuple(value.whole.shape[:at]) + tuple(value.whole.shape[at + 1:]),
                                  strides=None if value.whole.strides is None
                                  else tuple(value.whole.strides[:at]) + tuple(value.whole.strides[at + 1:]))
        return Vec(_subscripted(value.atom(), lead), ATOM, elem, whole, value.deps, fresh=value.fresh,
                   exact_cast=value.exact_cast)


_PLACED = re.compile(r"^([A-Za-z_][A-Za-z_0-9.]*)\[((?::|None)(?:, (?::|None))*)\]$")


class _UnknownRead(Refuse):
    """A read per element of something nothing is known of (``R[b]``): flagged, the unknown operand named."""

    def __init__(self, message: str, unknown: str):
        super().__init__(message)
        self.unknown = unknown


def _subscripted(text: str, items: list) -> str:
    """``text[items]``, merged into a subscript ``text`` already is when that only keeps or adds dims:
    ``a[:, None]`` then ``[:, :, 2]`` is ``a[:, None, 2]`` (each ``:``/``None`` makes one dim, kept whole)."""
    placed = _PLACED.match(text)
    if placed is not None and "..." not in items:
        first = placed.group(2).split(", ")
        if len(items) > len(first) and all(item == ":" for item in items[:len(first)]):
            return f"{placed.group(1)}[{', '.join(first + list(items[len(first):]))}]"
    return f"{text}[{', '.join(items)}]"


# torch.nn.functional ops that treat the samples of a batch apart (no batch statistics, no randomness): on a batch
# of one sample, then taken out (`[0]`), they are the op on the stacked samples.
SAMPLE_WISE = frozenset(f"torch.nn.functional.{name}" for name in (
    "interpolate", "upsample", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "pad", "layer_norm", "group_norm", "pixel_shuffle",
    "pixel_unshuffle", "unfold", "fold"))


def _one_of_batch(node: ast.expr) -> Optional[ast.expr]:
    """``x`` of ``x[None]`` / ``x[None, ...]`` / ``x.unsqueeze(0)``: one sample made a batch of one."""
    if isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if isinstance(parts[0], ast.Constant) and parts[0].value is None and \
                all(isinstance(p, ast.Constant) and p.value is Ellipsis for p in parts[1:]) and len(parts) <= 2:
            return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "unsqueeze" \
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant) \
            and node.args[0].value == 0 and type(node.args[0].value) is int:
        return node.func.value
    return None


def _size_item(value: Vec, parts: list) -> Optional[Vec]:
    """``row.shape[1]``: one size of the slices, which is the same number on every iteration (``.shape`` of a
    batched value is only read where every size is a known int)."""
    if value.batched or not isinstance(value.elem, SeqValue) or value.elem.items is None or len(parts) != 1:
        return None
    part, sign = parts[0], 1
    if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):  # `row.shape[-1]`
        part, sign = part.operand, -1
    if not (isinstance(part, ast.Constant) and type(part.value) is int):
        return None
    items, k = value.elem.items, sign * part.value
    if not -len(items) <= k < len(items):
        return None
    item = items[k]
    if not (isinstance(item, ScalarValue) and item.kind == "int" and type(item.value) is int):
        return None
    return Vec(str(item.value), ATOM, item)

