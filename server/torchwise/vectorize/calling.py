"""Calls in a loop body: every op by its batching rule from the one op table.

Element-wise ops (``Batch.POINTWISE``) stay as they are, with ``None`` dims added where a batched operand
has fewer element dims; ops along a dim (``Batch.DIM``) get their dim moved past the loop dims, and a
reduction of a whole slice reduces the element dims; the ``Batch.SPECIAL`` rows (``dot``, ``mv``, ``@``,
``.t()``) have their own rule here, as do a few vectorizer-only rules for ops the table has no row for yet
(``F.mse_loss``, ``F.one_hot``, ``topk``'s facts). A function of the file whose body vmap can batch becomes
``torch.vmap(f)``.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Optional

from torchwise.analysis import dims, layout, optable
from torchwise.analysis.dtypes import DType, is_complex, is_floating
from torchwise.analysis.optable import Batch, Family
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue
from torchwise.vectorize.expr import ATOM, COMPARE, TERM, Inherent, Refuse, spelled, wrap
from torchwise.vectorize.vec import (
    Vec, _ALL_DIMS_RENAMED, _ONE_DIM_ONLY, _PURE_BUILTINS, _PURE_FACTORIES, _PURE_METHODS, _RANDOM, _UNKNOWN,
    _certain, _compare_node, _dims_facts, _dims_value, _effective_rank, _either, _flag, _index, _int, _known, _matmul_node,
    _mul_node, _reduce_facts, _reduced_count, _same_promotion, _transposed, _unmoved, _unplaced, stacks_samples,
)

if TYPE_CHECKING:
    from torchwise.vectorize.batch import Batcher


class Calling:
    """The calls of a loop body (part of ``batch.Batcher``)."""

    # -- contractions: A[i, p] * B[p, j] summed over p -----------------------------------------------------
    def contraction(self, node: ast.expr, summed: list) -> Optional[str]:
        """A product of two full walks summed over some loops: ``torch.einsum``, or ``@`` / ``torch.outer`` where
        it is one (``s += x[i] * y[i]`` is ``x @ y``, ``C[i, j] += A[i, p] * B[p, j]`` is ``A @ B``)."""
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            return None
        sides = [self._full_walk(node.left), self._full_walk(node.right)]
        if None in sides:
            return None
        (a, la, fa), (b, lb, fb) = sides
        if fa.dtype != fb.dtype or not is_floating(fa.dtype):
            return None
        letters = "ijklmn"
        out = "".join(letters[k] for k in range(self.depth) if k not in summed)
        sa = "".join(letters[k] for k in la)
        sb = "".join(letters[k] for k in lb)
        used = set(sa) | set(sb)
        if set(out) | {letters[k] for k in summed} != used or any(letters[k] not in sa or letters[k] not in sb
                                                                  for k in summed):
            return None
        A, B = wrap(a, ATOM, TERM), wrap(b, ATOM, TERM + 1)
        if not summed and len(sa) == 1 and len(sb) == 1 and sa + sb == out:
            return f"{self.torch}.outer({a}, {b})"
        if len(summed) == 1:
            s_ = letters[summed[0]]
            if sa == s_ and sb == s_ and out == "":
                return f"{A} @ {B}"
            if len(sa) == 2 and len(sb) == 1 and sb == s_ and sa[1] == s_ and out == sa[0]:
                return f"{A} @ {B}"
            if len(sa) == 1 and len(sb) == 2 and sa == s_ and sb[0] == s_ and out == sb[1]:
                return f"{A} @ {B}"
            if len(sa) == 2 and len(sb) == 2 and len(out) == 2:
                x, y = out
                if sa == x + s_ and sb == s_ + y:
                    return f"{A} @ {B}"
                if sa == x + s_ and sb == y + s_:
                    return f"{A} @ {wrap(b, ATOM, ATOM)}.T"
                if sa == s_ + x and sb == s_ + y:
                    return f"{wrap(a, ATOM, ATOM)}.T @ {B}"
        return f'{self.torch}.einsum("{sa},{sb}->{out}", {a}, {b})'

    def _full_walk(self, node: ast.expr):
        """(text, the levels of its dims in order, facts) of ``A[i, p]`` / ``v`` walking every dim of a tensor whole."""
        if isinstance(node, ast.Name) and node.id in self.level_of and node.id not in self.env:
            k = self.level_of[node.id]
            element = self.levels[k].elements.get(node.id)
            if element is None or element.kind != "tensor" or len(element.whole.shape) != 1:
                return None
            return element.text, (k,), element.whole
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and not self.mentions_loop(node.value)):
            return None
        facts = self.ctx.value(node.value)
        parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not _known(facts) or len(parts) != len(facts.shape):
            return None
        found = []
        for part, size in zip(parts, facts.shape):
            affine = self.affine(part)
            if affine is None or affine[1:] != (1, 0):
                return None
            level = self.levels[affine[0]]
            if not (level.step == 1 and _certain(dims.dim_eq(level.start, 0))
                    and _certain(dims.dim_eq(level.count, size))):
                return None
            found.append(affine[0])
        if len(set(found)) != len(found):
            return None
        if node.value.id in self.targets:
            return None
        return node.value.id, tuple(found), facts

    # -- calls --------------------------------------------------------------------------------------------
    def _Call(self, node: ast.Call) -> Vec:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Refuse("starred arguments")
        qualname = self.scope.qualname(node.func)
        if qualname is not None:
            return self.qualified_call(node, qualname)
        if isinstance(node.func, ast.Attribute):
            return self.method_call(node)
        if isinstance(node.func, ast.Name):
            if self.scope.owner_of(node.func.id) is None and node.func.id in _PURE_BUILTINS:
                return self.builtin_call(node)
            layer = self.layer_call(node)
            if layer is not None:
                return layer
            user = self.user_function(node)
            if user is not None:
                return user
            raise Inherent(f"`{node.func.id}` may have effects")
        raise Inherent("a call that may have effects")

    def layer_call(self, node: ast.Call) -> Optional[Vec]:
        """``model(x[i])`` of a layer that treats each sample on its own (``per_sample_layer``): ``model(x)`` on the
        stacked samples. Its facts per sample and on the batch are the engine's; they must agree."""
        module = self.ctx.value(node.func)
        if not per_sample_layer(module):
            return None
        name = self.src(node.func)
        if node.keywords or len(node.args) != 1:
            raise Refuse(f"`{name}` called with other than one input")
        arg = self(node.args[0])
        if not arg.batched:
            raise Refuse(f"`{name}` of the same input in every iteration")
        if self.depth != 1 or not (arg.is_tensor and arg.batch_dims == 1 and not arg.lost and arg.whole is not None):
            raise Refuse(f"`{name}` of something that is not one tensor per element")
        elem = self.ctx.value(node)
        whole = self.oracle.module(node, module, [arg.whole])
        count = self.levels[0].count
        if not (_known(elem) and stacks_samples(whole, elem, count)):
            raise Refuse(f"what `{name}` gives on the whole batch is not known to be its samples' results")
        self.grad |= elem.requires_grad is not False
        return Vec(f"{wrap(name, ATOM, ATOM)}({arg.text})", ATOM, elem.with_(memory=None), whole.with_(memory=None),
                   arg.deps, fresh=True)

    def user_function(self, node: ast.Call) -> Optional[Vec]:
        """``f(x[i])`` of a function of this file whose body vmap can batch: ``torch.vmap(f)(x)`` (the article's
        tool for these). Its dtype and shape per element are the engine's facts of the call."""
        name = node.func.id
        owner = self.scope.owner_of(name)
        bindings = owner.bindings.get(name, ()) if owner is not None else ()
        if len(bindings) != 1 or not isinstance(bindings[0].node, ast.FunctionDef):
            return None
        function = bindings[0].node
        blocker = vmap_blocker(function, self.ctx.index.scope_of_node.get(function), self.scope)
        if blocker is not None:
            if blocker.startswith("effects"):
                raise Inherent(f"`{name}` may have effects")
            raise Refuse(f"`torch.vmap` cannot batch `{name}`: {blocker}")
        if node.keywords or len(node.args) != len(function.args.args):
            raise Refuse(f"`{name}` called with other arguments than its parameters")
        args = [self(a) for a in node.args]
        if self.depth != 1:
            raise Refuse("a function of this program inside nested loops")
        in_dims, texts = [], []
        for arg in args:
            if arg.batched:
                if not (arg.is_tensor and arg.batch_dims == 1 and not arg.lost):
                    raise Refuse(f"`{name}` of something that is not one tensor per element")
                in_dims.append("0")
            else:
                if arg.is_tensor is False and not isinstance(arg.elem, ScalarValue):
                    raise Refuse(f"`{name}` of an argument that is not a tensor or a number")
                in_dims.append("None")
            texts.append(arg.text)
        elem = self.ctx.value(node)
        if not _known(elem):
            raise Refuse(f"what `{name}` returns per element is unknown")
        count = self.levels[0].count
        dims_text = "" if all(d == "0" for d in in_dims) else \
            f", in_dims=({', '.join(in_dims)}{',' if len(in_dims) == 1 else ''})"
        text = f"{self.torch}.vmap({name}{dims_text})({', '.join(texts)})"
        shape = (count,) + tuple(elem.shape)
        fresh = _returns_new(function)
        strides = layout.contiguous_strides(shape) if fresh and len(elem.shape) == 0 else None
        inline = self._inline(function, args)
        if inline is not None and fresh and inline.whole.shape is not None and len(inline.whole.shape) == len(shape):
            strides = inline.whole.strides  # vmap runs the same batched ops: the same layout
        whole = elem.with_(shape=shape, strides=strides, memory=None)
        self.calls_user = True
        return Vec(text, ATOM, elem.with_(memory=None), whole, frozenset({0}), fresh=fresh)

    def qualified_call(self, node: ast.Call, qualname: str) -> Vec:
        if qualname.startswith("math."):
            raise Refuse(f"`{qualname}` computes in Python floats (and raises on overflow) where torch would not")
        if qualname == "torch.einsum":
            return _einsum(self, node)  # its row binds one operand; the rule reads them all
        if qualname.startswith("torch.nn.functional."):
            op = optable.functional(qualname.rsplit(".", 1)[1])
        elif qualname.startswith("torch.") and qualname.count(".") == 1:
            op = optable.function(qualname[len("torch."):])
        else:
            op = None
        if op is None:
            local = _LOCAL_RULES.get(qualname)
            if local is not None:
                return local(self, node)
            if qualname.rsplit(".", 1)[-1] in _RANDOM:
                raise Inherent(f"`{qualname}` draws random numbers")
            if qualname in ("torch.from_numpy", "torch.as_tensor", "torch.asarray"):
                # each element made from NumPy data (`data[i:i + n]` of a memmap): its rewrite is NumPy's fancy
                # indexing, outside what the loop does with tensors; not a walk over tensor elements
                raise Inherent(f"`{qualname}` makes each element from NumPy data")
            if not qualname.startswith("torch.") or qualname.startswith("torch.nn.") and \
                    not qualname.startswith("torch.nn.functional."):
                raise Inherent(f"`{qualname}` may have effects")
            raise Refuse(f"`{qualname}` has no batching rule")
        return self.table_call(node, op, self.src(node.func), receiver=None, qualname=qualname)

    def method_call(self, node: ast.Call) -> Vec:
        name = node.func.attr
        if name == "squeeze" and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant) \
                and node.args[0].value == 0 and type(node.args[0].value) is int:
            batch_of_one = self.batch_of_one(node, node.func.value)  # `F.interpolate(img[None], ...).squeeze(0)`
            if batch_of_one is not None:
                return batch_of_one
        if name in ("item",) and not node.args and not node.keywords:
            return self.to_python(self(node.func.value), "item")
        if name == "tolist" and not node.args:
            raise Refuse("`.tolist()` of a batched value")
        if name == "dist" and self.scope.qualname(node.func) is None:
            return self(_dist_spelled(self, node, [node.func.value, *node.args], node.keywords))
        if name == "sum" and not node.args and not node.keywords and self.depth == 2:
            grid = self._grid_dot(node.func.value)
            if grid is not None:
                return grid
        receiver = self(node.func.value)
        if name == "trace" and not node.args and not node.keywords and receiver.batched:
            return _trace_of(self, receiver)
        if name in ("argmax", "argmin") and not node.args and not node.keywords and receiver.batched \
                and receiver.is_tensor and receiver.rank >= 2:
            # the index into the flattened slice: the same op of the slice flattened (ties: the first, both ways)
            flat = ast.Call(func=ast.Attribute(value=node.func.value, attr="flatten", ctx=ast.Load()), args=[],
                            keywords=[])
            return self(spelled(ast.Call(func=ast.Attribute(value=spelled(flat, node), attr=name, ctx=ast.Load()),
                                         args=[], keywords=[]), node))
        if not receiver.batched:
            if not receiver.is_tensor:
                raise Inherent(f"`.{name}()` of something that is not a tensor")
            raise Refuse("a method of a loop-invariant value with batched arguments")
        if receiver.parts is not None or not receiver.is_tensor:
            raise Refuse(f"`.{name}()` of something that is not a tensor")
        op = optable.method(name)
        if op is None:
            if name.endswith("_") or name not in _PURE_METHODS:
                raise Inherent(f"`.{name}()` may have effects")
            raise Refuse(f"`.{name}()` has no batching rule")
        return self.table_call(node, op, None, receiver=receiver, qualname=None)

    def to_python(self, value: Vec, how: str) -> Vec:
        """``.item()``, ``float(v)``, ``int(v)``: one Python number per element."""
        # `lost` dims are size 1: `.item()` of a (1,)-shaped element (a `torch.randn(1)` bias added) is its one number
        if not (value.is_tensor and value.rank == 0 and value.batched):
            raise Refuse(f"`{how}` of something that is not one number per element")
        dtype = value.dtype
        if dtype is None:
            raise Refuse(f"`{how}` of a tensor of unknown dtype (int or float?)")
        if how == "item":
            kind = "bool" if dtype is DType.bool else "float" if is_floating(dtype) else "int"
            return replace(value, elem=ScalarValue(kind), python=True, keepdim=None, moved=None, lost=0)
        if how == "int":
            if is_floating(dtype):
                raise Refuse("`int()` of a float raises on NaN and inf, `.long()` does not")
            return replace(value, elem=ScalarValue("int"), python=True, keepdim=None, moved=None, lost=0)
        if how == "float":
            return replace(value, elem=ScalarValue("float"), python=True, keepdim=None, moved=None, lost=0)
        if how == "bool":
            if dtype is not DType.bool:
                raise Refuse("`bool()` of a number")
            return replace(value, elem=ScalarValue("bool"), python=True, keepdim=None, moved=None, lost=0)
        raise Refuse(f"`{how}` not understood")

    def builtin_call(self, node: ast.Call) -> Vec:
        name = node.func.id
        if node.keywords:
            raise Refuse(f"`{name}` with keywords")
        args = [self(a) for a in node.args]
        if name in ("float", "int", "bool") and len(args) == 1:
            if args[0].python:
                if name == "float" and args[0].elem.kind == "float" or name == "int" and args[0].elem.kind == "int":
                    return args[0]
                if name == "float" and args[0].elem.kind == "int" and args[0].whole.dtype is DType.int64:
                    # int -> float rounds to nearest in Python and in an int64 -> float64 cast alike
                    value = args[0]
                    return replace(value, text=f"{value.atom()}.double()", prec=ATOM, elem=ScalarValue("float"),
                                   whole=value.whole.with_(dtype=DType.float64), fresh=True, base=None)
                if name == "int" and args[0].elem.kind == "bool" and args[0].whole.dtype is DType.bool:
                    # `int(p.item() == l.item())`: a Python bool is 0 or 1, as a bool tensor cast to int64
                    value = args[0]
                    return replace(value, text=f"{value.atom()}.long()", prec=ATOM, elem=ScalarValue("int"),
                                   whole=value.whole.with_(dtype=DType.int64), fresh=True, base=None)
                raise Refuse(f"`{name}()` of a Python number")
            return self.to_python(args[0], name)
        if name == "abs" and len(args) == 1 and args[0].python and args[0].elem.kind in ("int", "float"):
            value = args[0]
            whole = value.whole if value.elem.kind == "int" and value.whole.dtype is DType.int64 else None
            if whole is None:
                raise Refuse("`abs()` of a Python float")
            return replace(value, text=f"{value.atom()}.abs()", prec=ATOM, fresh=True, base=None)
        if name == "abs" and len(args) == 1 and args[0].is_tensor:
            op = optable.method("abs")
            return self.table_call(node, op, None, receiver=args[0], qualname=None, given=[])
        if name in ("max", "min") and len(args) == 2:
            # Python's max(a, b) is a unless b > a (min: unless b < a): the same choice per element.
            a, b = args
            symbol = ">" if name == "max" else "<"
            cond = self.pointwise(
                [b, a], lambda t, p: (f"{wrap(t[0], p[0], COMPARE + 1)} {symbol} {wrap(t[1], p[1], COMPARE + 1)}",
                                      COMPARE),
                lambda values: self.oracle.compare(_compare_node(symbol), values[0], values[1]), python_op=symbol)
            return self.clamped(symbol, b, a, b, a, self.where(cond, b, a, python_choice=True))
        if name == "round" and len(args) == 1 and args[0].is_tensor:
            op = optable.method("round")
            return self.table_call(node, op, None, receiver=args[0], qualname=None, given=[])
        if name == "len" and len(args) == 1 and args[0].is_tensor and args[0].rank >= 1:
            size = args[0].shape[0]
            if type(size) is int:
                return Vec(str(size), ATOM, ScalarValue("int", size))
        raise Refuse(f"`{name}()` of a batched value")

    def _inline(self, function: ast.FunctionDef, args: list) -> Optional[Vec]:
        """``function``'s body batched by this translator (its parameters bound to the arguments): the layout
        of what vmap computes, or None where some step has no batched form here."""
        inner_scope = self.ctx.index.scope_of_node.get(function)
        if inner_scope is None:
            return None
        other = type(self)(self.ctx, inner_scope, self.levels, self.oracle, self.torch,
                        bound={p.arg for p in function.args.args} | {n.id for n in ast.walk(function)
                                                                     if isinstance(n, ast.Name)
                                                                     and isinstance(n.ctx, ast.Store)})
        other.env = {p.arg: a for p, a in zip(function.args.args, args)}
        try:
            for stmt in function.body:
                if isinstance(stmt, ast.Assign):
                    other.env[stmt.targets[0].id] = other(stmt.value)
                elif isinstance(stmt, ast.Return):
                    return other(stmt.value)
        except Refuse:
            return None
        return None

    def table_call(self, node: ast.Call, op, func_text: Optional[str], receiver: Optional[Vec], qualname,
                   given: Optional[list] = None) -> Vec:
        """A call of a table op with batched arguments, by the op's batching rule."""
        if op.has("random"):
            raise Inherent(f"`{op.name}` draws random numbers: one draw per element is not one draw per tensor")
        if op.name in ("cat", "stack") and given is None and receiver is None and node.args \
                and isinstance(node.args[0], (ast.List, ast.Tuple)):
            return self.joined_literal(node, op, func_text, qualname)
        args = [self(a) for a in node.args] if given is None else given
        kwargs = {k.arg: self(k.value) for k in node.keywords} if given is None else {}
        other = args[0 if receiver is not None else 1] if len(args) == (1 if receiver is not None else 2) else None
        if op.name in ("min", "max") and not kwargs and other is not None and other.is_tensor:
            # `torch.min(a, b)` of two tensors is the element-wise `torch.minimum(a, b)`, not a reduction over a dim
            op = (optable.method if receiver is not None else optable.function)(
                "minimum" if op.name == "min" else "maximum")
        try:
            bound = optable.bind(op.signature, args, kwargs, receiver=receiver)
        except optable.Unbound as err:
            raise Refuse(f"`{op.name}`: {err}") from None
        tensors = [name for name in op.inputs if name in bound]
        if not any(isinstance(v, Vec) and v.batched for v in bound.values()):
            raise Refuse("internal: an invariant call")
        for name, value in bound.items():
            if name not in tensors and value.batched:
                raise Refuse(f"`{op.name}`'s `{name}` depends on the loop")
        dot = self._sum_of_product(node, op, bound, receiver)
        if dot is not None:
            return dot
        if any(isinstance(v, Vec) and v.ragged is not None for v in bound.values()):
            return self.ragged_sum(bound[op.inputs[0]], op, bound, node)
        if op.batch is Batch.POINTWISE:
            return self._call_pointwise(node, op, func_text, receiver, bound, qualname)
        if op.batch is Batch.DIM:
            return self._call_dim(node, op, func_text, receiver, bound, qualname)
        if op.batch is Batch.SPECIAL:
            special = _SPECIAL.get(op.name)
            if special is not None:
                return special(self, node, op, func_text, receiver, bound, qualname)
        raise Refuse(f"`{op.name}` has no batched form")

    def _sum_of_product(self, node: ast.Call, op, bound: dict, receiver) -> Optional[Vec]:
        """``(x[i] * w).sum()`` of a row and a vector: one dot product per row, ``x @ w``."""
        if op.name != "sum" or set(bound) - {"input"}:
            return None
        product = node.func.value if receiver is not None else (node.args[0] if node.args else None)
        if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
            return None
        sides = [self(product.left), self(product.right)]
        rows = [v for v in sides if v.batched]
        vectors = [v for v in sides if not v.batched]
        if len(rows) != 1 or len(vectors) != 1:
            return None
        row, vector = rows[0], vectors[0]
        if not (row.is_tensor and vector.is_tensor and row.rank == 1 and vector.rank == 1 and row.batch_dims == 1
                and not row.lost and row.dtype == vector.dtype and row.dtype is not None and is_floating(row.dtype)
                and _certain(dims.dim_eq(row.shape[0], vector.shape[0]))):
            return None
        elem = self._facts_named(node, op, receiver is not None, {"input": bound["input"].elem}, "torch.sum", "sum")
        whole = self.oracle.binary(_matmul_node(), row.whole, vector.elem)
        vec = Vec(f"{wrap(row.text, row.prec, TERM)} @ {wrap(vector.text, vector.prec, TERM + 1)}", TERM, elem, whole,
                  row.deps)
        try:
            self.prove(vec)
        except Refuse:
            return None
        return vec

    def _render_call(self, op, func_text, receiver: Optional[Vec], texts: dict, positional: int, node):
        """The call's text with its arguments' new texts: positional ones stay positional, the rest keywords."""
        names = [p.name for p in op.signature.params]
        if receiver is not None:
            head = f"{texts[names[0]]}.{node.func.attr if isinstance(node.func, ast.Attribute) else op.name}"
            names = names[1:]
        else:
            head = func_text
        given_kwargs = {k.arg for k in node.keywords} if isinstance(node, ast.Call) else set()
        return _call_text(head, names, texts, positional, given_kwargs)

    def _positional(self, node, receiver) -> int:
        return len(node.args) if isinstance(node, ast.Call) else 0

    def _facts_call(self, node, op, receiver, bound: dict, use_whole: bool, qualname):
        values = {name: (self._whole_operand(v) if use_whole else v.elem) for name, v in bound.items()}
        args, kwargs = _unbind(op, values, receiver is not None, self._positional(node, receiver))
        if receiver is not None:
            first = op.signature.params[0].name
            name = node.func.attr if isinstance(node.func, ast.Attribute) else op.name
            return self.oracle.method(node, name, values[first], args, kwargs)
        return self.oracle.function(node, qualname, args, kwargs)

    def _call_pointwise(self, node, op, func_text, receiver, bound, qualname) -> Vec:
        names = list(bound)
        operands = [bound[n] for n in names]

        def render(texts, precs):
            mapping = {}
            for name, text, prec, vec in zip(names, texts, precs, operands):
                mapping[name] = wrap(text, prec, ATOM) if receiver is not None and name == names[0] else text
            return self._render_call(op, func_text, receiver, mapping, self._positional(node, receiver), node), ATOM

        def facts_of(values):
            return self._facts_call(node, op, receiver, dict(zip(names, [_FactsOnly(v) for v in values])), False,
                                    qualname)

        result = self.pointwise(operands, render, facts_of)
        fresh = True
        if op.family is Family.CUSTOM and op.name in ("contiguous", "detach", "to", "float", "double", "half",
                                                      "bfloat16",
                                                      "long", "int", "short", "bool", "byte", "char"):
            # a conversion that changes nothing returns its input itself
            source = operands[0]
            fresh = source.fresh or source.dtype != result.dtype
            if op.name == "contiguous":
                fresh = source.fresh or not source.row_major
        return replace(result, fresh=fresh)

    def _call_dim(self, node, op, func_text, receiver, bound, qualname) -> Vec:
        """The op with its dim arguments moved past the loop dims; a reduction of a whole slice reduces the
        element's dims."""
        names = list(bound)
        inputs = [n for n in names if n in op.inputs]
        batched = [bound[n] for n in inputs if bound[n].batched]
        if op.name in ("cat", "stack"):
            return self._cat_stack(node, op, func_text, bound, qualname)
        first = bound[inputs[0]]
        # a reduction of several tensors broadcasts them first: `cosine_similarity(query, k, dim=0)` over the rows
        # `k` of `keys` is `cosine_similarity(query, keys, dim=1)` (`query` lines up with each row from the right)
        broadcasting = op.family is Family.REDUCTION and len(inputs) > 1
        if not first.batched and not broadcasting:
            raise Refuse(f"`{op.name}` of a loop-invariant tensor along a batched one")
        wanted = max(v.rank for v in batched)
        invariant = [bound[n] for n in inputs if not bound[n].batched]
        if any(v.is_tensor and _effective_rank(v) > wanted for v in invariant):
            raise Refuse(f"`{op.name}` of a loop-invariant operand with more dims than the slices")
        padded = {n: (self.pad(bound[n], wanted) if bound[n].batched else bound[n]) for n in names}
        base = padded[next(n for n in inputs if padded[n].batched)]
        rank, lead = base.rank, max(padded[n].batch_dims for n in inputs if padded[n].batched)
        if any(padded[n].batch_dims != lead for n in inputs if padded[n].batched) \
                and not (op.family is Family.REDUCTION and len(inputs) > 1):
            # (a reduction of several tensors broadcasts them first: `cosine_similarity(a[i], b[j], dim=0)` of
            # `a[:, None]` and `b` is the (N, M) grid, its dim past both loop dims)
            raise Refuse(f"`{op.name}` of operands along different loop dims")
        if base.lost:
            raise Refuse("an op along dims of a value with leading dims from an invariant operand")
        texts, whole_dims, elem_dims = {}, {}, {}
        renamed = op.name
        full_reduction = False
        for pname in op.dims:
            param = op.signature.param(pname)
            if param is None:
                continue
            given = pname in bound
            value = bound.get(pname)
            if given and value.batched:
                raise Refuse(f"`{op.name}`'s `{pname}` depends on the loop")
            if given:
                dim = _dims_value(value.elem)
                if dim is _UNKNOWN:
                    raise Refuse(f"`{op.name}`'s `{pname}` is not a known int")
            else:
                dim = param.default
                if dim is optable.REQUIRED:
                    raise Refuse(f"`{op.name}` needs `{pname}`")
                if isinstance(dim, tuple) and dim == () and op.name in ("amax", "amin"):
                    dim = None
            if dim is None:
                if op.family is not Family.REDUCTION:
                    raise Refuse(f"`{op.name}` without `{pname}` (it flattens)")
                full_reduction = True
                if rank == 0:
                    moved = None
                elif rank == 1 or op.name not in _ONE_DIM_ONLY:
                    moved = lead if rank == 1 else tuple(range(lead, lead + rank))
                else:
                    raise Refuse(f"`{op.name}` of a slice of {rank} dims")
                elem_dims[pname] = None
                whole_dims[pname] = moved
                renamed = _ALL_DIMS_RENAMED.get(op.name, op.name)
                if moved is None:
                    continue
                texts[pname] = str(moved) if isinstance(moved, int) else "(" + ", ".join(map(str, moved)) + ")"
                continue
            items = dim if isinstance(dim, tuple) else (dim,)
            shifted = []
            for d in items:
                if rank == 0 and op.family is Family.SCAN and d in (0, -1) and not op.has("no_scalar_dim"):
                    raise Refuse(f"`{op.name}` of 0-d slices")
                if not -max(rank, 1) <= d < max(rank, 1):
                    raise Refuse(f"`{op.name}`'s {pname}={d} is out of range for the slice")
                shifted.append(d + lead if d >= 0 else d)
            new = tuple(shifted) if isinstance(dim, tuple) else shifted[0]
            elem_dims[pname] = dim
            whole_dims[pname] = new
            texts[pname] = str(new) if isinstance(new, int) else \
                "(" + ", ".join(map(str, new)) + ("," if len(new) == 1 else "") + ")"
        if full_reduction and rank == 0:
            # a reduction of a 0-d slice is the element itself (with the reduction's dtype rule)
            raise Refuse(f"`{op.name}` of 0-d slices")
        for name in names:
            if name in texts:
                continue
            vec = padded[name]
            texts[name] = vec.atom() if receiver is not None and name == names[0] else vec.text
        method_name = renamed if receiver is not None else None
        if renamed != op.name:
            op_used = optable.method(renamed) if receiver is not None else optable.function(renamed)
            if op_used is None:
                raise Refuse(f"`{renamed}` is not in the op table")
        else:
            op_used = op
        head_func = func_text
        if receiver is None and renamed != op.name:
            head_func = func_text.rsplit(".", 1)[0] + "." + renamed
        text = self._render_call_named(op_used, head_func, receiver is not None, texts, node, method_name,
                                       moved_dims=set(whole_dims))
        elem_values = {n: bound[n].elem for n in names}
        whole_values = {n: self._whole_operand(padded[n]) for n in names}
        for pname in whole_dims:
            elem_values[pname] = _dims_facts(elem_dims[pname])
            whole_values[pname] = _dims_facts(whole_dims[pname])
        elem = self._facts_named(node, op, receiver is not None, elem_values, qualname, op.name)
        whole = self._facts_named(node, op_used, receiver is not None, whole_values,
                                  qualname if renamed == op.name or qualname is None
                                  else qualname.rsplit(".", 1)[0] + "." + renamed, renamed)
        deps = frozenset().union(*(bound[n].deps for n in inputs))
        if op.name in ("median", "nanmedian"):
            strides = getattr(bound[names[0]].whole, "strides", None)
            if strides is None or 0 in strides:
                # torch 2.13: `x.median(dim)` along an expanded (stride-0) dim returns garbage, where the loop's
                # median of each (expanded) slice is right
                raise Refuse(f"`{op.name}` along a dim of unknown or zero stride (an expanded tensor)")
        if full_reduction and op.has("values_indices") and isinstance(elem, TensorValue) \
                and isinstance(whole, SeqValue) and whole.items and len(whole.items) == 2:
            # `row.median()` is one value; with a dim, `x.median(1)` is (values, indices): its values. An empty
            # slice's median is NaN, where the dim form raises
            if not all(dims.dim_lt(0, d) is True for d in bound[names[0]].shape):
                raise Refuse(f"`{op.name}()` of an empty slice is NaN, with a dim it raises: the slices may be empty")
            vec = Vec(f"{wrap(text, ATOM, ATOM)}.values", ATOM, elem, whole.items[0], deps)
            self.prove(vec)
            return vec
        if isinstance(elem, SeqValue) and isinstance(whole, SeqValue) and elem.items and whole.items \
                and len(elem.items) == len(whole.items) == 2:
            parts = []
            for index, (e, w) in enumerate(zip(elem.items, whole.items)):
                part = Vec(f"{wrap(text, ATOM, ATOM)}[{index}]", ATOM, e, w, deps, free=True)
                self.prove(part)
                parts.append(part)
            return Vec(text, ATOM, elem, whole, deps, parts=tuple(parts))
        tensors = [padded[n] for n in inputs if padded[n].is_tensor]
        free = _same_promotion(tensors) if len(tensors) > 1 else True  # one input: the dtype rule is its own
        vec = Vec(text, ATOM, elem, whole, deps, free=free)
        self.prove(vec)
        keepdim = None
        kept = 0
        if op.family is Family.REDUCTION and op.signature.param("keepdim") is not None \
                and not (("keepdim" in bound) and _flag(bound["keepdim"].elem) is not False) and op.name != "norm" \
                or op.name == "norm" and op.signature.param("keepdim") is not None and "keepdim" not in bound:
            reduced = _reduced_count(whole_dims, rank)
            if reduced:
                keepdim = text[:-1] + (", " if text[-2] != "(" else "") + "keepdim=True)"
                kept = reduced
        if op.name in ("max", "min") and not full_reduction:
            keepdim = None
        vec = replace(vec, keepdim=keepdim, kept=kept)
        vec = self._moved_dims(vec, op, op_used, head_func, receiver, texts, names, inputs, padded, whole_dims, node,
                               rank, method_name, full_reduction)
        if renamed in ("amax", "amin") and not self.grad:
            # without grad, `max(dim=d).values` is amax's values (NaN too), and much faster on CPU
            vec = replace(vec, text=_max_values(vec.text, self.torch), keepdim=vec.keepdim and _max_values(
                vec.keepdim, self.torch), moved=vec.moved and (_max_values(vec.moved[0], self.torch),) + vec.moved[1:],
                keepdim_moved=vec.keepdim_moved and (_max_values(vec.keepdim_moved[0], self.torch),)
                + vec.keepdim_moved[1:])
        return vec

    def _moved_dims(self, vec: Vec, op, op_used, head_func, receiver, texts, names, inputs, padded, whole_dims, node,
                    rank, method_name, full_reduction) -> Vec:
        """A column walk reduced or scanned along its dims: the op on the data in its own dim order
        (``X[:, j].mean()`` is ``X.mean(dim=0)``; ``X.T.mean(dim=1)`` would be the same values, later)."""
        batched = [padded[n] for n in inputs if padded[n].batched]
        if self.depth != 1 or not batched or any(v.moved is None for v in batched):
            return vec
        k = batched[0].moved[2]
        if any(v.moved[2] != k for v in batched) or any(padded[n].is_tensor and padded[n].rank > 0
                                                       for n in inputs if not padded[n].batched):
            return vec
        mapped = dict(texts)
        for n in inputs:
            if padded[n].batched:
                mapped[n] = wrap(padded[n].moved[0], ATOM, ATOM)
        removed = []
        for pname, whole in whole_dims.items():
            if whole is None:
                return vec
            items = whole if isinstance(whole, tuple) else (whole,)
            elems = [d - 1 if d >= 0 else rank + d for d in items]
            originals = [e if e < k else e + 1 for e in elems]
            removed += originals
            mapped[pname] = str(originals[0]) if not isinstance(whole, tuple) else \
                "(" + ", ".join(map(str, originals)) + ("," if len(originals) == 1 else "") + ")"
        text = self._render_call_named(op_used, head_func, receiver is not None, mapped, node, method_name)
        keeps = op.family is Family.SCAN or "keepdim" in (k_.arg for k_ in node.keywords) and vec.keepdim is None
        if keeps:
            return replace(vec, moved=(text, None, k))
        before = sum(1 for o in removed if o < k)
        moved_keepdim = None
        if vec.keepdim is not None:
            moved_keepdim = (text[:-1] + (", " if text[-2] != "(" else "") + "keepdim=True)", None, k)
        if k - before == 0:
            values = {n: ((padded[n].moved[1] or _unmoved(padded[n].whole, k)) if padded[n].batched
                          else padded[n].elem) for n in names}
            for pname, whole in whole_dims.items():
                items = whole if isinstance(whole, tuple) else (whole,)
                originals = [(d - 1 if d >= 0 else rank + d) for d in items]
                originals = tuple(e if e < k else e + 1 for e in originals)
                values[pname] = _dims_facts(originals if isinstance(whole, tuple) else originals[0])
            facts = self._facts_named(node, op_used, receiver is not None, values, None if receiver is not None else
                                      "torch." + head_func.rsplit(".", 1)[-1], method_name or op_used.name)
            if not _known(facts) or tuple(facts.shape) != tuple(vec.whole.shape):
                return vec
            return replace(vec, text=text, prec=ATOM, keepdim_moved=moved_keepdim, moved=None, whole=facts)
        return replace(vec, moved=(text, None, k - before), keepdim_moved=moved_keepdim)

    def _render_call_named(self, op, func_text, is_method: bool, texts: dict, node, method_name, moved_dims=()):
        names = [p.name for p in op.signature.params]
        given_kwargs = {k.arg for k in node.keywords}
        positional = len(node.args)
        if is_method:
            head = f"{texts[names[0]]}.{method_name or node.func.attr}"
            names = names[1:]
        else:
            head = func_text
        return _call_text(head, names, texts, positional, given_kwargs)

    def _facts_named(self, node, op, is_method: bool, values: dict, qualname, name):
        args, kwargs = [], {}
        params = list(op.signature.params)
        receiver = None
        if is_method:
            receiver = values.get(params[0].name)
            params = params[1:]
        positional = True
        for param in params:
            if param.name not in values:
                positional = False
                continue
            if positional and not param.kw_only:
                args.append(values[param.name])
            else:
                kwargs[param.name] = values[param.name]
        if is_method:
            found = self.oracle.method(node, name, receiver, args, kwargs)
        else:
            found = self.oracle.function(node, qualname, args, kwargs)
        if found is None and op.name in _LOCAL_FACTS:
            found = _LOCAL_FACTS[op.name](values)
        return found

    def joined_literal(self, node: ast.Call, op, func_text: str, qualname: str) -> Vec:
        """``torch.stack([a, b, c], dim=d)`` (or ``cat``) of a literal list of per-element tensors: the same list of
        the batched wholes, joined at ``d`` moved past the loop dims. Every item must vary along the same loops with
        all their dims (nothing to broadcast: ``stack`` does not); the engine's facts of the join, asked for one
        element and for the wholes, must agree (shapes, promotion)."""
        items = node.args[0].elts
        if not items or any(isinstance(e, ast.Starred) for e in items):
            raise Refuse(f"`{op.name}` of an empty or starred list")
        dim = self._join_dim(node)
        vecs = [self(e) for e in items]
        first = vecs[0]
        for vec in vecs:
            if not (vec.batched and vec.is_tensor) or vec.parts is not None or vec.ragged is not None:
                raise Refuse(f"`{op.name}` of a list whose items are not all tensors of the loop")
            if vec.lost or vec.deps != first.deps or vec.batch_dims != len(first.deps) or vec.rank != first.rank:
                raise Refuse(f"`{op.name}` of items that would broadcast differently")
        rank = first.rank + (1 if op.name == "stack" else 0)
        if op.name == "cat" and first.rank == 0:
            raise Refuse("`torch.cat` of 0-d tensors raises")
        if not -rank <= dim < rank:
            raise Refuse(f"`{op.name}` along a dim out of range (it raises)")
        moved = (dim % rank) + first.batch_dims
        dim_value = ScalarValue("int", dim)
        elem = self.oracle.function(node, qualname, [SeqValue("list", tuple(v.elem for v in vecs))],
                                    {"dim": dim_value})
        whole = self.oracle.function(node, qualname, [SeqValue("list", tuple(v.whole for v in vecs))],
                                     {"dim": ScalarValue("int", moved)})
        if not (_known(elem) and _known(whole)):
            raise Refuse(f"`{op.name}` the analysis cannot follow here")
        if len(whole.shape) < 4:  # a join is new row-major memory (4-d and more may follow channels_last inputs)
            whole = whole.with_(strides=layout.contiguous_strides(tuple(whole.shape)), memory=None)
            elem = elem.with_(strides=layout.contiguous_strides(tuple(elem.shape)), memory=None)
        deps = frozenset().union(*(v.deps for v in vecs))
        text = f"{func_text}([{', '.join(v.text for v in vecs)}], dim={moved})"
        vec = Vec(text, ATOM, elem, whole, deps)
        self.prove(vec)
        return vec

    def _join_dim(self, node: ast.Call) -> int:
        """The literal int ``dim`` of a ``cat`` / ``stack`` call (0 when not given)."""
        given = node.args[1:2] + [k.value for k in node.keywords if k.arg == "dim"]
        if len(node.args) > 2 or len(given) > 1 or any(k.arg != "dim" for k in node.keywords):
            raise Refuse("`cat` / `stack` with other arguments")
        if not given:
            return 0
        value = given[0]
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Constant):
            value = ast.Constant(-value.operand.value)
        if not (isinstance(value, ast.Constant) and type(value.value) is int):
            raise Refuse("`cat` / `stack` along a dim that is not a literal int")
        return value.value

    def _cat_stack(self, node, op, func_text, bound, qualname) -> Vec:
        raise Refuse(f"`{op.name}` inside a loop body")

    def outer(self, left: Vec, right: Vec) -> Vec:
        """``torch.outer(x[i], y[i])``: each element's products as a broadcast (``x[..., :, None] * y[..., None, :]``),
        one multiply per entry as ``outer`` does."""
        if not (left.is_tensor and right.is_tensor and left.rank == 1 and right.rank == 1) or left.lost or right.lost:
            raise Refuse("`outer` of values that are not vectors")

        def placed(vec: Vec, column: bool) -> tuple:
            lead = "..., " if vec.batched else ""
            text = f"{vec.atom()}[{lead}{':, None' if column else 'None, :'}]"
            facts = vec.whole if vec.batched else vec.elem
            shape = tuple(facts.shape[:-1]) + ((facts.shape[-1], 1) if column else (1, facts.shape[-1]))
            return text, facts.with_(shape=shape, strides=None)

        (lt, lw), (rt, rw) = placed(left, True), placed(right, False)
        whole = self.oracle.binary(_mul_node(), lw, rw)
        elem = self.oracle.binary(_mul_node(), left.elem.with_(shape=(left.elem.shape[0], 1), strides=None),
                                  right.elem.with_(shape=(1, right.elem.shape[0]), strides=None))
        if not (isinstance(whole, TensorValue) and isinstance(elem, TensorValue)):
            raise Refuse("an `outer` the analysis cannot follow")
        vec = Vec(f"{lt} * {rt}", TERM, elem, whole, left.deps | right.deps, fresh=True)
        self.prove(vec)
        return vec

    def _matrix_vector(self, left: Vec, right: Vec) -> tuple:
        """``A[i] @ v[i]`` is ``(A @ v[..., None])[..., 0]``; ``v[i] @ B[i]`` is ``(v[..., None, :] @ B)[..., 0, :]``."""
        def widened(vec: Vec, shape: tuple) -> TensorValue:
            return vec.whole.with_(shape=shape, strides=layout.contiguous_strides(shape))

        lw, rw = left.whole.shape, right.whole.shape
        if left.rank == 2:
            product = self.oracle.binary(_matmul_node(), left.whole, widened(right, tuple(rw) + (1,)))
            text = f"({wrap(left.text, left.prec, TERM)} @ {right.atom()}[..., None])[..., 0]"
            keep = lambda shape: tuple(shape[:-1])  # noqa: E731
        else:
            product = self.oracle.binary(_matmul_node(), widened(left, tuple(lw[:-1]) + (1, lw[-1])), right.whole)
            text = f"({left.atom()}[..., None, :] @ {wrap(right.text, right.prec, TERM + 1)})[..., 0, :]"
            keep = lambda shape: tuple(shape[:-2]) + (shape[-1],)  # noqa: E731
        if not isinstance(product, TensorValue) or product.shape is None:
            raise Refuse("a matrix product the analysis cannot follow (or PyTorch would raise)")
        shape = keep(product.shape)
        return text, ATOM, product.with_(shape=shape, strides=layout.contiguous_strides(shape))

    def matmul(self, node, left: Vec, right: Vec) -> Vec:
        """``@`` and its spellings (``dot``, ``mv``, ``mm``, ``matmul``): the batched form per operand ranks."""
        if not (left.is_tensor and right.is_tensor):
            raise Refuse("a matrix product of numbers")
        if left.lost or right.lost:
            raise Refuse("a matrix product of a value with leading dims from an invariant operand")
        elem = self.oracle.binary(_matmul_node(), left.elem, right.elem)
        if not isinstance(elem, TensorValue):
            raise Refuse("a matrix product the analysis cannot follow (or PyTorch would raise)")
        if self.depth != 1:
            return self._grid_matmul(left, right, elem)
        product = f"{wrap(left.text, left.prec, TERM)} @ {wrap(right.text, right.prec, TERM + 1)}"
        if left.batched and right.batched:
            if left.rank == 1 and right.rank == 1:
                # one dot product per row: the rows' products summed
                text, prec = f"({wrap(left.text, left.prec, TERM)} * {wrap(right.text, right.prec, TERM + 1)})" \
                    ".sum(dim=1)", ATOM
                whole = _reduce_facts(self.oracle.binary(_mul_node(), left.whole, right.whole), 1)
            elif left.rank == 2 and right.rank == 2:
                text, prec = product, TERM  # a batched matrix product
                whole = self.oracle.binary(_matmul_node(), left.whole, right.whole)
            elif (left.rank, right.rank) in ((2, 1), (1, 2)):
                # a matrix times a vector per row: the vector as a one-column (one-row) matrix, taken out after
                text, prec, whole = self._matrix_vector(left, right)
            else:
                raise Refuse("a matrix product of batched values of these ranks")
        elif left.batched:
            text, prec = product, TERM  # (N, ..., k) @ w: the rows' products
            whole = self.oracle.binary(_matmul_node(), left.whole, right.elem)
        elif right.rank == 1:
            # w @ x[i] is x[i] @ w (1-d w) or x[i] @ W.T (2-d W)
            text = f"{wrap(right.text, right.prec, TERM)} @ {left.atom()}{'.T' if left.rank == 2 else ''}"
            prec = TERM
            value = left.elem if left.rank == 1 else _transposed(left.elem, 0, 1)
            whole = self.oracle.binary(_matmul_node(), right.whole, value)
        else:
            text, prec = product, TERM  # W @ x[i] of matrices: matmul broadcasts W over the rows
            whole = self.oracle.binary(_matmul_node(), left.elem, right.whole)
        vec = Vec(text, prec, elem, whole, left.deps | right.deps, free=True)  # matmul needs one dtype: its own
        self.prove(vec)
        return vec

    def _grid_matmul(self, left: Vec, right: Vec, elem) -> Vec:
        """``torch.dot(X[i], Y[j])`` over two loops: the product of the two walks (``X @ Y.T``)."""
        if not (left.rank == 1 and right.rank == 1 and left.batched and right.batched and self.depth == 2
                and left.deps == frozenset({0}) and right.deps == frozenset({1})):
            raise Refuse("a matrix product inside nested loops")
        a, b = _unplaced(left), _unplaced(right)
        if a is None or b is None:
            raise Refuse("a matrix product of computed values inside nested loops")
        text = f"{wrap(a[0], ATOM, TERM)} @ {wrap(b[0], ATOM, ATOM)}.T"
        whole = self.oracle.binary(_matmul_node(), a[1], _transposed(b[1], 0, 1))
        vec = Vec(text, TERM, elem, whole, frozenset({0, 1}))
        self.prove(vec)
        return vec

    def _grid_dot(self, product: ast.expr) -> Optional[Vec]:
        """``(u(i) * v(j)).sum()`` over two loops, ``u`` and ``v`` vectors of one float dtype that each follow one
        loop: a dot product per pair, so one matrix product of the two batched operands (``U @ V.T``, as
        ``torch.dot(X[i], X[j])`` is ``X @ X.T``), not the (I, J, n) broadcast product summed. For float32/64 vectors of
        one length, ``(a * b).sum()`` and ``torch.dot(a, b)`` are the same number up to the order of the sum."""
        if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
            return None
        try:
            left, right = self(product.left), self(product.right)
        except Refuse:
            return None
        nodes = (product.left, product.right)
        if right.deps == frozenset({0}) and left.deps == frozenset({1}):
            left, right, nodes = right, left, nodes[::-1]
        if not (left.deps == frozenset({0}) and right.deps == frozenset({1})):
            return None
        if not all(v.is_tensor and v.rank == 1 and not v.lost and v.dtype in (DType.float32, DType.float64)
                   for v in (left, right)) or left.dtype != right.dtype:
            return None
        if not _certain(dims.dim_eq(left.elem.shape[0], right.elem.shape[0])):
            return None
        rows = self._one_loop_rows(nodes[0], left, 0)
        cols = self._one_loop_rows(nodes[1], right, 1)
        if rows is None or cols is None:
            return None
        (a, fa, _, _), (_, _, b, fb) = rows, cols
        elem = self.oracle.binary(_matmul_node(), left.elem, right.elem)
        if not isinstance(elem, TensorValue):
            return None
        whole = self.oracle.binary(_matmul_node(), fa, fb)
        vec = Vec(f"{wrap(a, ATOM, TERM)} @ {wrap(b, ATOM, TERM + 1)}", TERM, elem, whole, frozenset({0, 1}))
        try:
            self.prove(vec)
        except Refuse:
            return None
        return vec

    def _one_loop_rows(self, node: ast.expr, vec: Vec, k: int):
        """(rows text, facts, columns text, facts) of a batched vector of loop ``k`` (one of two) as a (count, n)
        matrix and its transpose. Batched alone over its own loop it may be a column walk of some data in the
        data's own order (``X[:, i] - mu[i]`` is ``(X - mu).T``): then the transpose is that data itself, and
        nothing is computed twice as wide or laid out across."""
        alone = self._alone_over(node, k)
        if alone is not None and alone.moved is not None and alone.moved[1] is not None and alone.moved[2] == 1 \
                and len(alone.moved[1].shape) == 2:
            data, facts = alone.moved[0], alone.moved[1]
            return f"{wrap(data, ATOM, ATOM)}.T", _transposed(facts, 0, 1), data, facts
        if alone is not None and len(alone.whole.shape) == 2 and _known(alone.whole):
            vec = alone  # its rows as they are, without the other loop's `None` dim
        shape = tuple(vec.whole.shape)
        if len(shape) == 2:
            rows, facts = (vec.text if vec.prec >= ATOM else f"({vec.text})"), vec.whole
        elif len(shape) == 3 and k == 0 and shape[1] == 1:
            rows, facts = f"{vec.atom()}[:, 0]", _index(vec.whole, [slice(None), 0])
        elif len(shape) == 3 and k == 1 and shape[0] == 1:
            rows, facts = f"{vec.atom()}[0]", _index(vec.whole, [0])
        else:
            return None
        return rows, facts, f"{wrap(rows, ATOM, ATOM)}.T", _transposed(facts, 0, 1)

    def _alone_over(self, node: ast.expr, k: int) -> Optional[Vec]:
        """``node`` batched over loop ``k`` alone (one level, no temporaries of the body), or None."""
        from torchwise.vectorize.batch import Batcher

        if any(isinstance(n, ast.Name) and n.id in self.env for n in ast.walk(node)):
            return None
        single = Batcher(self.ctx, self.scope, [self.levels[k]], self.oracle, self.torch, self.bound)
        single.targets = set(self.targets)
        try:
            vec = single(node)
        except Refuse:
            return None
        return vec if vec.deps == frozenset({0}) else None

    def _finish_view(self, value, text: str, transform):
        """A view of a batched value (``.mT``): the same view of the whole."""
        vec = Vec(text, ATOM, transform(value.elem), transform(value.whole), value.deps, fresh=False, free=value.free)
        self.prove(vec)
        return vec


# -- special batching rules (optable Batch.SPECIAL) -------------------------------------------------------
def _max_values(text: str, torch: str) -> str:
    """``x.amax(dim=1)`` -> ``x.max(dim=1).values`` (one dim only; keepdim kept)."""
    import re

    found = re.fullmatch(r"(.*)\.a(max|min)\((dim=-?\d+(?:, keepdim=True)?)\)", text, re.S)
    if found is not None:
        return f"{found.group(1)}.{found.group(2)}({found.group(3)}).values"
    found = re.fullmatch(rf"{re.escape(torch)}\.a(max|min)\((.*), (dim=-?\d+(?:, keepdim=True)?)\)", text, re.S)
    if found is not None:
        return f"{torch}.{found.group(1)}({found.group(2)}, {found.group(3)}).values"
    return text


def _special_matmul(batcher: Batcher, node, op, func_text, receiver, bound, qualname) -> Vec:
    names = list(op.inputs)
    left, right = bound[names[0]], bound[names[1]]
    if op.name == "dot" and not (left.rank == 1 and right.rank == 1):
        raise Refuse("`dot` of values that are not vectors")
    if op.name == "mv" and not (left.rank == 2 and right.rank == 1):
        raise Refuse("`mv` of a non-matrix")
    if op.name == "mm" and not (left.rank == 2 and right.rank == 2):
        raise Refuse("`mm` of non-matrices")
    if left.is_tensor and right.is_tensor and left.dtype != right.dtype:
        raise Refuse(f"`{op.name}` of different dtypes raises")
    if op.name == "outer":
        return batcher.outer(left, right)
    return batcher.matmul(node, left, right)


def _special_t(batcher: Batcher, node, op, func_text, receiver, bound, qualname) -> Vec:
    value = bound[op.inputs[0]]
    if value.rank < 2:
        return value if value.rank == 1 else value
    if value.rank != 2:
        raise Refuse("`.t()` of more than 2 dims raises")
    return batcher._finish_view(value, f"{value.atom()}.mT", lambda facts: _transposed(facts, -2, -1))


def _special_pairwise(batcher: Batcher, node, op, func_text, receiver, bound, qualname) -> Vec:
    # It reduces the last dim (and broadcasts the rest): the same call on the batched inputs.
    def render(texts, precs):
        mapping = dict(zip(list(bound), texts))
        return batcher._render_call(op, func_text, receiver, mapping, batcher._positional(node, receiver), node), ATOM

    names = list(bound)
    operands = [bound[n] for n in names]
    if any(v.rank != 1 for v in operands if v.is_tensor and v.batched):
        raise Refuse("`pairwise_distance` of slices that are not vectors")

    def facts_of(values):
        return batcher._facts_call(node, op, receiver, dict(zip(names, [_FactsOnly(v) for v in values])), False,
                                   qualname)
    return batcher.pointwise(operands, render, facts_of)


_SPECIAL = {"dot": _special_matmul, "mv": _special_matmul, "mm": _special_matmul, "matmul": _special_matmul,
            "bmm": _special_matmul, "outer": _special_matmul, "t": _special_t, "pairwise_distance": _special_pairwise}


# -- local rules for ops the table has no row for (requested as rows) -----------------------------------------
def _mse_loss(batcher: Batcher, node: ast.Call) -> Vec:
    """``F.mse_loss(a[i], b[i])`` (reduction='mean'): the mean of squared differences over each slice."""
    if len(node.args) != 2 or node.keywords:
        raise Refuse("`mse_loss` with options")
    a, b = batcher(node.args[0]), batcher(node.args[1])
    if not (a.is_tensor and b.is_tensor and a.batched and b.batched and a.rank == b.rank and a.rank >= 1
            and a.dtype == b.dtype and a.dtype is not None and is_floating(a.dtype)):
        raise Refuse("`mse_loss` of slices that are not alike")
    if any(not _certain(dims.dim_eq(x, y)) for x, y in zip(a.shape, b.shape)):
        raise Refuse("`mse_loss` of slices of different shapes (it would broadcast with a warning)")
    func = batcher.src(node.func)
    dims_text = str(a.batch_dims) if a.rank == 1 else "(" + ", ".join(
        str(a.batch_dims + d) for d in range(a.rank)) + ")"
    text = f"{func}({a.text}, {b.text}, reduction=\"none\").mean(dim={dims_text})"
    elem = a.elem.with_(shape=(), strides=(), requires_grad=_either(a.elem.requires_grad, b.elem.requires_grad))
    whole_shape = tuple(a.whole.shape[: a.batch_dims])
    whole = a.whole.with_(shape=whole_shape, strides=layout.contiguous_strides(whole_shape),
                          requires_grad=elem.requires_grad)
    vec = Vec(text, ATOM, elem, whole, a.deps | b.deps)
    batcher.prove(vec)
    return vec


def _trace(batcher: Batcher, node: ast.Call) -> Vec:
    """``torch.trace(M[k])``: one matrix per element, the sums of the last two dims' diagonals. Trace's own dtype
    rule: integers sum to int64, floats keep theirs; bool and complex are refused (trace raises on bool, where the
    diagonal's sum would not)."""
    if len(node.args) != 1 or node.keywords:
        raise Refuse("`trace` with options")
    return _trace_of(batcher, batcher(node.args[0]))


def _trace_of(batcher: Batcher, m: Vec) -> Vec:
    from torchwise.analysis.dtypes import is_integral

    if not (m.is_tensor and m.batched and m.rank == 2 and not m.lost and m.dtype is not None):
        raise Refuse("`trace` of something that is not one matrix per element")
    if not (is_floating(m.dtype) or is_integral(m.dtype)):
        raise Refuse(f"`trace` of {m.dtype.short} (it raises on bool)")
    dtype = m.dtype if is_floating(m.dtype) else DType.int64
    text = f"{m.atom()}.diagonal(dim1=-2, dim2=-1).sum(-1)"
    elem = m.elem.with_(shape=(), strides=(), dtype=dtype, memory=None)
    shape = tuple(m.whole.shape[: m.batch_dims])
    whole = m.whole.with_(shape=shape, strides=layout.contiguous_strides(shape), dtype=dtype, memory=None)
    vec = Vec(text, ATOM, elem, whole, m.deps)
    batcher.prove(vec)
    return vec


def _one_hot(batcher: Batcher, node: ast.Call) -> Vec:
    """``F.one_hot(y[i], num_classes=K)``: one row per element, the rows of ``F.one_hot(y, K)``."""
    if len(node.args) not in (1, 2) or any(k.arg != "num_classes" for k in node.keywords):
        raise Refuse("`one_hot` with options")
    classes = node.args[1] if len(node.args) == 2 else next((k.value for k in node.keywords), None)
    if classes is None or batcher.mentions_loop(classes):
        raise Refuse("`one_hot` without a known `num_classes` (each element would pick its own)")
    count = _int(batcher.ctx, classes)
    if count is None:
        raise Refuse("`one_hot` with an unknown `num_classes`")
    y = batcher(node.args[0])
    if not (y.batched and y.is_tensor and y.dtype is DType.int64 and not y.lost):
        raise Refuse("`one_hot` of something that is not int64 indices")
    func = batcher.src(node.func)
    text = f"{func}({y.text}, {batcher.src(classes)})" if len(node.args) == 2 else \
        f"{func}({y.text}, num_classes={batcher.src(classes)})"
    elem_shape = tuple(y.shape) + (count,)
    elem = y.elem.with_(shape=elem_shape, strides=layout.contiguous_strides(elem_shape), requires_grad=False)
    shape = tuple(y.whole.shape) + (count,)
    whole = y.whole.with_(shape=shape, strides=layout.contiguous_strides(shape), requires_grad=False)
    vec = Vec(text, ATOM, elem, whole, y.deps)
    batcher.prove(vec)
    return vec


def _cross_entropy(batcher: Batcher, node: ast.Call) -> Vec:
    """``F.cross_entropy(logits[i], y[i])`` (a (C,) row and its class) or ``F.cross_entropy(logits[i:i + 1],
    y[i:i + 1])`` (a batch of one, whose mean is its one loss): one loss per element, the losses of
    ``F.cross_entropy(logits, y, reduction="none")``. Only for classes known >= 0 (``ranges``): a target equal to
    ``ignore_index`` (-100) makes the loop's mean over no sample NaN, where ``reduction="none"`` gives 0; any other
    negative or too large class raises in both. No options (weights, label smoothing)."""
    from torchwise.vectorize.ranges import nonnegative_name

    if len(node.args) != 2 or node.keywords or batcher.depth != 1:
        raise Refuse("`cross_entropy` with options")
    a, t = batcher(node.args[0]), batcher(node.args[1])
    if not (a.is_tensor and t.is_tensor and a.batched and t.batched and a.batch_dims == 1 and t.batch_dims == 1
            and not a.lost and not t.lost and a.dtype in (DType.float32, DType.float64) and t.dtype is DType.int64):
        raise Refuse("`cross_entropy` of values that are not rows of logits and their int64 classes")
    if a.rank == 1 and t.rank == 0:
        rows, classes = a.text, t.text
    elif a.rank == 2 and t.rank == 1 and a.shape[0] == 1 and t.shape[0] == 1:
        rows, classes = _one_row_windows(batcher, node.args[0], a), _one_row_windows(batcher, node.args[1], t)
    else:
        raise Refuse("`cross_entropy` of slices other than one row and its class")
    root = node.args[1].value if isinstance(node.args[1], ast.Subscript) else None
    if not (isinstance(root, ast.Name) and nonnegative_name(batcher.ctx, batcher.scope, root.id)):
        raise Refuse("a class may be -100 (`ignore_index`): the loop's loss is NaN there, the batched one 0")
    func = batcher.src(node.func)
    text = f"{func}({rows}, {classes}, reduction=\"none\")"
    elem = a.elem.with_(shape=(), strides=(), requires_grad=a.elem.requires_grad)
    count = a.whole.shape[0]
    whole = a.whole.with_(shape=(count,), strides=(1,), requires_grad=elem.requires_grad)
    vec = Vec(text, ATOM, elem, whole, a.deps | t.deps)
    batcher.prove(vec)
    return vec


def _one_row_windows(batcher: Batcher, node: ast.expr, vec: Vec) -> str:
    """The windows ``x[i:i + 1]`` of every ``i`` laid end to end: ``x`` itself where they cover all its rows."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Slice):
        facts = batcher.ctx.value(node.value)
        if _known(facts) and facts.shape and _certain(dims.dim_eq(facts.shape[0], vec.whole.shape[0])) \
                and _unfolded_rows(vec.text, node.value.id):
            return node.value.id
    return f"{vec.atom()}.flatten(0, 1)"


def _unfolded_rows(text: str, name: str) -> bool:
    return text in (f"{name}.unfold(0, 1, 1)", f"{name}.unfold(0, 1, 1).movedim(-1, 1)")


def _like(batcher: Batcher, node: ast.Call) -> Vec:
    """``torch.zeros_like(v)`` / ``ones_like`` / ``full_like(v, c)`` of an element: the same of the whole batch (a
    value per element that only takes the element's shape, dtype and device)."""
    qualname = batcher.scope.qualname(node.func)
    fills = 2 if qualname == "torch.full_like" else 1
    if len(node.args) != fills or any(k.arg != "dtype" for k in node.keywords) \
            or any(batcher.mentions_loop(a) for a in node.args[1:] + [k.value for k in node.keywords]):
        raise Refuse(f"`{qualname}` with options")
    value = batcher(node.args[0])
    if not (value.is_tensor and value.batched and not value.lost and value.parts is None):
        raise Refuse(f"`{qualname}` of something that is not one tensor per element")
    for arg in node.args[1:] + [k.value for k in node.keywords]:
        batcher.check_pure(arg)
    others = [batcher.ctx.value(a) for a in node.args[1:]]
    options = {k.arg: batcher.ctx.value(k.value) for k in node.keywords}
    elem = batcher.oracle.function(node, qualname, [value.elem] + others, options)
    whole = batcher.oracle.function(node, qualname, [value.whole] + others, options)
    rest = [batcher.src(a) for a in node.args[1:]] + [f"{k.arg}={batcher.src(k.value)}" for k in node.keywords]
    vec = Vec(f"{batcher.src(node.func)}({', '.join([value.text] + rest)})", ATOM, elem, whole, value.deps, fresh=True)
    batcher.prove(vec)
    return vec


def _quantile(batcher: Batcher, node: ast.Call) -> Vec:
    """``torch.quantile(v, q)`` of a float element with no ``dim`` (its quantile over all its values): the same q of
    each element's values flattened, ``torch.quantile(X.flatten(b), q, dim=-1)`` (one sort per row, the same
    interpolation). ``q`` one Python float in [0, 1]; the element and the loop certainly non-empty (an empty whole
    raises)."""
    if len(node.args) != 2 or any(k.arg != "interpolation" or not isinstance(k.value, ast.Constant)
                                  for k in node.keywords) or batcher.mentions_loop(node.args[1]):
        raise Refuse("`torch.quantile` with a dim, a batched q or other options")
    q = batcher.ctx.value(node.args[1])
    if not (isinstance(q, ScalarValue) and type(q.value) is float and 0.0 <= q.value <= 1.0):
        raise Refuse("`torch.quantile` of a q that is not one known float in [0, 1]")
    value = batcher(node.args[0])
    if not (value.is_tensor and value.batched and not value.lost and value.parts is None and value.rank >= 1
            and value.dtype in (DType.float32, DType.float64)):
        raise Refuse("`torch.quantile` of something that is not a float tensor per element")
    from torchwise.vectorize import proof

    if not all(proof.certainly_positive(d) for d in value.whole.shape):
        # an empty element raises in both; so does the whole of a loop that runs zero times, where the loop does not
        raise Refuse("`torch.quantile` of an element that may be empty, or a loop that may run zero times (it raises)")
    rows = value.text if value.rank == 1 else f"{value.atom()}.flatten({value.batch_dims})"
    lead = tuple(value.whole.shape[:value.batch_dims])
    elem = value.elem.with_(shape=(), strides=(), memory=None)
    whole = value.whole.with_(shape=lead, strides=layout.contiguous_strides(lead), memory=None)
    rest = [batcher.src(node.args[1]), "dim=-1"] + [f"{k.arg}={batcher.src(k.value)}" for k in node.keywords]
    vec = Vec(f"{batcher.src(node.func)}({', '.join([rows] + rest)})", ATOM, elem, whole, value.deps, fresh=True)
    batcher.prove(vec)
    return vec


def _dist(batcher: Batcher, node: ast.Call) -> Vec:
    """``torch.dist(a[i], b[i], p)`` is ATen's ``norm(a - b, p)`` (the same kernel, dtypes and errors): batched as
    that spelling, ``(a - b).norm(p)`` of each element."""
    return batcher(_dist_spelled(batcher, node, node.args, node.keywords))


def _dist_spelled(batcher: Batcher, node: ast.Call, args: list, keywords: list) -> ast.expr:
    """``a.dist(b, p)`` / ``torch.dist(a, b, p)`` (``args`` from ``a`` on) as ``(a - b).norm(p)``."""
    if len(args) not in (2, 3) or any(k.arg != "p" for k in keywords) or len(args) + len(keywords) > 3:
        raise Refuse("`dist` with options")
    power = args[2:] + [k.value for k in keywords]
    for p in power:  # dist takes a number only (`norm` also takes 'fro' and 'nuc')
        value = batcher.ctx.value(p)
        if batcher.mentions_loop(p) or not (isinstance(value, ScalarValue) and value.kind in ("int", "float")):
            raise Refuse("`dist` with a `p` that is not a known number")
    diff = ast.BinOp(left=args[0], op=ast.Sub(), right=args[1])
    call = ast.Call(func=ast.Attribute(value=diff, attr="norm", ctx=ast.Load()), args=power, keywords=[])
    return spelled(call, node)


def _einsum(batcher: Batcher, node: ast.Call) -> Vec:
    """``torch.einsum("ij,jk->ik", A[n], B[n])`` in one loop: one einsum whose subscripts gain a new letter for the
    loop on each batched operand and in front of the output (``"nij,njk->nik"``). Explicit output only (an implicit
    one orders its letters), no ellipsis; operands of one floating dtype (einsum raises on mixed ones)."""
    import string

    if node.keywords or len(node.args) < 2 or not (isinstance(node.args[0], ast.Constant)
                                                  and isinstance(node.args[0].value, str)):
        raise Refuse("`einsum` without a literal equation and its operands")
    if batcher.depth != 1:
        raise Refuse("`einsum` inside nested loops")
    equation = node.args[0].value.replace(" ", "")
    if "..." in equation or equation.count("->") != 1:
        raise Refuse("`einsum` without an explicit output, or with an ellipsis")
    inputs, output = equation.split("->")
    subscripts = inputs.split(",")
    operands = [batcher(arg) for arg in node.args[1:]]
    letters = "".join(subscripts) + output
    if len(subscripts) != len(operands) or not all(c in string.ascii_letters for c in letters):
        raise Refuse("`einsum` subscripts not understood")
    for value, sub in zip(operands, subscripts):
        if not (value.is_tensor and not value.lost and value.rank == len(sub) and value.dtype is not None
                and is_floating(value.dtype)) or value.batched and value.batch_dims != 1:
            raise Refuse("`einsum` of operands that are not floating tensors of the subscripts' ranks")
    if len({value.dtype for value in operands}) != 1:
        raise Refuse("`einsum` of different dtypes raises")
    free = next(c for c in "nbtzyxw" + string.ascii_letters if c not in letters)
    batched = f"{','.join(free + sub if v.batched else sub for v, sub in zip(operands, subscripts))}->{free}{output}"
    func = batcher.src(node.func)
    text = f'{func}("{batched}", {", ".join(v.text for v in operands)})'
    elem = batcher.oracle.function(node, "torch.einsum", [ScalarValue("str", equation)] + [v.elem for v in operands],
                                   {})
    whole = batcher.oracle.function(node, "torch.einsum", [ScalarValue("str", batched)] +
                                    [v.whole if v.batched else v.elem for v in operands], {})
    if not (isinstance(elem, TensorValue) and isinstance(whole, TensorValue)):
        raise Refuse("an `einsum` the analysis cannot follow (or PyTorch would raise)")
    deps = frozenset().union(*(v.deps for v in operands))
    vec = Vec(text, ATOM, elem, whole, deps)
    batcher.prove(vec)
    return vec


def _layer_norm(batcher: Batcher, node: ast.Call) -> Vec:
    """``F.layer_norm(x[i], shape, w, b, eps)`` / ``F.rms_norm(x[i], shape, w, eps)``: each normalizes the trailing
    ``shape`` dims of its input, every leading index on its own, so the same call on the whole tensor is the rows'
    results stacked (contiguous, as each call's). The parameters must not vary along the loop and must have the
    input's dtype (layer_norm raises on a mix, rms_norm computes another way)."""
    rms = batcher.scope.qualname(node.func).endswith("rms_norm")
    names = ("input", "normalized_shape", "weight", "eps") if rms else \
        ("input", "normalized_shape", "weight", "bias", "eps")
    if len(node.args) > len(names) or any(k.arg not in names[1:] for k in node.keywords) or not node.args:
        raise Refuse("a norm call not understood")
    bound = dict(zip(names, node.args))
    bound.update((k.arg, k.value) for k in node.keywords)
    if "normalized_shape" not in bound or any(batcher.mentions_loop(v) for n, v in bound.items() if n != "input"):
        raise Refuse("a norm whose shape or parameters depend on the loop")
    x = batcher(bound["input"])
    if not (x.batched and x.is_tensor and not x.lost and x.dtype is not None and is_floating(x.dtype)
            and x.batch_dims == batcher.depth):
        raise Refuse("a norm of something that is not a floating slice per element")
    shape_node = bound["normalized_shape"]
    if not isinstance(shape_node, (ast.Tuple, ast.List)):
        raise Refuse("a norm whose `normalized_shape` is not a literal tuple (an int raises)")
    sizes = [_int(batcher.ctx, item) for item in shape_node.elts]
    if not sizes or any(size is None for size in sizes) or len(sizes) > x.rank \
            or any(not _certain(dims.dim_eq(a, b)) for a, b in zip(sizes, x.shape[x.rank - len(sizes):])):
        raise Refuse("a norm whose `normalized_shape` is not certainly the slice's trailing dims")
    grads = [x.elem.requires_grad]
    for name in ("weight", "bias"):
        if name in bound and not (isinstance(bound[name], ast.Constant) and bound[name].value is None):
            param = batcher(bound[name])
            if not (param.is_tensor and param.dtype == x.dtype and len(param.shape) == len(sizes)
                    and all(_certain(dims.dim_eq(a, b)) for a, b in zip(param.shape, sizes))):
                raise Refuse(f"a norm whose `{name}` is not of the slice's dtype and `normalized_shape`")
            grads.append(param.elem.requires_grad)
    if "eps" in bound:
        eps = batcher(bound["eps"])
        if not (isinstance(eps.elem, ScalarValue) and eps.elem.kind in ("int", "float")):
            raise Refuse("a norm whose `eps` is not a number")
    grad = grads[0]
    for other in grads[1:]:
        grad = _either(grad, other)
    args = [x.text] + [batcher.src(a) for a in node.args[1:]] + [f"{k.arg}={batcher.src(k.value)}" for k in node.keywords]
    text = f"{batcher.src(node.func)}({', '.join(args)})"
    elem = x.elem.with_(strides=layout.contiguous_strides(x.elem.shape), requires_grad=grad, memory=None)
    whole = x.whole.with_(strides=layout.contiguous_strides(x.whole.shape), requires_grad=grad, memory=None)
    vec = Vec(text, ATOM, elem, whole, x.deps)
    batcher.prove(vec)
    return vec


_LOCAL_RULES = {"torch.dist": _dist, "torch.nn.functional.layer_norm": _layer_norm,
                "torch.nn.functional.rms_norm": _layer_norm, "torch.nn.functional.mse_loss": _mse_loss, "torch.nn.functional.one_hot": _one_hot,
                "torch.nn.functional.cross_entropy": _cross_entropy, "torch.zeros_like": _like,
                "torch.ones_like": _like, "torch.full_like": _like, "torch.quantile": _quantile,
                "torch.trace": _trace}


def _topk_facts(values: dict):
    """``topk``'s (values, indices): the input's shape with ``k`` along ``dim`` (the engine has no shape function
    for it yet; requested)."""
    x, k, dim = values.get("input"), values.get("k"), values.get("dim", ScalarValue("int", -1))
    if not (_known(x) and isinstance(k, ScalarValue) and type(k.value) is int and isinstance(dim, ScalarValue)
            and type(dim.value) is int and x.shape):
        return None
    if "largest" in values and not isinstance(values["largest"], ScalarValue):
        return None
    d = dim.value % len(x.shape) if -len(x.shape) <= dim.value < len(x.shape) else None
    if d is None or not (type(x.shape[d]) is int and 0 <= k.value <= x.shape[d]):
        return None  # k larger than the dim raises
    if x.dtype is DType.bool or is_complex(x.dtype):
        return None
    shape = tuple(x.shape[:d]) + (k.value,) + tuple(x.shape[d + 1:])
    strides = layout.contiguous_strides(shape)
    value = x.with_(shape=shape, strides=strides, memory=None)
    indices = TensorValue(DType.int64, shape, x.device, strides, False, True)
    return SeqValue("tuple", (value, indices))


_LOCAL_FACTS = {"topk": _topk_facts}


# -- vmap's rules ----------------------------------------------------------------------------------------------
_VIEWS = frozenset({"view", "reshape", "T", "mT", "t", "transpose", "permute", "squeeze", "unsqueeze", "flatten",
                    "expand", "narrow", "select", "diagonal", "unfold", "as_strided", "detach", "contiguous",
                    "view_as", "expand_as", "reshape_as", "unbind", "split", "chunk"})


def vmap_blocker(function: ast.FunctionDef, inner_scope, scope) -> Optional[str]:
    """Why ``torch.vmap`` could not batch ``function`` exactly (None: it can): vmap needs a body without
    data-dependent control flow, in-place changes, Python numbers taken out of tensors, or random draws."""
    args = function.args
    if function.decorator_list or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        return "a signature with decorators, defaults or variadic arguments"
    if isinstance(function, ast.AsyncFunctionDef):
        return "effects: an async function"
    body = function.body
    for index, stmt in enumerate(body):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            continue
        if isinstance(stmt, ast.Return) and index == len(body) - 1 and stmt.value is not None:
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            continue
        if isinstance(stmt, (ast.If, ast.For, ast.While)):
            return "control flow (vmap cannot branch on tensor values)"
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            return "effects: a call whose result is thrown away"
        return f"a `{type(stmt).__name__.lower()}` statement"
    for sub in ast.walk(function):
        if sub is function:
            continue
        if isinstance(sub, (ast.IfExp, ast.BoolOp)):
            return "a choice on a value (vmap cannot branch on tensor values)"
        if isinstance(sub, (ast.Subscript, ast.Attribute)) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            return "effects: an in-place change"
        if isinstance(sub, (ast.Lambda, ast.FunctionDef, ast.ListComp, ast.GeneratorExp, ast.Yield, ast.Await,
                            ast.Global, ast.Nonlocal, ast.NamedExpr)):
            return "nested functions, comprehensions or generators"
        if isinstance(sub, ast.Call):
            why = _vmap_call(sub, inner_scope or scope)
            if why is not None:
                return why
    return None


def _vmap_call(call: ast.Call, scope) -> Optional[str]:
    qualname = scope.qualname(call.func)
    if qualname is not None:
        name = qualname.rsplit(".", 1)[-1]
        if name in _RANDOM:
            return "effects: random draws"
        if qualname.startswith("math."):
            return "`math` functions take Python numbers out of tensors"
        if qualname.startswith("torch.nn.functional."):
            op = optable.functional(name)
        elif qualname.startswith("torch.") and qualname.count(".") == 1:
            op = optable.function(name)
            if op is None and name in _PURE_FACTORIES:
                return None
        else:
            return f"effects: `{qualname}`"
        if op is None:
            return f"`{qualname}` is not a known op"
        if op.has("random"):
            return "effects: random draws"
        return None
    if isinstance(call.func, ast.Attribute):
        name = call.func.attr
        if name in ("item", "tolist", "numpy", "cpu", "cuda", "to"):
            return f"`.{name}()` takes values out of the batch"
        if name.endswith("_"):
            return "effects: an in-place change"
        if optable.method(name) is None and name not in _PURE_METHODS:
            return f"effects: `.{name}()`"
        return None
    if isinstance(call.func, ast.Name):
        if call.func.id in ("float", "int", "bool"):
            return f"`{call.func.id}()` takes a Python number out of a tensor"
        if call.func.id in ("len", "abs", "min", "max", "round") and scope.owner_of(call.func.id) is None:
            return None if call.func.id in ("len", "abs") else f"`{call.func.id}()` compares tensor values in Python"
        return f"a call of `{call.func.id}`"
    return "a call not understood"


def _returns_new(function: ast.FunctionDef) -> bool:
    """The returned value is computed (not a parameter, not a view of one)."""
    value = function.body[-1].value
    if isinstance(value, ast.Name):
        return False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _VIEWS:
        return False
    if isinstance(value, (ast.Subscript, ast.Attribute)):
        return False
    return isinstance(value, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Compare))


def _call_text(head: str, names: list, texts: dict, positional: int, given_kwargs: set) -> str:
    """``head(a, b, dim=1)``: the first ``positional`` arguments as written by position, the rest by keyword."""
    parts = [texts[name] if index < positional and name not in given_kwargs else f"{name}={texts[name]}"
             for index, name in enumerate(names) if name in texts]
    return f"{head}({', '.join(parts)})"


class _FactsOnly:
    """A bare value standing in for a Vec where only facts are wanted."""

    def __init__(self, value):
        self.elem = value
        self.whole = value
        self.batched = False
        self.python = False


def _unbind(op, values: dict, is_method: bool, positional: int):
    params = list(op.signature.params)
    if is_method:
        params = params[1:]
    args, kwargs = [], {}
    for index, param in enumerate(params):
        if param.name not in values:
            continue
        if index < positional and not param.kw_only:
            args.append(values[param.name])
        else:
            kwargs[param.name] = values[param.name]
    return args, kwargs


# Layers whose output for a batch is each sample's output stacked (no batch statistics, no randomness), with the
# settings that keep it so (None: any). Convolutions take an unbatched sample (C, H, W) as well as a batch.
_ACTIVATIONS = ("ReLU", "ReLU6", "GELU", "SiLU", "Sigmoid", "Tanh", "LeakyReLU", "ELU", "SELU", "CELU", "Softplus",
                "Softsign", "Hardswish", "Hardsigmoid", "Hardtanh", "Mish", "Tanhshrink", "LogSigmoid", "Identity")
_PER_SAMPLE_LAYERS = {
    "Linear": None, "LayerNorm": None, "RMSNorm": None, "Conv1d": None, "Conv2d": None, "Conv3d": None,
    # max_norm renormalizes the weight in place on every call
    "Embedding": frozenset({"num_embeddings", "embedding_dim", "padding_idx", "device", "dtype"}),
    **{kind: None for kind in _ACTIVATIONS},
}


def per_sample_layer(module) -> bool:
    """A layer (or an ``nn.Sequential`` of them) that treats each sample on its own."""
    from torchwise.analysis.values import ModuleValue

    if not isinstance(module, ModuleValue):
        return False
    if module.kind == "Sequential":
        return bool(module.children) and all(per_sample_layer(child) for child in module.children)
    if module.kind not in _PER_SAMPLE_LAYERS:
        return False
    config = dict(module.config)
    allowed = _PER_SAMPLE_LAYERS[module.kind]
    if config.get("inplace") not in (None, False) or allowed is not None and not set(config) <= allowed:
        return False
    return True
