"""Comprehensions and ``map`` over tensors, consumed by one call: the same batching as a loop body.

``torch.tensor([x * 2 for x in t])``, ``torch.stack([f(x) for x in xs])``, ``torch.cat([...], dim)``,
``sum(a * b for a, b in zip(u, v))``, ``all(torch.allclose(a[i], b[i]) for i in ...)``,
``torch.stack(list(map(torch.abs, d)))``, a nested comprehension (one loop dimension per ``for``), and a
list comprehension kept as a list of Python numbers (``[row.argmax().item() for row in logits]`` is
``logits.argmax(dim=1).tolist()``) or stacked by the next statement. The element expression is translated
by ``batch.Batcher`` over the generators' levels; the consumer decides how the batched value is returned.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import replace
from typing import Optional

from torchwise.analysis import dims, layout
from torchwise.analysis.dtypes import DType, is_integral
from torchwise.analysis.values import ScalarValue, TensorValue
from torchwise.vectorize import bounds, proof, rewrite
from torchwise.vectorize.batch import Batcher
from torchwise.vectorize.vec import Vec
from torchwise.vectorize.emit import Doubt
from torchwise.vectorize.expr import ATOM, TERM, Inherent, Refuse, _precedence, row_ordered, torch_name, wrap
from torchwise.vectorize.oracle import Oracle
from torchwise.vectorize.space import Unwalkable, Walker

_COMPS = (ast.ListComp, ast.GeneratorExp)
_LEGACY_FLOATS = {"torch.FloatTensor": DType.float32, "torch.DoubleTensor": DType.float64}  # of Python floats


def worth_a_look(node: ast.AST) -> bool:
    """A cheap syntactic test before any analysis: the node is a list comprehension, or a call whose first
    argument is a comprehension, ``map(...)``, ``list(...)`` of one, or a name (a list built just before)."""
    if isinstance(node, ast.ListComp):
        return True
    if not isinstance(node, ast.Call) or not node.args:
        return False
    arg = node.args[0]
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "list" and arg.args:
        arg = arg.args[0]
    return isinstance(arg, (ast.ListComp, ast.GeneratorExp, ast.Name)) or (
        isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "map")


class Found:
    def __init__(self, code: str, text: str, prec: int, message: str, deletes=(), reason: Optional[str] = None):
        self.code = code
        self.text = text
        self.prec = prec
        self.message = message
        self.deletes = list(deletes)
        self.reason = reason


class ComprehensionMatcher:
    """A call that consumes a comprehension (or ``map``), or a list comprehension assigned to a name."""

    def __init__(self, node: ast.AST, scope, ctx, general):
        self.node = node
        self.scope = scope
        self.ctx = ctx
        self.source = ctx.source
        self.general = general  # a GeneralMatcher-like helper for layout and freshness
        self.default_float = ctx.facts.default_float

    def torch(self) -> str:
        return torch_name(self.scope)

    # -- entry ----------------------------------------------------------------------------------------
    def run(self):
        """(Found | None, reason | None)."""
        try:
            found = self.match()
        except (Inherent, Unwalkable):
            return None, None
        except (Doubt, Refuse) as why:
            return None, str(why)
        return found, None

    def match(self) -> Optional[Found]:
        node = self.node
        if isinstance(node, ast.ListComp):
            return self.assigned_list(node)
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        qualname = self.scope.qualname(node.func)
        builtin = node.func.id if isinstance(node.func, ast.Name) and self.scope.owner_of(node.func.id) is None \
            else None
        if qualname in _LEGACY_FLOATS and len(node.args) == 1 and not node.keywords:
            source, deletes = self._source_of(node.args[0])  # `torch.FloatTensor([...])`: Python numbers only
            return None if source is None else self.consumed(node, source, "tensor", deletes)
        if qualname in ("torch.tensor", "torch.stack", "torch.cat", "torch.concat"):
            if not node.args:
                return None
            source, deletes = self._source_of(node.args[0])
            if source is None:
                return None
            how = {"torch.tensor": "tensor", "torch.stack": "stack"}.get(qualname, "cat")
            return self.consumed(node, source, how, deletes)
        if builtin in ("sum", "all", "any") and len(node.args) == 1 and not node.keywords:
            source, deletes = self._source_of(node.args[0])
            if source is None:
                return None
            return self.consumed(node, source, builtin, deletes)
        return None

    def _source_of(self, arg: ast.expr):
        """The comprehension (or ``map``) an argument is: itself, ``list(...)`` of it, or a name bound to a list
        comprehension right before and used only here."""
        if isinstance(arg, _COMPS):
            return arg, []
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "list" \
                and self.scope.owner_of("list") is None and len(arg.args) == 1 and not arg.keywords:
            inner = arg.args[0]
            if isinstance(inner, _COMPS) or _is_map(inner, self.scope):
                return inner, []
        if _is_map(arg, self.scope):
            return arg, []
        if isinstance(arg, ast.Name):
            stmt = _statement_of(self.ctx, self.node)
            if stmt is None:
                return None, []
            binding = proof.binding_before(self.ctx, stmt, arg.id)
            if binding is None or not isinstance(binding.value, ast.ListComp):
                return None, []
            uses = [n for n in proof.own_nodes(self.general.scope_node) if isinstance(n, ast.Name) and n.id == arg.id]
            if len(uses) != 2 and not _rebound_by(self.ctx, binding, stmt, arg.id) \
                    or not rewrite.stands_alone(self.source, binding):
                return None, []
            if proof.captured(self.general.scope_node, arg.id) or proof.declared_shared(self.scope, arg.id):
                return None, []
            return binding.value, [binding]
        return None, []

    # -- the comprehension's levels -------------------------------------------------------------------------
    def batcher_for(self, source: ast.AST, numbers_ok: bool = False):
        """(Batcher, the element expression, the filter or None) of a comprehension or ``map(f, t)``; ``numbers_ok``:
        the comprehension may walk only ranges (its Python numbers become one tensor, ``torch.tensor([...])``)."""
        torch = self.torch()
        inner_scope = self.ctx.index.scope_of_node.get(source, self.scope) if isinstance(source, _COMPS) \
            else self.scope
        walker = Walker(self.ctx, self.scope, torch, self._pure)
        if _is_map(source, self.scope):
            func, iterable = source.args
            name = "_item"
            level = walker.level(ast.Name(name, ast.Store()), iterable)
            element = ast.Call(func=func, args=[ast.Name(name, ast.Load())], keywords=[])
            ast.copy_location(element, source)
            ast.fix_missing_locations(element)
            if not isinstance(func, (ast.Name, ast.Attribute)) or self.scope.qualname(func) is None:
                raise Inherent("`map` of a function that is not a torch op")
            levels, test = [level], None
        else:
            levels, test = [], None
            names: set = set()
            for index, generator in enumerate(source.generators):
                if generator.is_async:
                    return None
                if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(generator.iter)):
                    raise Refuse("a generator whose range depends on an outer one")
                level = walker.level(generator.target, generator.iter)
                names |= level.names
                levels.append(level)
                if generator.ifs:
                    if index != len(source.generators) - 1 or len(generator.ifs) > 1 or len(source.generators) > 1:
                        raise Refuse("a filter inside a nested comprehension")
                    test = generator.ifs[0]
            element = source.elt
            # [[f(i, j) for j in ...] for i in ...]: one more level per nested list
            while isinstance(element, ast.ListComp) and len(element.generators) == 1 and not element.generators[0].ifs \
                    and test is None and not element.generators[0].is_async:
                inner = element
                generator = inner.generators[0]
                if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(generator.iter)):
                    raise Refuse("a generator whose range depends on an outer one")
                level = walker.level(generator.target, generator.iter)
                names |= level.names
                levels.append(level)
                element = inner.elt
                inner_scope = self.ctx.index.scope_of_node.get(inner, inner_scope)
        from torchwise.vectorize.general import walks_tensors

        body = [ast.Expr(element)] + ([ast.Expr(test)] if test is not None else [])
        if not walks_tensors(self.ctx, levels, body) and not (numbers_ok and all(lv.kind == "range" for lv in levels)):
            raise Inherent("not a walk over tensor elements")
        batcher = Batcher(self.ctx, inner_scope, levels, Oracle(self.ctx, _statement_of(self.ctx, self.node)),
                          torch)
        return batcher, element, test

    def _pure(self, node: ast.expr) -> None:
        Batcher(self.ctx, self.scope, [], None, "torch").check_pure(node)

    # -- consumers -----------------------------------------------------------------------------------------------
    def consumed(self, call: ast.Call, source: ast.AST, how: str, deletes: list) -> Optional[Found]:
        listed = self._copied_list(source)
        if listed is not None and how in ("stack", "cat"):
            return self._identity_found(call, listed, how, deletes)
        batcher, element, test = self.batcher_for(source, numbers_ok=how == "tensor")
        if all(level.kind == "range" for level in batcher.levels) and not _reads_tensors(self.ctx, source):
            if how != "tensor":
                return None  # Python numbers made from ranges, not turned into a tensor: not a walk over tensor elements
            # ... made one tensor: the same arithmetic on aranges, where it is exact. Not a walk over tensor elements
            # either, so only a proven rewrite is offered (`torch.tensor([comb(n, k) for k in range(n)])` is no finding)
            batcher.bounded = True
            try:
                for part in (element, test):
                    if part is not None:
                        bounds.check(part, batcher)
                return self._consumed(call, how, deletes, batcher, element, test)
            except (Doubt, Refuse) as why:
                raise Inherent(str(why)) from None
        return self._consumed(call, how, deletes, batcher, element, test)

    def _consumed(self, call: ast.Call, how: str, deletes: list, batcher: Batcher, element: ast.expr, test):
        identity = self._identity(batcher, element, test)
        if identity is not None and how in ("stack", "cat"):
            return self._identity_found(call, identity, how, deletes)
        mask = batcher(test) if test is not None else None
        if mask is not None and not (mask.batched and (mask.is_tensor and mask.dtype is DType.bool and mask.rank == 0
                                                       or mask.python and mask.elem.kind == "bool")):
            raise Refuse("a filter that is not one bool per element")
        if how in ("all", "any"):
            return self._all_any(call, batcher, element, mask, how, deletes)
        value = batcher(element)
        if how == "sum":
            return self._sum(call, batcher, element, value, mask, deletes)
        if value.parts is not None:
            raise Refuse("a tuple per element")
        if mask is not None:
            chosen = batcher.selected(element, mask)
            if chosen is None and batcher.gathers_in(element):
                raise Refuse("a read at a data-dependent index of elements the filter skips (it may be out of "
                             "range there)")
            value = chosen if chosen is not None else _masked(value, mask)
        if how == "tensor":
            text, prec = self._as_tensor(call, batcher, value, filtered=mask is not None)
            if text == value.text and mask is None and len(batcher.levels) == 2:
                # `[[a[i] * b[j] for j ...] for i ...]`: `torch.outer(a, b)`, one op where `a[:, None] * b` is two
                outer = batcher.contraction(element, [])
                if outer is not None and outer.startswith(f"{batcher.torch}.outer("):
                    text, prec = outer, ATOM
        elif how == "stack":
            text, prec = self._stacked(call, batcher, value, empty_ok=mask is not None)
        else:
            text, prec = self._concatenated(call, batcher, value, element if mask is None else None)
        name = self.scope.qualname(call.func).split(".")[1]
        message = f"`torch.{name}` of a list built element by element; vectorized: `{_short(text)}`"
        return Found("TW404", text, prec, message, deletes)

    def _copied_list(self, source: ast.AST) -> Optional[str]:
        """``[x for x in xs]`` of a list or tuple ``xs``: ``xs`` itself (whatever its items are)."""
        if not (isinstance(source, _COMPS) and len(source.generators) == 1 and not source.generators[0].ifs):
            return None
        generator = source.generators[0]
        if not (isinstance(generator.target, ast.Name) and isinstance(source.elt, ast.Name)
                and source.elt.id == generator.target.id and isinstance(generator.iter, ast.Name)):
            return None
        from torchwise.analysis.values import SeqValue

        value = self.ctx.value(generator.iter)
        if not (isinstance(value, SeqValue) and value.kind in ("list", "tuple")):
            return None
        return generator.iter.id

    def _identity(self, batcher: Batcher, element: ast.expr, test) -> Optional[str]:
        """``[x for x in xs]`` over a list: the list itself."""
        if test is not None or len(batcher.levels) != 1 or not isinstance(element, ast.Name):
            return None
        level = batcher.levels[0]
        found = level.elements.get(element.id)
        if found is None or found.kind != "list":
            return None
        return found.text[len(batcher.torch) + len(".stack("):-1]

    def _identity_found(self, call: ast.Call, listed: str, how: str, deletes: list) -> Found:
        parts = [listed] + [rewrite.substitute(self.source, a, a, self.source.text_of(self.source.span(a)))
                            for a in call.args[1:]]
        parts += [self.source.text_of(self.source.span(k)) for k in call.keywords]
        text = f"{self.source.text_of(self.source.span(call.func))}({', '.join(parts)})"
        message = f"the comprehension only copies the list; `{_short(text)}`"
        return Found("TW404", text, ATOM, message, deletes)

    def _as_tensor(self, call: ast.Call, batcher: Batcher, value: Vec, filtered: bool) -> tuple:
        torch = batcher.torch
        if call.keywords or len(call.args) != 1:
            raise Refuse("`torch.tensor` with options")
        if len(batcher.levels) > 1 and (value.batch_dims != len(batcher.levels)
                                        or value.deps != frozenset(range(len(batcher.levels)))):
            raise Refuse("a nested comprehension whose values do not vary along every level")
        if len(batcher.levels) > 1 and not all(proof.certainly_positive(level.count) for level in batcher.levels[:-1]):
            raise Doubt("an outer list may be empty, and `torch.tensor([])` is then 1-d")
        legacy = _LEGACY_FLOATS.get(self.scope.qualname(call.func))
        if value.python:
            kind = value.elem.kind
            dtype = {"float": self.default_float, "int": DType.int64, "bool": DType.bool}.get(kind)
            if legacy is not None:
                if kind not in ("float", "int"):
                    raise Refuse("a legacy constructor of Python bools")
                if kind == "int":  # each int is read as a Python float first (rounded to nearest, as `.double()`)
                    value = replace(value, text=f"{value.atom()}.double()", prec=ATOM, fresh=True, base=None,
                                    whole=value.whole.with_(dtype=DType.float64))
                dtype = legacy
            if dtype is None:
                raise Refuse("the default dtype is unknown")
            counts = [level.count for level in batcher.levels]  # `[[] for ...]` is as empty as `[]`
            if dtype != self.default_float and (filtered or any(c is None or not proof.certainly_positive(c)
                                                                for c in counts)):
                raise Doubt("an empty list gives the default dtype, not the numbers' one")
            text, prec = value.text, value.prec
            if value.whole.dtype != dtype:
                text, prec = f"{value.atom()}.to({torch}.{dtype.short})", ATOM
            elif not value.fresh:
                text, prec = f"{value.atom()}.clone()", ATOM
            if batcher.grad:
                text, prec = f"{wrap(text, prec, ATOM)}.detach()", ATOM
            if value.whole.device != "cpu":
                raise Doubt("`torch.tensor` makes a CPU tensor")
            return text, prec
        if legacy is not None:
            raise Inherent("a legacy constructor of tensors")
        if not value.is_tensor or value.rank != 0:
            raise Inherent("`torch.tensor` of tensors that are not 0-d (TW106's business)")
        if not value.exact_cast:
            raise Refuse("a choice between values of different dtypes")
        if value.whole.device != "cpu":
            raise Doubt("`torch.tensor` makes a CPU tensor")
        if batcher.grad:
            raise Doubt("`torch.tensor` cuts the autograd graph the vectorized code would keep")
        counts = [level.count for level in batcher.levels]
        if value.dtype != self.default_float and (filtered or any(c is None or not proof.certainly_positive(c)
                                                                  for c in counts)):
            raise Doubt("an empty list gives the default dtype, not the elements'")
        laid = self.general.new_row_major(value)
        text = laid.text if laid.fresh else f"{laid.atom()}.clone()"
        return text, laid.prec

    def _stacked(self, call: ast.Call, batcher: Batcher, value: Vec, empty_ok: bool) -> tuple:
        if len(batcher.levels) != 1:
            raise Refuse("`torch.stack` of a nested comprehension")
        if any(k.arg != "dim" or not (isinstance(k.value, ast.Constant) and k.value.value == 0)
               for k in call.keywords) or len(call.args) > 1:
            raise Refuse("`torch.stack` along another dim")
        if not value.is_tensor or not value.exact_cast:
            raise Refuse("stacking values that are not tensors of one dtype")
        self.general.stack_layout(value)
        level = batcher.levels[0]
        if not empty_ok and level.kind != "list" and (level.count is None or not proof.certainly_positive(level.count)):
            raise Doubt("the list may be empty, and `torch.stack([])` raises")
        laid = self.general.new_row_major(value)
        text = laid.text if laid.fresh else f"{laid.atom()}.clone()"
        return text, laid.prec

    def _concatenated(self, call: ast.Call, batcher: Batcher, value: Vec, element=None) -> tuple:
        """``torch.cat([v(i) for i ...], dim)``: the batched values with the loop dim folded into ``dim``."""
        if len(batcher.levels) != 1:
            raise Refuse("`torch.cat` of a nested comprehension")
        dim = 0
        options = list(call.args[1:]) + [k.value for k in call.keywords if k.arg == "dim"]
        if len(options) > 1 or any(k.arg != "dim" for k in call.keywords):
            raise Refuse("`torch.cat` with options")
        if options:
            given = options[0]
            if not (isinstance(given, ast.Constant) and type(given.value) is int):
                raise Refuse("`torch.cat` along a dim that is not a known int")
            dim = given.value
        if not value.is_tensor or not value.exact_cast or value.lost:
            raise Refuse("concatenating values that are not tensors of one dtype")
        if value.rank == 0:
            raise Refuse("`torch.cat` of 0-d tensors raises")
        if not -value.rank <= dim < value.rank:
            raise Refuse("`torch.cat` along a dim the values do not have")
        dim %= value.rank
        level = batcher.levels[0]
        if level.kind != "list" and (level.count is None or not proof.certainly_positive(level.count)):
            raise Doubt("the list may be empty, and `torch.cat([])` raises")
        if value.batch_dims != 1:
            raise Refuse("internal: a concatenated value without its loop dim")
        base = value.atom()
        if dim == 0:
            text = f"{base}.flatten(0, 1)"
        else:
            text = f"{base}.movedim(0, {dim}).flatten({dim}, {dim + 1})"
        shape = value.shape
        if type(shape[dim]) is int and shape[dim] == 1 and dim > 0:
            placed = _index_placed(self.ctx, element, batcher, dim, value.rank, self.torch()) \
                if element is not None else None
            if placed is not None:
                return placed, _precedence(element)
            text = f"{base}.movedim(0, {dim}).squeeze({dim + 1})"
        # folding the loop dim into another copies unless it is already in place: the result is row-major
        if dim == 0 and not value.row_major:
            text = f"{text}.contiguous()"
        elif dim > 0:
            text = f"{text}.contiguous()"
        if dim == 0 and value.row_major and not value.fresh:
            text = f"{text}.clone()"
        return text, ATOM

    def _sum(self, call, batcher: Batcher, element: ast.expr, value: Vec, mask, deletes) -> Found:
        """Python's ``sum``: ``0 + v0 + v1 + ...``, one reduction (a count under a filter)."""
        level = batcher.levels[0]
        if len(batcher.levels) != 1:
            raise Refuse("`sum` of a nested comprehension")
        if self.scope.owner_of("int") is not None:
            raise Refuse("`int` is not the builtin here")
        if not value.batched:
            if mask is None or not (isinstance(value.elem, ScalarValue) and value.elem.kind == "int"):
                raise Refuse("`sum` of the same value every time")
            counted = f"int({mask.atom()}.sum())"
            text = counted if value.text == "1" else f"{value.atom()} * {counted}"
            return Found("TW407", text, ATOM if value.text == "1" else TERM,
                         f"`sum` counts one element at a time; vectorized: `{_short(text)}`", deletes)
        if value.parts is not None or not value.exact_cast or value.lost:
            raise Refuse("`sum` of values that are not one tensor per element")
        if mask is not None:
            value = _masked(value, mask)
        contraction = batcher.contraction(element, [0]) if mask is None and not value.python else None
        if value.python:
            kind = value.elem.kind
            torch = batcher.torch
            if kind == "float":
                text = f"{value.atom()}.sum(dtype={torch}.float64).item()"
            elif value.whole.dtype is DType.bool:
                text = f"int({value.atom()}.sum())"
            else:
                text = f"{value.atom()}.sum().item()"
            return Found("TW407", text, ATOM, f"`sum` adds one element at a time; vectorized: `{_short(text)}`",
                         deletes)
        if level.count is None or not proof.certainly_positive(level.count):
            raise Doubt("the sequence may be empty, and `sum` would then give the Python int 0")
        dtype = value.dtype
        if dtype not in (DType.float32, DType.float64) and not (dtype is not None and is_integral(dtype, True)):
            raise Doubt(f"adding {dtype.short if dtype else '?'} values one at a time rounds differently from one sum")
        if not value.row_major and value.rank >= 2:
            raise Doubt("the values may not be row-major, and `0 + v0 + ...` keeps their layout")
        args = "" if value.rank == 0 else "0"
        result = DType.int64 if is_integral(dtype, True) else dtype
        if is_integral(dtype, True) and dtype not in (DType.int64, DType.bool):
            args = f"{args + ', ' if args else ''}dtype={batcher.torch}.{dtype.short}"
            result = dtype
        looped = batcher.oracle.binary(_add(), ScalarValue("int", 0), value.elem)
        if not isinstance(looped, TensorValue) or looped.dtype != result:
            raise Refuse("`sum` would give another dtype than one reduction")
        text = contraction or f"{value.atom()}.sum({args})"
        return Found("TW407", text, ATOM if contraction is None else TERM,
                     f"`sum` adds one element at a time in Python; vectorized: `{_short(text)}`", deletes)

    def _all_any(self, call, batcher: Batcher, element: ast.expr, mask, how: str, deletes) -> Found:
        if mask is not None or len(batcher.levels) != 1:
            raise Refuse(f"`{how}` of a filtered or nested comprehension")
        if self.scope.owner_of("bool") is not None:
            raise Refuse("`bool` is not the builtin here")
        close = self._allclose(batcher, element) if how == "all" else None
        if close is not None:
            return Found("TW407", close, ATOM, f"`all` compares one slice at a time; vectorized: `{_short(close)}`",
                         deletes)
        value = batcher(element)
        if not (value.batched and (value.is_tensor and value.dtype is DType.bool and value.rank == 0
                                   or value.python and value.elem.kind == "bool")):
            raise Refuse(f"`{how}` of values that are not one bool per element")
        text = f"bool({value.atom()}.{how}())"
        return Found("TW407", text, ATOM, f"`{how}` tests one element at a time; vectorized: `{_short(text)}`",
                     deletes)

    def _allclose(self, batcher: Batcher, element: ast.expr) -> Optional[str]:
        """``all(torch.allclose(a[i], b[i]) ...)``: every slice close is every element close, ``torch.allclose``
        of the whole tensors (the same tolerances, NaN rule, and True for nothing)."""
        if not (isinstance(element, ast.Call) and self.scope.qualname(element.func) == "torch.allclose"
                and len(element.args) == 2):
            return None
        if any(k.arg not in ("rtol", "atol", "equal_nan") for k in element.keywords):
            return None
        a, b = batcher(element.args[0]), batcher(element.args[1])
        for k in element.keywords:
            if batcher.mentions_loop(k.value):
                return None
        if not (a.batched and b.batched and a.is_tensor and b.is_tensor and a.rank == b.rank
                and a.batch_dims == b.batch_dims == 1 and not a.lost and not b.lost
                and all(dims.dim_eq(x, y) is True for x, y in zip(a.shape, b.shape)) and a.dtype == b.dtype):
            return None
        options = "".join(f", {self.source.text_of(self.source.span(k))}" for k in element.keywords)
        return f"{self.source.text_of(self.source.span(element.func))}({a.text}, {b.text}{options})"

    # -- preds = [row.argmax().item() for row in logits] ---------------------------------------------------------
    def assigned_list(self, comp: ast.ListComp) -> Optional[Found]:
        stmt = _statement_of(self.ctx, comp)
        if not (isinstance(stmt, ast.Assign) and stmt.value is comp and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            return None
        if not _numbers_per_element(comp):
            return None  # a list of tensors: stacked later (the stacking call is matched), or kept as a list
        batcher, element, test = self.batcher_for(comp)
        value = batcher(element)
        if not value.python:
            return None
        if len(batcher.levels) != 1:
            raise Refuse("a nested list of Python numbers")
        if test is not None:
            mask = batcher(test)
            value = _masked(value, mask)
        text = f"{value.atom()}.tolist()"
        message = f"list of Python numbers built one element at a time; vectorized: `{_short(text)}`"
        return Found("TW404", text, ATOM, message)


_POINTWISE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.USub, ast.UAdd)


def _index_placed(ctx, element: ast.expr, batcher: Batcher, dim: int, rank: int, torch: str) -> Optional[str]:
    """``torch.cat([x ** i for i in range(1, K + 1)], 1)`` of pieces of size 1 along ``dim``, each an arithmetic
    of loop-invariant operands and the index ``i``: the same arithmetic with ``torch.arange`` placed at ``dim``
    (``x ** torch.arange(1, K + 1)``), no stacking, moving or copying. The batcher proved the leading-axis form
    (``x ** torch.arange(1, K + 1)[:, None, None]``): the operands' sizes at ``dim`` broadcast to 1, so each
    has size 1 there or no such dim, and an arange there broadcasts as the loop axis did; the ops are
    element-wise, so the values are the same slices in a new place, and dtype promotion sees a 1-d int64
    tensor either way. ``torch.cat`` returns row-major memory; an element-wise result is row-major when every
    tensor operand is row-ordered (``row_ordered``), so each must be known to be."""
    if len(batcher.levels) != 1 or batcher.devices - {"cpu"}:
        return None
    level = batcher.levels[0]
    if level.index is None or level.elements or level.arange is None:
        return None
    used = False
    for node in ast.walk(element):
        if isinstance(node, ast.Name):
            if node.id == level.index:
                used = True
            elif node.id in batcher.loop_names:
                return None
            else:
                known = ctx.value(node)
                if not isinstance(known, (TensorValue, ScalarValue)):
                    return None
                if isinstance(known, TensorValue) and not row_ordered(known.shape, known.strides):
                    return None
        elif not isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Load) + _POINTWISE_OPS):
            return None
    if not used:
        return None
    trailing = rank - 1 - dim
    index = f"{torch}.{level.arange}" + (f"[:{', None' * trailing}]" if trailing else "")

    class _Place(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.Name(index, ast.Load()) if node.id == level.index else node

    return ast.unparse(_Place().visit(copy.deepcopy(element)))


def _reads_tensors(ctx, node: ast.AST) -> bool:
    from torchwise.analysis.values import SeqValue

    return any(isinstance(n, ast.Name) and isinstance(ctx.value(n), (TensorValue, SeqValue)) for n in ast.walk(node))


def _numbers_per_element(comp: ast.ListComp) -> bool:
    """The comprehension makes Python numbers: `.item()`, `float()`, `int()` of each element, or a walk of
    `.tolist()`."""
    elt = comp.elt
    if isinstance(elt, ast.Call) and isinstance(elt.func, ast.Attribute) and elt.func.attr == "item":
        return True
    if isinstance(elt, ast.Call) and isinstance(elt.func, ast.Name) and elt.func.id in ("float", "int", "bool"):
        return True
    return any(isinstance(g.iter, ast.Call) and isinstance(g.iter.func, ast.Attribute) and g.iter.func.attr == "tolist"
               for g in comp.generators)


def _masked(value: Vec, mask: Vec) -> Vec:
    text = value.base if value.base is not None else value.atom()
    shape = (dims.Sym.fresh("k"),) + tuple(value.whole.shape[1:])
    return replace(value, text=f"{wrap(text, ATOM, ATOM)}[{mask.text}]", prec=ATOM, base=None, fresh=True,
                   whole=value.whole.with_(shape=shape, strides=layout.contiguous_strides(shape)), moved=None,
                   keepdim=None)


def _rebound_by(ctx, binding: ast.stmt, stmt: ast.stmt, name: str) -> bool:
    """``rows = [...]`` right before ``rows = torch.stack(rows)``, which reads it once: nothing else can read the
    list, whatever reads ``rows`` elsewhere (they see the stacked tensor, or what was bound before)."""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and stmt.targets[0].id == name and proof.count_mentions(stmt.value, name) == 1 \
        and proof.adjacent(ctx, binding, stmt)


def _is_map(node: ast.AST, scope) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "map" \
        and scope.owner_of("map") is None and len(node.args) == 2 and not node.keywords


def _add() -> ast.BinOp:
    return ast.BinOp(left=ast.Constant(0), op=ast.Add(), right=ast.Constant(0))


def _statement_of(ctx, node: ast.AST) -> Optional[ast.stmt]:
    return ctx.statement_of(node)


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


