"""Recognizing Python loops over tensors, and building their vectorized rewrites.

One entry per syntactic form: :func:`match_loop` for ``for`` statements (maps into a
preallocated output or a stacked list, filters, reductions, ``torch.cat`` accumulation,
per-item loops over a list of tensors), :func:`match_call` for comprehensions passed to
``torch.tensor``/``torch.stack`` and for builtins that iterate a tensor (``sum(t)``).

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
from dataclasses import dataclass
from typing import Callable, Optional

from torchwise.analysis import dims
from torchwise.analysis.dtypes import DType, is_floating, is_integral
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue, join
from torchwise.vectorize import proof, rewrite
from torchwise.vectorize.expr import ATOM, Batch, Refuse, Space, Translator, Vec, wrap

_ALLOCATORS = frozenset({"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.empty_like",
                         "torch.zeros_like", "torch.ones_like", "torch.full_like"})
_FRESH_FACTORIES = _ALLOCATORS | {"torch.tensor", "torch.randn", "torch.rand", "torch.arange"}
_SUM_DTYPES = frozenset({DType.float32, DType.float64})
_IO_CALLS = frozenset({"print", "open", "input", "breakpoint", "exec", "eval"})


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
        """What the loop variable stands for: ("range" | "tensor" | "list")."""
        if not isinstance(target, ast.Name):
            raise Refuse("the loop target is not a plain name")
        if _is_builtin_call(iterable, "range", scope):
            args = iterable.args
            if iterable.keywords or not 1 <= len(args) <= 2:
                raise Refuse("range with a step")
            if len(args) == 2 and not (isinstance(args[0], ast.Constant) and args[0].value == 0
                                       and not isinstance(args[0].value, bool)):
                raise Refuse("a range that does not start at 0")
            count = self.ctx.value(args[-1])
            if not (isinstance(count, ScalarValue) and count.kind == "int" and count.value is not None):
                raise Refuse("the number of iterations is unknown")
            Translator(self.ctx, scope, Space(count.value), self.default_float).check_pure(args[-1])
            return Space(count.value, index=target.id), "range"
        value = self.ctx.value(iterable)
        if isinstance(value, TensorValue):
            if not isinstance(iterable, (ast.Name, ast.Attribute)):
                raise Refuse("iterating a computed tensor")
            if value.dtype is None or value.shape is None or not value.shape or value.device is None:
                raise Refuse("the iterated tensor's facts are unknown")
            batch = Batch(self.source.text_of(self.source.span(iterable)), ATOM, value.dtype, tuple(value.shape[1:]),
                          value.device, grad=value.requires_grad is not False)
            return Space(value.shape[0], element=target.id, element_batch=batch), "tensor"
        if isinstance(iterable, ast.Name):
            element = self.list_element(iterable, scope)
            if element is not None:
                batch = Batch(f"{self.torch()}.stack({iterable.id})", ATOM, element.dtype, tuple(element.shape),
                              element.device, fresh=True, grad=element.requires_grad is not False)
                return Space(None, element=target.id, element_batch=batch), "list"
        raise Refuse("not a loop over a tensor, a range or a list of same-shaped tensors")

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
            space, kind = self.space_for(loop.target, loop.iter, self.scope)
            if len(loop.body) != 1:
                return None
            for matcher in (self.preallocated_map, self.appended_map, self.filtered, self.reduction):
                found = matcher(space, kind)
                if found is not None:
                    return found
        except Refuse:
            return None
        return None

    # -- shared obligations ----------------------------------------------------------------------
    def loop_variable_free(self) -> None:
        if proof.read_outside(self.scope_node, self.loop, self.loop.target.id):
            raise Doubt(f"`{self.loop.target.id}` is read after the loop")

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
        if kind != "range":
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

        def obligations():
            if alloc is None or not self._fresh_allocation(alloc.value):
                raise Doubt(f"`{out}` is not freshly allocated right before the loop")
            if not rewrite.stands_alone(self.source, alloc):
                raise Doubt(f"`{out}`'s allocation shares its line")
            self.not_shared(out, alloc)
            self.loop_variable_free()
            target = self.ctx.value(alloc.value)
            if not isinstance(target, TensorValue) or target.dtype is None or target.shape is None \
                    or target.device is None or not target.shape:
                raise Doubt(f"`{out}`'s dtype, shape or device is unknown")
            if dims.dim_eq(target.shape[0], space.count) is not True:
                raise Doubt(f"`{out}` has {target.shape[0]} rows, the loop runs {space.count} times")
            if len(target.shape) - 1 != vec.rank or any(dims.dim_eq(a, b) is not True
                                                        for a, b in zip(target.shape[1:], vec.shape)):
                raise Doubt(f"each element written has a different shape from a row of `{out}`")
            if translator.devices != {target.device}:
                raise Doubt(f"`{out}` is on another device than the data")
            text = vec.text
            if vec.dtype != target.dtype:
                if not vec.exact_cast:
                    raise Doubt("the branches have different dtypes from the output")
                text = f"{vec.atom()}.to({self.torch()}.{target.dtype.short})"
            elif not vec.fresh:
                text = f"{vec.atom()}.clone()"

            def build():
                return [rewrite.delete_statement(self.source, alloc),
                        rewrite.replace_statements(self.source, self.loop, self.loop, [f"{out} = {text}"])]
            return build

        return self.finish("TW401", message, f"Vectorize: `{out} = {_short(vec.text, 50)}`", obligations)

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
        if name in (space.index, space.element) or any(proof.mentions(v, name) for v in values) \
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
        text = vec.text if vec.fresh else f"{vec.atom()}.clone()"
        if code == "TW406":
            message = f"loop applies the same tensor ops to each item of `{self.loop.iter.id}`; " \
                      f"on the stacked batch: `{_short(text)}`"
        else:
            message = f"loop builds a list one element at a time, then stacks it; vectorized: `{_short(text)}`"

        def obligations():
            self.needs_iterations(space, kind, "`torch.stack([])` raises where the vectorized code would not")
            self.loop_variable_free()
            return self.stack_edits(after, call, init, text, vec.prec)

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
        if name in (space.index, space.element) or proof.mentions(value, name) or proof.mentions(stmt.test, name):
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
        message = f"filter loop over tensor elements; a boolean mask selects them in one op: `{_short(vec.text)}`"

        def obligations():
            self.loop_variable_free()
            return self.stack_edits(after, call, init, vec.text, vec.prec)

        return self.finish("TW403", message, f"Vectorize: `{_short(vec.text, 50)}`", obligations)

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
        if name in (space.index, space.element) or proof.mentions(value, name):
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
                if zero and rewrite.stands_alone(self.source, init):
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
                or name in (space.index, space.element):
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
            if zero and rewrite.stands_alone(self.source, init):
                return self._replace_loop([f"{name} = {counted}"], delete=init)
            return self._replace_loop([f"{name} += {counted}" if augmented else f"{name} = {name} + {counted}"])

        return self.finish("TW405", message, f"Vectorize: `{name} += {_short(counted, 50)}`", obligations)

    def _replace_loop(self, lines: list[str], delete: Optional[ast.stmt] = None):
        def build():
            edits = [rewrite.delete_statement(self.source, delete)] if delete is not None else []
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
        text = vec.text if vec.fresh else f"{vec.atom()}.clone()"
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
            elif select is None:
                if kind != "list" and not proof.certainly_positive(space.count):
                    raise Doubt("the list may be empty, and `torch.stack([])` raises")
        except Doubt as doubt:
            return Match("TW404", f"{message} (no automatic rewrite: {doubt})", why_no_fix=str(doubt))
        replacement = text if self._standalone_value() else wrap(text, vec.prec, ATOM)
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

    found = store(stmt)
    if found is not None:
        return found[0], [found[1]], None
    if isinstance(stmt, ast.If) and len(stmt.body) == 1 and len(stmt.orelse) == 1:
        a, b = store(stmt.body[0]), store(stmt.orelse[0])
        if a is not None and b is not None and a[0] == b[0]:
            return a[0], [a[1], b[1]], stmt.test
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

    found = append(stmt)
    if found is not None:
        return found[0], [found[1]], None
    if isinstance(stmt, ast.If) and len(stmt.body) == 1 and len(stmt.orelse) == 1:
        a, b = append(stmt.body[0]), append(stmt.orelse[0])
        if a is not None and b is not None and a[0] == b[0]:
            return a[0], [a[1], b[1]], stmt.test
    return None


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
