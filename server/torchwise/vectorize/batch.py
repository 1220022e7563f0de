"""Batching one loop body's expressions: each per-element value becomes one whole-tensor value.

Inside a loop, ``x[i]`` (or the element ``v`` of ``for v in x``) is one slice of a *batched* tensor;
what does not depend on the loop is *invariant*. Vectorized, each loop level is one leading
dimension: the translation replaces every batched slice by the whole tensor (``x[i]`` -> ``x``,
``X[:, j]`` -> ``X.T``, ``A[i, i]`` -> ``A.diagonal()``, ``x[i + 1]`` -> ``x[1:]``, ``emb[ids[i]]`` ->
``emb[ids]``), the index by ``torch.arange``, and every op by the op that does the same to every
slice at once, read from the one op table (``optable``): element-wise ops stay, a ``dim`` argument
moves right by the number of loop dimensions, a reduction of a whole slice reduces its element dims,
and the few special ops (``dot``, ``@``, ``.T``) have their own rule.

Every value carries two sets of facts, one slice's and the whole tensor's, both computed by the facts
engine itself (``oracle``): a translation is kept only when the dtypes agree and the whole shape is
the loop dimensions followed by the element's shape. That is the proof that type promotion (a 0-d
slice promotes differently from a whole tensor), broadcasting and every op's shape rule give the same
result; the values follow from the batching rule.
"""

from __future__ import annotations

import ast
import copy
import math
from dataclasses import replace
from typing import Optional

from torchwise.analysis import dims, layout, optable, shapes
from torchwise.analysis.dtypes import DType, is_complex, is_floating, is_integral
from torchwise.analysis.values import ScalarValue, SeqValue, SymbolicValue, TensorValue
from torchwise.vectorize.expr import spelled as expr_spelled
from torchwise.vectorize.expr import (
    ATOM, BAND, BOR, COMPARE, POWER, UNARY, Inherent, Refuse, Unknown, _precedence, number_literal, wrap,
)
from torchwise.vectorize.calling import Calling
from torchwise.vectorize.indexing import Indexing
from torchwise.vectorize.vec import (
    Vec, _BINOPS, _BINOP_PREC, _COMPARES, _PURE_BUILTINS, _PURE_FACTORIES, _PURE_METHODS, _PURE_MODULES, _RANDOM,
    _certain, _clip, _effective_rank, _either, _exactly, _known, _logical, _same_promotion, _shaped, _transposed,
    _unmoved,
)


def _reduced_arg(node: ast.expr, name: str, scope) -> Optional[ast.expr]:
    """``x`` of ``x.sum()`` / ``torch.sum(x)`` (a reduction of everything, no options), else None."""
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr == name and not node.args \
            and scope.qualname(node.func) is None:
        return node.func.value
    if scope.qualname(node.func) == f"torch.{name}" and len(node.args) == 1:
        return node.args[0]
    return None


def _unary_arg(node: ast.expr, name: str, scope) -> Optional[ast.expr]:
    """``x`` of ``torch.exp(x)`` / ``x.exp()``."""
    return _reduced_arg(node, name, scope)


def _canon(node: ast.expr, batcher) -> str:
    """The expression with every temporary replaced by what it holds, as text to compare."""
    class _Follow(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.AST:
            followed = batcher._followed(name)
            return name if followed is name else self.visit(copy.deepcopy(followed))

    return ast.dump(_Follow().visit(copy.deepcopy(node)))


def _nonzero_number(vec: Vec) -> bool:
    """A loop-invariant number known not to be zero (``v.item() / 2``, ``/ n`` of a known ``n``)."""
    if vec.batched or not isinstance(vec.elem, ScalarValue):
        return False
    value = number_literal(vec.text)
    if value is None:
        value = vec.elem.value if type(vec.elem.value) in (int, float) else None
    return value is not None and value != 0


def _integral(vec: Vec) -> bool:
    if vec.is_tensor:
        return vec.dtype is None or is_integral(vec.dtype, True)
    return getattr(vec.elem, "kind", None) in ("int", "bool")


class Batcher(Indexing, Calling):
    """Translates the expressions of one loop body over ``levels`` (outermost first)."""

    def __init__(self, ctx, scope, levels: list, oracle, torch: str, bound: set = frozenset()):
        self.ctx = ctx
        self.scope = scope
        self.source = ctx.source
        self.levels = list(levels)
        self.oracle = oracle
        self.torch = torch
        self.bound = set(bound)  # names the body binds: read from `env`, never from before the loop
        self.env: dict = {}  # name -> Vec, the body's values so far
        self.defs: dict = {}  # name -> the expression the body last bound it to, unconditionally
        self.rebound: set = set()  # names the body binds more than once (no idiom follows them)
        self.devices: set = set()
        self.grad = False  # some tensor involved may require grad
        self.calls_user = False
        self.level_of: dict = {}
        for k, level in enumerate(self.levels):
            for name in level.names:
                self.level_of[name] = k
        self.loop_names = set(self.level_of) | self.bound
        self.targets: set = set()  # tensors the body writes by subscript: read only at the slot written
        self.lists: set = set()  # lists the body appends to: never read in the body
        self.target_reads: dict = {}  # target -> index dumps it was read at (before its write)
        self.written: set = set()  # targets already written in this iteration
        self.written_parts: dict = {}  # target -> the index parts of each store into it (``written_slot``)
        self.repeatable_writes: dict = {}  # target -> the kind of write that may come again (``written_slot``)
        self.scans: dict = {}  # accumulator -> a function giving its per-iteration values (a scan)
        self.reads: set = set()  # names of the tensors the body reads
        self.select: Optional[tuple] = None  # (mask text, the count it keeps): every walk masked first
        self.unknown_device = False  # some tensor's device is unknown (a parameter known only by rank)
        self.bounded = False  # every op on Python numbers is proven exact on int64 / float64 (``bounds``)

    @property
    def depth(self) -> int:
        return len(self.levels)

    # -- entry ------------------------------------------------------------------------------------
    def __call__(self, node: ast.expr) -> Vec:
        if not self.mentions_loop(node):
            return self.invariant(node)
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise Refuse(f"`{type(node).__name__}` is not understood")
        result = method(node)
        if result.batched and result.is_tensor:
            self._device(result.whole)
        return result

    def mentions_loop(self, node: ast.AST) -> bool:
        names = self.loop_names
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))

    def src(self, node: ast.AST) -> str:
        if getattr(node, "_tw_synthetic", False):  # written by the vectorizer (``expr.spelled``)
            return ast.unparse(node)
        return self.source.text_of(self.source.span(node))

    def _device(self, value) -> None:
        if isinstance(value, TensorValue):
            if value.device is None:
                self.unknown_device = True
                return
            if value.shape != ():
                self.devices.add(value.device)
            if len(self.devices) > 1:
                raise Refuse("tensors on different devices")

    # -- invariants --------------------------------------------------------------------------------
    def check_pure(self, node: ast.expr) -> None:
        """Every call in a loop-invariant expression is a known pure op (it will run once, not N times)."""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.ListComp,
                                ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                raise Refuse("an expression with its own effects or scope")
            if isinstance(sub, ast.Call):
                self._pure_call(sub)

    def _pure_call(self, call: ast.Call) -> None:
        qualname = self.scope.qualname(call.func)
        if qualname is not None:
            if qualname.startswith(_PURE_MODULES):
                return
            if qualname.startswith("torch.nn.functional."):
                op = optable.functional(qualname.rsplit(".", 1)[1])
            elif qualname.startswith("torch.") and qualname.count(".") == 1:
                name = qualname[len("torch."):]
                if name in _PURE_FACTORIES:
                    return
                op = optable.function(name)
            else:
                op = None
            if qualname.rsplit(".", 1)[-1] in _RANDOM or op is not None and op.has("random"):
                raise Inherent(f"`{qualname}` draws random numbers")
            if op is None:
                if not qualname.startswith("torch.") or qualname.startswith("torch.nn.") and \
                        not qualname.startswith("torch.nn.functional."):
                    raise Inherent(f"`{qualname}` may have effects")
                raise Refuse(f"`{qualname}` is not a known pure op")
            return
        if isinstance(call.func, ast.Attribute):
            name = call.func.attr
            op = optable.method(name)
            if (op is None or op.has("random")) and name not in _PURE_METHODS:
                raise Refuse(f"`.{name}()` is not a known pure method")
            return
        if isinstance(call.func, ast.Name) and call.func.id in _PURE_BUILTINS and self.scope.owner_of(call.func.id) \
                is None:
            return
        raise Refuse("a call that is not a known pure op")

    def invariant(self, node: ast.expr) -> Vec:
        """A loop-invariant expression: its own text, its facts from the analysis."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in self.targets | self.lists:
                raise Inherent(f"the loop reads `{sub.id}`, which it also writes")
        self.check_pure(node)
        value = self.ctx.value(node)
        text = self.src(node)
        prec = ATOM if "\n" in text else _precedence(node)
        if "\n" in text:
            text = f"({text})"
        if isinstance(value, TensorValue):
            if not _shaped(value):
                raise Refuse(f"`{_clip(text)}`: shape unknown")
            if value.dtype is not None and is_complex(value.dtype):
                raise Refuse("complex dtypes")
            self.grad |= value.requires_grad is not False
            self._device(value)
            self.reads.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                              and self.scope.qualname(n) is None and not isinstance(self.ctx.value(n), ScalarValue))
            return Vec(text, prec, value, fresh=False, free=value.dtype is None)
        if isinstance(value, ScalarValue) and value.kind in ("int", "float", "bool"):
            return Vec(text, prec, value)
        if isinstance(value, SymbolicValue):
            return Vec(text, prec, ScalarValue("int", value.dim))
        if isinstance(value, SeqValue):
            return Vec(text, prec, value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return Vec(text, prec, ScalarValue("str", node.value))
        if isinstance(node, ast.Constant) and node.value is None:
            return Vec(text, prec, ScalarValue("none"))
        if self.scope.qualname(node) is not None:
            return Vec(text, prec, value)  # torch.float32, math.pi...
        # Nothing known of it: the loop is not known to walk tensor elements at all, so say nothing.
        raise Unknown(f"`{_clip(text)}` is not a known tensor or number")

    # -- leaves ------------------------------------------------------------------------------------------
    def _Name(self, node: ast.Name) -> Vec:
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.scans:
            return self.scans[node.id]()
        if node.id in self.bound:
            raise Inherent(f"`{node.id}` carries a value from one iteration to the next")
        k = self.level_of[node.id]
        level = self.levels[k]
        if node.id == level.index:
            return self.index_value(k)
        if node.id in level.aliases:
            return self(level.aliases[node.id])
        element = level.elements[node.id]
        return self.element_leaf(k, element)

    def _Constant(self, node: ast.Constant) -> Vec:
        return self.invariant(node)

    def _Attribute(self, node: ast.Attribute) -> Vec:
        value = self(node.value)
        if not value.batched:
            raise Refuse("an attribute of a body value")
        name = node.attr
        if value.parts is not None and name in ("values", "indices"):
            return value.parts[0 if name == "values" else 1]
        if not value.is_tensor:
            raise Refuse(f"`.{name}` of a number")
        if name in ("shape", "ndim", "dtype", "device"):
            return self._elem_attribute(value, name)
        if name in ("T", "mT"):
            if value.rank == 1 and name == "T":
                return value  # .T of a vector is the vector itself (as a view)
            if value.rank != 2:
                raise Refuse(f"`.{name}` of a slice with {value.rank} dims")
            return self._finish_view(value, f"{value.atom()}.mT", lambda facts: _transposed(facts, -2, -1))
        raise Refuse(f"`.{name}` of a batched value is not understood")

    def _elem_attribute(self, value: Vec, name: str) -> Vec:
        elem = value.elem
        if name == "shape":
            if not all(type(d) is int for d in elem.shape):
                raise Refuse("the shape of a slice of unknown size")
            text = "(" + ", ".join(map(str, elem.shape)) + ("," if len(elem.shape) == 1 else "") + ")"
            return Vec(text, ATOM, SeqValue("tuple", tuple(ScalarValue("int", d) for d in elem.shape)))
        if name == "ndim":
            return Vec(str(len(elem.shape)), ATOM, ScalarValue("int", len(elem.shape)))
        raise Refuse(f"`.{name}` of a slice")

    def read_tensors(self) -> set:
        return set(self.reads)

    # -- operators -----------------------------------------------------------------------------------------
    def _BinOp(self, node: ast.BinOp) -> Vec:
        symbol = _BINOPS.get(type(node.op))
        if symbol is None:
            raise Refuse("operator not understood")
        left, right = self(node.left), self(node.right)
        folded = _folded_sizes(symbol, left, right)
        if folded is not None:
            return folded
        if symbol == "@":
            return self.matmul(node, left, right)
        if symbol in ("&", "|", "^") and not all(
                (v.is_tensor and v.dtype is DType.bool) or (isinstance(v.elem, ScalarValue) and v.elem.kind == "bool")
                for v in (left, right)):
            raise Refuse("bitwise operators on values that are not bools")
        if symbol == "/":
            idiom = self._softmax(node)
            if idiom is not None:
                return idiom
        if symbol == "**" and right.batched and right.python and getattr(right.elem, "kind", None) == "int" \
                and _integral(left) and not self._nonnegative_index(node.right):
            # `int_tensor ** -1` raises for a Python int exponent, not for a tensor of them
            raise Refuse("an integer power whose exponent may be negative raises per element, not vectorized")
        prec = _BINOP_PREC[symbol]

        def render(texts, precs):
            if symbol == "**":
                return f"{wrap(texts[0], precs[0], POWER + 1)} ** {wrap(texts[1], precs[1], UNARY)}", POWER
            return f"{wrap(texts[0], precs[0], prec)} {symbol} {wrap(texts[1], precs[1], prec + 1)}", prec

        return self.pointwise([left, right], render,
                              lambda values: self.oracle.binary(node, values[0], values[1]), python_op=symbol)

    def _softmax(self, node: ast.BinOp) -> Optional[Vec]:
        """``e / e.sum()`` with ``e = torch.exp(r - r.max())`` (temporaries followed) of a 1-d float row ``r``: the
        numerically stable softmax written out, which is ``torch.softmax(r, dim=-1)`` (the same max-shifted exp
        divided by its sum, in one kernel instead of four passes). NaN and inf give NaN rows in both; a row of no
        element makes the loop's ``max()`` raise, so its length must be >= 1."""
        if any(isinstance(n, ast.Name) and n.id in self.rebound for n in ast.walk(node)):
            return None
        try:
            return self._softmax_of(node)
        except Refuse:
            return None

    def _softmax_of(self, node: ast.BinOp) -> Optional[Vec]:
        from torchwise.vectorize import proof

        numerator = self._followed(node.left)
        denominator = self._followed(node.right)
        summed = _reduced_arg(denominator, "sum", self.scope)
        exp_arg = _unary_arg(numerator, "exp", self.scope)
        if summed is None or exp_arg is None or _canon(self._followed(summed), self) != _canon(numerator, self):
            return None
        exp_arg = self._followed(exp_arg) if exp_arg is not None else None
        if not (isinstance(exp_arg, ast.BinOp) and isinstance(exp_arg.op, ast.Sub)):
            return None
        row, peak = self._followed(exp_arg.left), self._followed(exp_arg.right)
        peak_of = _reduced_arg(peak, "max", self.scope) or _reduced_arg(peak, "amax", self.scope)
        if peak_of is None or _canon(self._followed(peak_of), self) != _canon(row, self):
            return None
        try:
            value = self(exp_arg.left)
        except Refuse:
            return None
        if not (value.batched and value.is_tensor and value.rank == 1 and not value.lost and value.keepdim is None
                and value.dtype in (DType.float32, DType.float64) and proof.certainly_positive(value.shape[0])):
            return None
        shape = tuple(value.whole.shape)
        whole = value.whole.with_(strides=layout.contiguous_strides(shape), memory=None)
        elem = value.elem.with_(strides=(1,))
        vec = Vec(f"{self.torch}.softmax({value.text}, dim=-1)", ATOM, elem, whole, value.deps)
        try:
            self.prove(vec)
        except Refuse:
            return None
        return vec

    def _followed(self, node: ast.expr) -> ast.expr:
        """``node``, or what the body bound the temporary ``node`` names to (followed through temporaries)."""
        seen = 0
        while isinstance(node, ast.Name) and node.id in self.defs and seen < 20:
            if node.id in self.rebound:
                raise Refuse("internal: an idiom through a rebound temporary")
            node, seen = self.defs[node.id], seen + 1
        return node

    def _nonnegative_index(self, node: ast.expr) -> bool:
        """``i`` or ``i + c`` (``c >= 0``) where ``i`` walks a range whose every value is >= 0."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                if isinstance(b, ast.Constant) and type(b.value) is int and b.value >= 0:
                    return self._nonnegative_index(a)
            return False
        if not isinstance(node, ast.Name) or node.id not in self.level_of or node.id in self.bound:
            return False
        level = self.levels[self.level_of[node.id]]
        if level.index != node.id or type(level.start) is not int or type(level.step) is not int:
            return False
        if level.step > 0:
            return level.start >= 0
        return type(level.count) is int and level.start + level.step * (level.count - 1) >= 0

    def _UnaryOp(self, node: ast.UnaryOp) -> Vec:
        operand = self(node.operand)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not):
            if not (operand.is_tensor and operand.dtype is DType.bool and operand.rank == 0):
                raise Refuse("`not` of something other than a per-element bool")
            return self.pointwise([operand], lambda t, p: (f"~{wrap(t[0], p[0], UNARY)}", UNARY),
                                  lambda values: values[0])
        if isinstance(node.op, ast.USub):
            if operand.is_tensor and operand.dtype is DType.bool:
                raise Refuse("negating a bool tensor")
            return self.pointwise([operand], lambda t, p: (f"-{wrap(t[0], p[0], UNARY)}", UNARY),
                                  lambda values: self.oracle.unary(node, values[0]), python_op="neg")
        if isinstance(node.op, ast.Invert) and operand.is_tensor and operand.dtype is not None \
                and is_integral(operand.dtype, True):
            return self.pointwise([operand], lambda t, p: (f"~{wrap(t[0], p[0], UNARY)}", UNARY),
                                  lambda values: values[0])
        raise Refuse("unary operator not understood")

    def _Compare(self, node: ast.Compare) -> Vec:
        if len(node.ops) == 1 and type(node.ops[0]) in (ast.In, ast.NotIn):
            return self._membership(node)
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARES:
            raise Refuse("a chained or non-numeric comparison")
        return self._compared(node, self(node.left), self(node.comparators[0]))

    def _membership(self, node: ast.Compare) -> Vec:
        """``v in t`` of a tensor ``t`` is ``Tensor.__contains__``: ``bool((v == t).any())`` for a tensor or number
        ``v`` (``not in``: ``(v != t).all()``, the same on NaN and on an empty ``t``). Batched as that spelling."""
        container = self(node.comparators[0])
        if not container.is_tensor:
            raise Refuse("`in` of something that is not a tensor (a list or tuple compares by identity first)")
        element = self(node.left)
        if not (element.is_tensor or isinstance(element.elem, ScalarValue)
                and element.elem.kind in ("int", "float", "bool")):
            raise Refuse("`in` of a tensor with something that is not a tensor or number")
        found = isinstance(node.ops[0], ast.In)
        compare = ast.Compare(left=node.left, ops=[ast.Eq() if found else ast.NotEq()],
                              comparators=[node.comparators[0]])
        reduced = ast.Call(func=ast.Attribute(value=compare, attr="any" if found else "all", ctx=ast.Load()),
                           args=[], keywords=[])
        spelled = ast.Call(func=ast.Attribute(value=reduced, attr="item", ctx=ast.Load()), args=[], keywords=[])
        return self(expr_spelled(spelled, node))

    def _compared(self, node: ast.Compare, left: Vec, right: Vec) -> Vec:
        symbol = _COMPARES[type(node.ops[0])]
        compared = self.pointwise(
            [left, right],
            lambda t, p: (f"{wrap(t[0], p[0], COMPARE + 1)} {symbol} {wrap(t[1], p[1], COMPARE + 1)}", COMPARE),
            lambda values: self.oracle.compare(node, values[0], values[1]), python_op=symbol)
        triangle = self._triangle(node, symbol, compared)
        return compared if triangle is None else replace(compared, text=triangle, prec=ATOM)

    def _triangle(self, node: ast.Compare, symbol: str, compared: Vec) -> Optional[str]:
        """``j > i`` of the indices of two nested ``range`` loops (``i`` outer): the matrix's upper triangle,
        ``torch.ones(n, m, dtype=torch.bool).triu(1)``, not two aranges compared by broadcasting (three times
        the cost). ``triu(d)`` keeps the elements with ``col - row >= d`` of any n x m matrix, ``tril(d)`` those
        with ``col - row <= d``."""
        sides = self.affine(node.left), self.affine(node.comparators[0])
        if None in sides or self.select is not None or symbol not in ("<", "<=", ">", ">=") \
                or any(c1 != 1 or type(c0) is not int for _, c1, c0 in sides) or sides[0][0] == sides[1][0]:
            return None
        (k_left, _, c_left), (k_right, _, c_right) = sides
        outer, inner = sorted((k_left, k_right))
        levels = self.levels[outer], self.levels[inner]
        shape = getattr(compared.whole, "shape", None)
        if any(level.step != 1 or type(level.start) is not int or not level.count_text for level in levels) \
                or shape is None or len(shape) != 2 or self.devices - {"cpu"}:
            return None
        if k_left == outer:  # `i < j` is `j > i`: the inner index on the left
            symbol = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[symbol]
            c_left, c_right = c_right, c_left
        # (start_j + col) + c_left  <symbol>  (start_i + row) + c_right:  col - row <symbol> offset
        offset = c_right - c_left + levels[0].start - levels[1].start
        kind, diagonal = {">": ("triu", offset + 1), ">=": ("triu", offset), "<": ("tril", offset - 1),
                          "<=": ("tril", offset)}[symbol]
        torch = self.torch
        return f"{torch}.ones({levels[0].count_text}, {levels[1].count_text}, dtype={torch}.bool).{kind}({diagonal})"

    def _BoolOp(self, node: ast.BoolOp) -> Vec:
        """``a > 0 and b < 1`` on per-element bools: Python's truth test per element is ``&``/``|`` vectorized."""
        from torchwise.vectorize.expr import no_raising_ops

        for later in node.values[1:]:
            no_raising_ops(later)  # short-circuited per element, computed for all vectorized
            if self.gathers_in(later):
                raise Refuse("a read at a data-dependent index after `and`/`or`: computed for every element, it "
                             "may be out of range where the loop does not read it")
        parts = [self(value) for value in node.values]
        if not all((p.is_tensor and p.dtype is DType.bool and p.rank == 0)
                   or (p.python and isinstance(p.elem, ScalarValue) and p.elem.kind == "bool") for p in parts):
            raise Refuse("`and`/`or` of something other than per-element comparisons")
        symbol, prec = ("&", BAND) if isinstance(node.op, ast.And) else ("|", BOR)
        result = parts[0]
        for part in parts[1:]:
            result = self.pointwise(
                [result, part], lambda t, p: (f"{wrap(t[0], p[0], prec)} {symbol} {wrap(t[1], p[1], prec + 1)}", prec),
                lambda values: _logical(values))
        return result

    def _no_gathers_in_branch(self, branch: ast.expr) -> None:
        if self.gathers_in(branch):
            raise Refuse("a read at a data-dependent index in a choice: computed for every element, it may be out of "
                         "range where the loop does not read it")

    def _IfExp(self, node: ast.IfExp) -> Vec:
        from torchwise.vectorize.expr import no_raising_ops

        test = node.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARES
                and self.mentions_loop(test)):
            cond, body, orelse = self(test), self(node.body), self(node.orelse)
            for branch in (node.body, node.orelse):
                no_raising_ops(branch)
                self._no_gathers_in_branch(branch)
            return self.where(cond, body, orelse, python_choice=True)
        sides = self(test.left), self(test.comparators[0])  # kept: `v if v > c else c` is a clamp
        cond, body, orelse = self._compared(test, *sides), self(node.body), self(node.orelse)
        for branch in (node.body, node.orelse):
            no_raising_ops(branch)
            self._no_gathers_in_branch(branch)
        chosen = self.where(cond, body, orelse, python_choice=True)
        return self.clamped(_COMPARES[type(test.ops[0])], *sides, body, orelse, chosen)

    def clamped(self, symbol: str, left: Vec, right: Vec, body: Vec, orelse: Vec, chosen: Vec) -> Vec:
        """``chosen``, a ``torch.where(x > c, x, c)`` (``max(c, v)``, ``v if v > c else c``), as ``x.clamp(min=c)``
        (``x.relu()`` for ``c == 0``): one pass instead of a comparison and a ``where`` (``where`` is 20x slower on
        a large CPU tensor). Where NaN goes to ``c`` (the comparison is False for it, ``clamp`` keeps it) it is put
        there after (``.nan_to_num_(c, ...)``, the infinities kept)."""
        if left.batched == right.batched:
            return chosen
        x, c = (left, right) if left.batched else (right, left)
        if not left.batched:  # `c < x` is `x > c`
            symbol = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(symbol, symbol)
        if symbol not in ("<", "<=", ">", ">=") or {body.text, orelse.text} != {x.text, c.text} \
                or x.text == c.text or chosen.dtype != x.dtype or not self._clamps_as_where(x, c):
            return chosen  # (Python ints of an int32 tensor are compared as int64: `where` casts them, clamp would not)
        upper = (symbol in (">", ">=")) != (body.text == x.text)  # `min(c, v)`: `c` bounds `v` from above
        text = f"{x.atom()}.clamp({'max' if upper else 'min'}={c.text})"
        if not upper and number_literal(c.text) == 0:
            text = f"{x.atom()}.relu()"  # the same kernel, called faster
        if body.text == x.text and is_floating(x.dtype):
            text += f".nan_to_num_({c.text}, {self.torch}.inf, -{self.torch}.inf)"
        return replace(chosen, text=text, prec=ATOM)

    @staticmethod
    def _clamps_as_where(x: Vec, c: Vec) -> bool:
        """``x.clamp(min=c)`` picks what the ``where`` picks: ``c`` is a number written out (a name or a NaN could
        be anything) of a kind ``x`` holds as it is, and no gradient flows (``clamp`` passes one at ``x == c``,
        ``where`` does not)."""
        number = number_literal(c.text)
        dtype, whole = x.dtype, x.whole
        if number is None or dtype is None or not isinstance(whole, TensorValue) or whole.requires_grad is not False:
            return False
        if is_integral(dtype):
            return type(number) is int
        return is_floating(dtype) and (not x.python or type(number) is float)

    def where(self, cond: Vec, body: Vec, orelse: Vec, python_choice: bool) -> Vec:
        """``torch.where``; ``python_choice``: from ``a if c else b`` / ``if``-``else``, which pick one value per
        element as it is (so a mixed pair is only exact when stored with no further cast)."""
        if not ((cond.is_tensor and cond.dtype is DType.bool and cond.rank == 0)
                or (cond.python and cond.elem.kind == "bool")):
            raise Refuse("`where` needs a per-element bool condition")
        if not cond.batched:
            raise Refuse("a condition that does not depend on the loop")
        if body.python and orelse.python and not (body.batched or orelse.batched):
            pass
        values = []
        for branch in (body, orelse):
            if branch.python and not branch.batched:
                values.append(branch)
            else:
                values.append(branch)
        torch = self.torch
        if python_choice and not (body.is_tensor or orelse.is_tensor):
            # Both branches Python numbers: the chosen number per element, as the loop has it.
            kinds = {getattr(v.elem, "kind", None) for v in (body, orelse)}
            if len(kinds) != 1:
                raise Refuse("a choice between numbers of different types")
        result = self.pointwise(
            [cond, body, orelse], lambda t, p: (f"{torch}.where({t[0]}, {t[1]}, {t[2]})", ATOM),
            lambda facts: self._where_facts(facts), python_op="where")
        same = body.is_tensor and orelse.is_tensor and body.dtype == orelse.dtype and body.rank == orelse.rank
        if python_choice and not same and (body.is_tensor or orelse.is_tensor):
            return replace(result, exact_cast=False)
        if result.python and cond.is_tensor and {body.text, orelse.text} == {"1", "0"} and not body.batched \
                and not orelse.batched and result.elem.kind == "int":
            # 1 if c else 0 is the bool as an int64
            flag = cond.atom() if body.text == "1" else f"(~{wrap(cond.text, cond.prec, UNARY)})"
            return replace(result, text=f"{flag}.long()", prec=ATOM)
        return result

    def _where_facts(self, facts):
        cond, a, b = facts
        if isinstance(cond, ScalarValue):
            # per element a Python choice between two numbers: a number of that kind
            if isinstance(a, ScalarValue) and isinstance(b, ScalarValue) and a.kind == b.kind:
                return ScalarValue(a.kind)
            return None
        if not any(isinstance(v, TensorValue) and v.shape != () for v in (a, b)) and isinstance(cond, TensorValue) \
                and cond.shape == ():
            # per element: a Python choice of one of the two values as it is
            tensors = [v for v in (a, b) if isinstance(v, TensorValue)]
            if len(tensors) == 2 and tensors[0].dtype == tensors[1].dtype:
                return tensors[0].with_(requires_grad=_either(tensors[0].requires_grad, tensors[1].requires_grad))
            if len(tensors) == 1:
                return tensors[0]
            if isinstance(a, ScalarValue) and isinstance(b, ScalarValue) and a.kind == b.kind:
                return ScalarValue(a.kind)
        if isinstance(cond, TensorValue) and isinstance(a, ScalarValue) and isinstance(b, ScalarValue) \
                and a.kind == b.kind and cond.shape is not None:
            # two Python numbers of one kind: torch.where gives their dtype (int64, the default float, bool)
            dtype = {"int": DType.int64, "bool": DType.bool, "float": self.oracle.default_float}.get(a.kind)
            if dtype is None:
                return None
            return TensorValue(dtype, cond.shape, cond.device, layout.contiguous_strides(cond.shape), False, True)
        op = optable.function("where")
        from torchwise.analysis import ops_families
        from torchwise.analysis.tensors import Call

        try:
            return ops_families.apply(self.oracle.state, op, Call(None, [cond, a, b], {}, False, None))
        except Exception:  # noqa: BLE001 - unknown to the engine: refused below
            return None

    # -- the batching rules ------------------------------------------------------------------------------
    def pointwise(self, operands: list, render, facts_of, python_op: Optional[str] = None) -> Vec:
        """An element-wise op: batched operands of fewer element dims get ``None`` dims after the loop dims so
        that they broadcast per element as they did; loop-invariant operands broadcast as they are."""
        batched = [v for v in operands if v.batched]
        if not batched:
            raise Refuse("internal: an invariant element-wise op")
        if any(v.parts is not None for v in operands):
            raise Refuse("a tuple result used as a tensor")
        if any(v.ragged is not None for v in operands):
            raise Refuse("a ragged slice used other than summed or averaged")
        python = all(v.python or not v.is_tensor for v in operands)
        elem = facts_of([v.elem for v in operands])
        if elem is None:
            raise Refuse("an op the analysis cannot follow here (or PyTorch raises)")
        if python:
            return self._python_pointwise(operands, render, elem, python_op)
        if isinstance(elem, TensorValue) and elem.dtype is DType.float64:
            operands = [self._float64_literal(v) for v in operands]
            batched = [v for v in operands if v.batched]
        rank = max(v.rank for v in operands if v.is_tensor or v.batched)
        invariant_ranks = [_effective_rank(v) for v in operands if v.is_tensor and not v.batched]
        wanted = max([v.rank for v in batched] + invariant_ranks)
        padded = [self.pad(v, wanted) if v.batched else v for v in operands]
        texts = [self._operand_text(v) for v in padded]
        text, prec = render(texts, [v.prec for v in padded])
        whole = facts_of([self._whole_operand(v) for v in padded])
        deps = frozenset().union(*(v.deps for v in operands))
        if isinstance(elem, ScalarValue):
            # a Python number per element (a choice between two ints or bools): exact on int64 / bool tensors
            if elem.kind not in ("int", "bool") or not isinstance(whole, TensorValue) or \
                    whole.dtype not in (DType.int64, DType.bool):
                raise Refuse("a Python float chosen per element (float32 would round it)")
            return Vec(text, prec, elem, whole, deps, python=True)
        lost = max(rank, len(getattr(elem, "shape", ()) or ())) - wanted if isinstance(elem, TensorValue) else 0
        vec = Vec(text, prec, elem, whole, deps, lost=max(lost, 0), free=_same_promotion(operands))
        self.prove(vec)
        padded = self._scalars_moved(operands, padded)
        moved = self._moved_pointwise(padded, render)
        if moved:
            k = moved[2]
            facts = facts_of([(v.moved[1] or _unmoved(v.whole, k)) if v.batched else v.elem for v in padded])
            return replace(vec, moved=(moved[0], facts if _known(facts) else None, k))
        return vec

    def _float64_literal(self, vec: Vec) -> Vec:
        """A walked list of Python floats (``enumerate([0.2126, 0.7152, 0.0722])``) meeting float64 values: the loop
        computes with the exact doubles, so its tensor is made float64 (the default float would round them)."""
        literal = f"{self.torch}.tensor("
        if not (vec.batched and vec.python and isinstance(vec.elem, ScalarValue) and vec.elem.kind == "float"
                and isinstance(vec.whole, TensorValue) and vec.whole.dtype is not DType.float64
                and vec.base is not None and vec.base == vec.text and vec.text.startswith(literal)
                and vec.text.endswith(")") and "dtype=" not in vec.text):
            return vec
        text = f"{vec.text[:-1]}, dtype={self.torch}.float64)"
        return replace(vec, text=text, prec=ATOM, base=text, whole=vec.whole.with_(dtype=DType.float64))

    def _operand_text(self, vec: Vec) -> str:
        return vec.text

    def _whole_operand(self, vec: Vec):
        if not vec.batched:
            return vec.elem
        if vec.python:
            return vec.whole  # a tensor standing for the numbers
        return vec.whole

    def _python_pointwise(self, operands: list, render, elem, python_op) -> Vec:
        """An op between Python numbers (``.item()`` values, the loop index): emulated exactly on int64 / float64
        tensors (Python ints and floats are exactly those, for the sizes of a loop)."""
        if not isinstance(elem, ScalarValue) or elem.kind not in ("int", "float", "bool"):
            raise Refuse("an op between Python values not understood")
        if python_op in ("**",) and not self.bounded and not _squared_float(operands):
            raise Refuse("`**` of Python numbers (ints may give floats)")
        if python_op == "/" or elem.kind == "float":
            if python_op not in ("+", "-", "*", "/", "neg", "where", ">", ">=", "<", "<=", "==", "!=") \
                    and not (self.bounded and python_op in ("**", "//", "%")) and not _squared_float(operands):
                raise Refuse("an op between Python floats not understood")
        if python_op == "/" and not self.bounded and not _nonzero_number(operands[1]):
            raise Refuse("a Python division raises on a zero divisor, a tensor division gives inf")
        native = self._native_float(operands, python_op)
        if native is not None:
            # comparisons and choices of floats that are all exactly values of one float dtype: no rounding
            return self._native_python(operands, render, elem, native)
        texts, precs, wholes = [], [], []
        for v in operands:
            if v.batched:
                whole = v.whole
                text, prec = v.text, v.prec
                wanted = DType.float64 if elem.kind == "float" or python_op == "/" else None
                if v.elem.kind == "bool" and python_op not in ("where", "==", "!=", "&", "|", "^", "~"):
                    raise Refuse("arithmetic on Python bools")
                if v.elem.kind == "bool":
                    wanted = None
                if wanted is not None and whole.dtype != DType.float64:
                    text, prec = f"{wrap(text, prec, ATOM)}.double()", ATOM
                    whole = whole.with_(dtype=DType.float64)
                elif v.elem.kind == "bool":
                    pass
                elif v.elem.kind == "int" and whole.dtype != DType.int64:
                    text, prec = f"{wrap(text, prec, ATOM)}.long()", ATOM
                    whole = whole.with_(dtype=DType.int64)
                elif v.elem.kind == "float" and whole.dtype != DType.float64 and python_op not in ("where",):
                    text, prec = f"{wrap(text, prec, ATOM)}.double()", ATOM
                    whole = whole.with_(dtype=DType.float64)
                wholes.append(whole)
            else:
                if isinstance(v.elem, ScalarValue) and v.elem.kind == "float" and elem.kind in ("bool",) and \
                        python_op in (">", ">=", "<", "<=", "==", "!="):
                    pass
                text, prec = v.text, v.prec
                wholes.append(v.elem)
            texts.append(text)
            precs.append(prec)
        shapes_ = [w.shape for w in wholes if isinstance(w, TensorValue)]
        try:
            shape = shapes.broadcast(*shapes_)
        except shapes.ShapeError:
            raise Refuse("shapes that may not broadcast") from None
        dtypes_ = {w.dtype for w in wholes if isinstance(w, TensorValue)}
        if elem.kind == "bool":
            dtype = DType.bool
        elif elem.kind == "float":
            dtype = DType.float64
        else:
            dtype = DType.int64
        if elem.kind == "float" and dtypes_ - {DType.float64, DType.int64, DType.bool}:
            raise Refuse("internal: a Python float op of another dtype")
        text, prec = render(texts, precs)
        deps = frozenset().union(*(v.deps for v in operands))
        whole = TensorValue(dtype, shape, next(iter(w.device for w in wholes if isinstance(w, TensorValue))),
                            layout.contiguous_strides(shape), False, True)
        bound = _result_bound(python_op, operands) if elem.kind == "float" else None
        return Vec(text, prec, elem, whole, deps, python=True, bound=bound)

    def _native_float(self, operands: list, python_op) -> Optional[DType]:
        """The float dtype that holds every float operand exactly, for an op that only compares or chooses."""
        if python_op not in (">", ">=", "<", "<=", "==", "!=", "where"):
            return None
        found = None
        for v in operands:
            kind = getattr(v.elem, "kind", None)
            if v.batched and kind == "float":
                if v.whole.dtype not in (DType.float32, DType.float64) or found not in (None, v.whole.dtype):
                    return None
                found = v.whole.dtype
            elif v.batched and kind == "int":
                return None
        if found is None:
            return None
        for v in operands:
            if not v.batched and getattr(v.elem, "kind", None) in ("float", "int"):
                if not _exactly(v.text, found):
                    return None
        return found

    def _native_python(self, operands: list, render, elem, dtype) -> Vec:
        text, prec = render([v.text for v in operands], [v.prec for v in operands])
        wholes = [v.whole for v in operands if v.batched]
        try:
            shape = shapes.broadcast(*[w.shape for w in wholes])
        except shapes.ShapeError:
            raise Refuse("shapes that may not broadcast") from None
        result = DType.bool if elem.kind == "bool" else dtype
        whole = TensorValue(result, shape, wholes[0].device, layout.contiguous_strides(shape), False, True)
        return Vec(text, prec, elem, whole, frozenset().union(*(v.deps for v in operands)), python=True)

    def pad(self, vec: Vec, rank: int) -> Vec:
        """``vec`` with ``None`` dims after its loop dims so its element has ``rank`` dims (``w[:, None]``), or its
        keepdim form (``row.sum(dim=1, keepdim=True)``)."""
        if not vec.batched or vec.rank >= rank:
            return vec
        if vec.lost:
            raise Refuse("broadcasting a value whose loop-invariant operand added leading dims")
        extra = rank - vec.rank
        shape, strides = list(vec.whole.shape), vec.whole.strides
        at = vec.batch_dims
        for _ in range(extra):
            strides = layout.unsqueeze_strides(tuple(shape), strides, at) if strides is not None else None
            shape.insert(at, 1)
        whole = vec.whole.with_(shape=tuple(shape), strides=strides)
        elem = vec.elem.with_(shape=(1,) * extra + tuple(vec.elem.shape),
                              strides=None if vec.elem.strides is None else (1,) * extra + tuple(vec.elem.strides)) \
            if isinstance(vec.elem, TensorValue) else vec.elem
        if vec.keepdim is not None and vec.kept == extra:
            return replace(vec, text=vec.keepdim, prec=ATOM, whole=whole, elem=elem, keepdim=None,
                           moved=vec.keepdim_moved, keepdim_moved=None)
        index = ", ".join([":"] * vec.batch_dims + ["None"] * extra)
        return replace(vec, text=f"{vec.atom()}[{index}]", prec=ATOM, whole=whole, elem=elem, keepdim=None,
                       moved=None, base=None)

    def prove(self, vec: Vec) -> None:
        """The proof obligation of every node: one element's facts and the whole's agree (dtype, device, grad),
        and the whole's shape is the loop dims (sizes N or 1; leading ones may be left out) then the element's."""
        elem, whole = vec.elem, vec.whole
        if not _shaped(whole):
            raise Refuse("the vectorized op is not known to the analysis (or PyTorch would raise)")
        if not _shaped(elem):
            raise Refuse("an element's facts are unknown")
        if whole.dtype is None or elem.dtype is None:
            if not vec.free:
                raise Refuse("a dtype is unknown, and type promotion could differ for a slice and the whole tensor")
        elif whole.dtype != elem.dtype:
            raise Refuse(f"a slice computes in {elem.dtype.short}, the whole tensor in {whole.dtype.short}")
        elif is_complex(whole.dtype):
            raise Refuse("complex dtypes")
        if elem.requires_grad != whole.requires_grad and None not in (elem.requires_grad, whole.requires_grad):
            raise Refuse("grad differs")
        element = tuple(elem.shape[vec.lost:])
        if len(whole.shape) < len(element):
            raise Refuse("the vectorized value has too few dims")
        tail = tuple(whole.shape[len(whole.shape) - len(element):])
        if any(not _certain(dims.dim_eq(a, b)) for a, b in zip(tail, element)):
            raise Refuse(f"each element has shape {dims.fmt_shape(element)}, the vectorized value "
                         f"{dims.fmt_shape(whole.shape)}")
        lead = tuple(whole.shape[: len(whole.shape) - len(element)])
        if len(lead) > self.depth:
            raise Refuse("the vectorized value has more dims than the loops")
        for offset, size in enumerate(lead):
            k = self.depth - len(lead) + offset
            wanted = self.levels[k].count if k in vec.deps else 1
            if self.select is not None and k in vec.deps:
                wanted = self.select[1]
            if wanted is None or not _certain(dims.dim_eq(size, wanted)):
                raise Refuse("the vectorized value does not follow the loop dims")
        if not vec.deps <= set(range(self.depth - len(lead), self.depth)):
            raise Refuse("internal: a loop dim left out")

    def _scalars_moved(self, operands: list, padded: list) -> list:
        """``X[:, j] - mu[j]``: a per-element number (``mu[j]``, whole ``mu``) next to a column walk has a moved form
        too: in the data's own dim order the loop dim is ``k``, so ``mu`` with ``None`` dims after it lines up
        there (``X - mu``). One loop only (its whole is 1-d)."""
        first = next((v.moved for v in padded if v.batched and v.moved is not None), None)
        if first is None or self.depth != 1:
            return padded
        rank = next(v.rank for v in padded if v.batched and v.moved is not None) + 1  # the data's dims
        result = []
        for plain, v in zip(operands, padded):
            if v.batched and v.moved is None and plain.is_tensor and plain.rank == 0 and not plain.lost \
                    and len(plain.whole.shape) == 1 and plain.deps == frozenset({0}):
                later = rank - 1 - first[2]
                text = plain.atom() + (f"[:{', None' * later}]" if later > 0 else "")
                v = replace(v, moved=(text, None, first[2]))
            result.append(v)
        return result

    def _moved_pointwise(self, operands: list, render) -> Optional[tuple]:
        """Element-wise ops on column walks with numbers: the same op on the data in its own dim order."""
        batched = [v for v in operands if v.batched]
        first = batched[0].moved
        if first is None or any(v.moved is None or v.moved[2] != first[2] for v in batched):
            return None
        if any(v.is_tensor and not v.batched and v.rank > 0 for v in operands):
            return None
        if any(v.rank != batched[0].rank for v in batched):
            return None
        texts = [v.moved[0] if v.batched else v.text for v in operands]
        precs = [ATOM if v.batched else v.prec for v in operands]
        text, prec = render([wrap(t, p, ATOM) for t, p in zip(texts, precs)], [ATOM] * len(texts))
        return wrap(text, prec, ATOM), None, first[2]


def _squared_float(operands: list) -> bool:
    """``b ** 2`` of a Python float per element whose magnitude is bounded below 1e150 (``v.item() ** 2`` of a float32
    tensor's number, ``(p - t) ** 2`` of two of them): squared once and rounded once in both Python and float64
    torch, and it cannot overflow (Python would raise ``OverflowError`` where torch gives inf)."""
    if len(operands) != 2:
        return False
    base, exponent = operands
    bound = _float_bound(base)
    return base.batched and isinstance(base.elem, ScalarValue) and base.elem.kind == "float" \
        and bound is not None and bound < 1e150 \
        and not exponent.batched and isinstance(exponent.elem, ScalarValue) and exponent.elem.kind == "int" \
        and exponent.elem.value == 2 and type(exponent.elem.value) is int


_NARROW_FLOAT_MAX = 3.5e38  # float32's largest finite value, rounded up (float16 and bfloat16 stay below it)


def _float_bound(vec: Vec) -> Optional[float]:
    """A bound on the magnitude of a Python number per element: known from its arithmetic (``Vec.bound``), or the
    number of a float32 (or narrower) tensor's element, or a known invariant number."""
    if vec.bound is not None:
        return vec.bound
    if vec.batched and vec.python and isinstance(vec.whole, TensorValue) \
            and vec.whole.dtype in (DType.float32, DType.float16, DType.bfloat16):
        return _NARROW_FLOAT_MAX
    if not vec.batched and isinstance(vec.elem, ScalarValue) and type(vec.elem.value) in (int, float):
        return abs(vec.elem.value) if math.isfinite(vec.elem.value) else None
    return None


def _result_bound(python_op, operands: list) -> Optional[float]:
    """The bound of ``a + b``, ``a - b``, ``a * b``, ``-a`` from its operands' bounds (None: unknown)."""
    bounds = [_float_bound(v) for v in operands]
    if None in bounds or python_op not in ("+", "-", "*", "neg"):
        return None
    if python_op == "*":
        return bounds[0] * bounds[1] if len(bounds) == 2 else None
    return sum(bounds)


_INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def _folded_sizes(symbol: str, left: Vec, right: Vec) -> Optional[Vec]:
    """``img.shape[1] * img.shape[2]``: known sizes of the slices (the same ints on every iteration) combined by
    Python int arithmetic, exactly; the result is one more known int."""
    if symbol not in _INT_OPS or left.batched or right.batched:
        return None
    values = [v.elem.value for v in (left, right) if isinstance(v.elem, ScalarValue) and v.elem.kind == "int"
              and type(v.elem.value) is int and str(v.elem.value) == v.text]  # literals only (sizes, folded)
    if len(values) != 2:
        return None
    result = _INT_OPS[symbol](*values)
    return Vec(str(result), ATOM, ScalarValue("int", result)) if result >= 0 else None

