"""Random torch programs for the facts engine's differential test (``test_facts_truth.py``).

A program is built one statement at a time while a scratch copy of it runs in real torch, so the
generator knows the real shape and dtype of every variable and can pick arguments that fit - or,
on purpose now and then (about one choice in eight), arguments that do not (shape clashes, views
after transposes, int @ float, out-of-range indexes, numel mismatches, ragged literals).
Generation stops after the first statement that raises in the scratch run. The scratch run only
*guides*: the truth comes from ``test_facts_truth.run_program``, which executes the finished text
from scratch.

Every choice goes through a :class:`Chooser`, so the same generator runs under hypothesis (which
then shrinks a failing program: index 0 of every choice is the simplest option, and ``chance``
shrinks to False) or from a seeded ``random.Random`` (the coverage sweep).

Programs contain: factories, numpy arrays and the conversions from them, element-wise arithmetic
with tensors and Python scalars, comparisons, the matmul family, reductions, unary math, views
and other layout ops, indexing, cat/stack, split/chunk/unbind with tuple unpacking, casts,
``torch.where``, ``einsum``, ``nn`` layers (constructed inline or kept in a variable),
``nn.functional``, ints read from shapes, ``+=``, rebinding a name, ``torch.set_default_dtype``
at module level, ``if``/``else`` whose branches assign the same name, small functions called once
or twice (with the same or other arguments), and functions of ``int`` parameters (symbolic sizes
for the engine) called with ints.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
from torch import nn

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport numpy as np\n"

# Index 0 of each list is the simplest choice (what hypothesis shrinks to).
DTYPES = ["torch.float32", "torch.float64", "torch.int64", "torch.int32", "torch.bool", "torch.float16",
          "torch.uint8", "torch.bfloat16", "torch.int8", "torch.int16", "torch.complex64"]
CASTS = ["float", "double", "long", "int", "half", "bool", "bfloat16", "short", "byte"]
TO_OTHER = ['"cpu"', "torch.device('cpu')", "torch.float64", "'cpu', torch.int64"]
SCALARS = ["2", "0.5", "True", "3", "-1", "2.5", "False", "1e-3"]


# -- choosers -----------------------------------------------------------------------------------------
class Chooser:
    def choice(self, options):
        raise NotImplementedError

    def chance(self, percent: int) -> bool:
        """True with about this probability (shrinks to False)."""
        raise NotImplementedError

    def integer(self, lo: int, hi: int) -> int:
        return self.choice(list(range(lo, hi + 1)))


class RandomChooser(Chooser):
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def choice(self, options):
        return options[self.rng.randrange(len(options))]

    def chance(self, percent: int) -> bool:
        return self.rng.randrange(100) < percent


class DataChooser(Chooser):
    """Draws from hypothesis' ``st.data()``."""

    def __init__(self, data):
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def choice(self, options):
        return options[self.data.draw(self.st.integers(0, len(options) - 1))]

    def chance(self, percent: int) -> bool:
        return self.data.draw(self.st.integers(0, 99)) >= 100 - percent


# -- programs -------------------------------------------------------------------------------------------
@dataclass
class Line:
    text: str  # one statement, no indentation
    kind: str  # the op, for the coverage report


@dataclass
class IfBlock:
    cond: str
    body: list
    orelse: list


@dataclass
class FuncDef:
    name: str
    params: list
    body: list  # Lines; the last one is ``return ...``


@dataclass
class Program:
    items: list = field(default_factory=list)

    def source(self) -> str:
        return HEADER + "".join(_render(item) for item in self.items)

    def kinds(self) -> dict:
        """Line number -> op kind, for every generated statement."""
        kinds, line = {}, HEADER.count("\n")
        for item in self.items:
            for text in _render(item).splitlines():
                line += 1
                kinds[line] = _kind_of(item, text)
        return kinds


def _render(item) -> str:
    if isinstance(item, Line):
        return item.text + "\n"
    if isinstance(item, IfBlock):
        return (f"if {item.cond}:\n" + "".join(f"    {l.text}\n" for l in item.body) + "else:\n"
                + "".join(f"    {l.text}\n" for l in item.orelse))
    return f"def {item.name}({', '.join(item.params)}):\n" + "".join(f"    {l.text}\n" for l in item.body)


def _kind_of(item, text: str) -> str:
    if isinstance(item, Line):
        return item.kind
    lines = item.body + (item.orelse if isinstance(item, IfBlock) else [])
    for line in lines:
        if line.text == text.strip():
            return line.kind
    return "block"


# -- helpers on real values --------------------------------------------------------------------------------
def _divisors(n: int) -> list:
    return [d for d in range(1, n + 1) if n % d == 0] or [1]


def _is_float(t) -> bool:
    return t.dtype.is_floating_point


def _is_int(t) -> bool:
    return not t.dtype.is_floating_point and not t.dtype.is_complex and t.dtype != torch.bool


class Generator:
    def __init__(self, chooser: Chooser, max_statements: int = 10):
        self.c = chooser
        self.max_statements = max_statements
        self.ns: dict = {}
        self.vars: dict = {}  # module-level generated names -> real values (scratch)
        self.counter = 0
        self.functions = 0
        self.program = Program()
        self.default_changed = False
        self.name_chance = 30  # how often a size is written as an int variable that holds it

    # -- plumbing ---------------------------------------------------------------------------------
    def fresh(self, prefix="v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def bad(self, percent: int = 12) -> bool:
        return self.c.chance(percent)

    def run(self, text: str, ns: dict) -> bool:
        try:
            exec(text, ns)
            return True
        except Exception:
            return False

    def value(self, expr: str, env: dict):
        """The scratch value of an expression, or None when it raises."""
        try:
            return eval(expr, {**self.ns, **env})
        except Exception:
            return None

    def names(self, env: dict, kind=torch.Tensor, pred=None) -> list:
        return [n for n, v in env.items() if isinstance(v, kind) and (pred is None or pred(v))]

    def pick(self, env: dict, kind=torch.Tensor, pred=None, fallback=True) -> Optional[str]:
        names = self.names(env, kind, pred)
        if not names and fallback and pred is not None:
            names = self.names(env, kind)
        return self.c.choice(names) if names else None

    def dim(self) -> int:
        return 0 if self.c.chance(3) else self.c.choice([2, 3, 4, 1, 5, 6])

    def shape(self, rank: Optional[int] = None) -> list:
        rank = self.c.choice([2, 1, 3, 0, 4]) if rank is None else rank
        return [self.dim() for _ in range(rank)]

    def size_text(self, dims, env: dict, varargs_ok=True) -> str:
        """A size as code: ``2, 3`` / ``(2, 3)`` / ``[2, 3]``, some dims read from int variables."""
        ints = {v: n for n, v in env.items() if type(v) is int and v >= 0}
        parts = [ints[d] if d in ints and self.c.chance(self.name_chance) else str(d) for d in dims]
        style = self.c.choice(["tuple", "varargs", "list"] if varargs_ok else ["tuple", "list"])
        if style == "varargs" and parts:
            return ", ".join(parts)
        if style == "list":
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def dtype_kw(self, percent=25) -> str:
        return f", dtype={self.c.choice(DTYPES)}" if self.c.chance(percent) else ""

    def other_dim(self, t, percent=15) -> int:
        """A valid dim of ``t`` (negative sometimes), or an invalid one now and then."""
        rank = max(t.dim(), 1)
        if self.bad(percent):
            return self.c.choice([rank, -rank - 1, rank + 1])
        d = self.c.integer(0, rank - 1)
        return d - rank if self.c.chance(30) else d

    def literal(self, shape, kind: str) -> str:
        def element(i):
            k = kind if kind != "mixed" else self.c.choice(["int", "float", "bool"])
            return {"int": str(i % 5 - 1), "float": f"{i % 7 * 0.5}", "bool": str(i % 2 == 0)}[k]
        counter = iter(range(1000))

        def build(dims):
            if not dims:
                return element(next(counter))
            items = [build(dims[1:]) for _ in range(dims[0])]
            return "[" + ", ".join(items) + "]"
        text = build(list(shape))
        if len(shape) >= 2 and shape[0] >= 2 and self.bad(15):  # ragged
            text = text.replace("], [", "], [0, ", 1)
        return text

    def compatible_tensor(self, env: dict, shape, fits, inline_dtype_of=None) -> str:
        """A variable whose real value satisfies ``fits``, else an inline factory of ``shape``."""
        names = self.names(env, pred=fits)
        if names and self.c.chance(60):
            return self.c.choice(names)
        size = self.size_text(shape, env, varargs_ok=False)
        if inline_dtype_of is not None and self.c.chance(60):
            return f"torch.ones({size}, dtype={inline_dtype_of}.dtype)"
        return f"torch.randn({size})"

    # -- the program -----------------------------------------------------------------------------
    def generate(self) -> Program:
        default = torch.get_default_dtype()
        self.ns = {}
        exec(HEADER, self.ns)
        torch.default_generator.manual_seed(0)
        np.random.seed(0)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for _ in range(self.c.integer(1, self.max_statements)):
                    if not self.statement():
                        break
        finally:
            torch.set_default_dtype(default)
        return self.program

    BRANCH_CATEGORIES = ["binop", "view", "layout", "reduce", "index", "matmul", "unary", "cast", "cat", "where",
                         "einsum", "nn", "functional", "factory"]
    CATEGORIES = ["factory", "binop", "view", "layout", "reduce", "index", "matmul", "factory", "binop", "layout",
                  "unary", "cast", "cat", "split", "where", "einsum", "nn", "functional", "scalar", "like",
                  "numpy", "reduce", "index", "if", "def", "augassign", "default_dtype", "view", "matmul", "nn",
                  "symbolic_def"]

    def statement(self) -> bool:
        """Add one top-level statement; False once one raised (the program ends there)."""
        has_tensor = any(isinstance(v, torch.Tensor) for v in self.vars.values())
        category = self.c.choice(self.CATEGORIES) if has_tensor else \
            self.c.choice(["factory", "factory", "factory", "numpy"])
        if category == "if":
            return self.if_block()
        if category == "def":
            return self.function()
        if category == "symbolic_def":
            return self.symbolic_function()
        if category == "default_dtype":
            if self.default_changed:
                return True
            self.default_changed = True
            return self.emit(Line("torch.set_default_dtype(torch.float64)", "set_default_dtype"))
        if category == "augassign":
            return self.augassign()
        made = self.expression(category, self.vars)
        if made is None:
            return True
        text, kind, count = made
        targets = [self.fresh() for _ in range(count)]
        if count == 1 and self.vars and self.c.chance(8):  # rebind an existing name
            targets = [self.c.choice(list(self.vars))]
        return self.emit(Line(f"{', '.join(targets)} = {text}", kind))

    def emit(self, line: Line) -> bool:
        self.program.items.append(line)
        ok = self.run(line.text, self.ns)
        self._sync()
        return ok

    def _sync(self):
        self.vars = {n: v for n, v in self.ns.items() if n[0] == "v" and n[1:].isdigit()}

    def augassign(self) -> bool:
        x = self.pick(self.vars)
        if x is None:
            return True
        t = self.vars[x]
        other = self.c.choice(SCALARS[:4]) if self.c.chance(50) else self.compatible_tensor(
            self.vars, list(t.shape), lambda v, s=t.shape: v.shape == s)
        return self.emit(Line(f"{x} {self.c.choice(['+=', '*=', '-=', '/='])} {other}", "augassign"))

    def if_block(self) -> bool:
        """``if``/``else`` whose branches both end by assigning the same name."""
        x = self.pick(self.vars)
        cond = self.c.choice(["True", "False", f"{x}.dim() > 1", f"{x}.sum() > 0"])
        target = self.fresh()
        branches, spaces, oks = [], [], []
        for _ in range(2):
            ns = dict(self.ns)
            env = {n: ns[n] for n in self.vars}
            lines, ok, count = [], True, self.c.integer(1, 2)
            for i in range(count):
                made = self.expression(self.c.choice(self.BRANCH_CATEGORIES), env)
                name = target if i == count - 1 else self.fresh()
                if made is None or made[2] != 1:
                    made = (self.pick(env) or "0", "name", 1)
                lines.append(Line(f"{name} = {made[0]}", made[1]))
                ok = self.run(lines[-1].text, ns)
                if not ok:
                    break
                env[name] = ns[name]
            branches.append(lines)
            spaces.append(ns)
            oks.append(ok)
        self.program.items.append(IfBlock(cond, branches[0], branches[1]))
        taken = 0 if self.value(cond, {}) else 1
        self.ns = spaces[taken]
        self._sync()
        return oks[taken]

    def function(self) -> bool:
        params = ["p0", "p1"][: self.c.integer(1, 2)]
        args = [self.pick(self.vars) for _ in params]
        env = {p: self.vars[a] for p, a in zip(params, args)}
        name = f"f{self.functions}"
        self.functions += 1
        body = []
        for i in range(self.c.integer(0, 2)):
            made = self.expression(self.c.choice(self.BRANCH_CATEGORIES), env)
            if made is None or made[2] != 1:
                continue
            local = f"h{i}"
            body.append(Line(f"{local} = {made[0]}", made[1]))
            value = self.value(made[0], env)
            if value is None:
                break  # raises for these arguments: the call will raise here
            env[local] = value
        made = self.expression(self.c.choice(self.BRANCH_CATEGORIES), env)
        body.append(Line(f"return {made[0]}" if made and made[2] == 1 else f"return {params[0]}",
                         made[1] if made and made[2] == 1 else "name"))
        item = FuncDef(name, params, body)
        self.program.items.append(item)
        self.run(_render(item), self.ns)
        if not self.emit(Line(f"{self.fresh()} = {name}({', '.join(args)})", "call")):
            return False
        if self.c.chance(40):  # a second call, with the same or other arguments
            others = [a if self.c.chance(50) else self.pick(self.vars) for a in args]
            return self.emit(Line(f"{self.fresh()} = {name}({', '.join(others)})", "call"))
        return True

    def symbolic_function(self) -> bool:
        """A function of ``int`` parameters (the engine's symbolic dims), called with ints."""
        names = ["B", "T", "C", "D"][: self.c.integer(1, 3)]
        values = [self.c.integer(1, 4) for _ in names]
        env: dict = dict(zip(names, values))
        name = f"f{self.functions}"
        self.functions += 1
        dims = [self.c.choice(names) for _ in range(self.c.integer(1, 3))]
        fn = self.c.choice(["randn", "zeros", "ones"])
        body = [Line(f"h0 = torch.{fn}({', '.join(dims)})", f"torch.{fn}")]
        self.name_chance = 80
        env["h0"] = self.value(f"torch.{fn}({', '.join(dims)})", env)
        for i in range(1, self.c.integer(1, 3)):
            made = self.expression(self.c.choice(self.BRANCH_CATEGORIES), env)
            if made is None or made[2] != 1:
                continue
            body.append(Line(f"h{i} = {made[0]}", made[1]))
            value = self.value(made[0], env)
            if value is None:
                break
            env[f"h{i}"] = value
        tensors = [n for n in env if n.startswith("h")]
        body.append(Line(f"return {tensors[-1]}", "name"))
        self.name_chance = 30
        self.program.items.append(FuncDef(name, [f"{n}: int" for n in names], body))
        self.run(_render(self.program.items[-1]), self.ns)
        if not self.emit(Line(f"{self.fresh()} = {name}({', '.join(map(str, values))})", "call")):
            return False
        if self.c.chance(40):
            others = [self.c.integer(1, 4) for _ in names]
            return self.emit(Line(f"{self.fresh()} = {name}({', '.join(map(str, others))})", "call"))
        return True

    # -- expressions: (code, kind, number of targets) or None ------------------------------------------
    def expression(self, category: str, env: dict):
        if category != "factory" and category != "numpy" and not self.names(env):
            category = "factory"
        return getattr(self, "ex_" + category)(env)

    def ex_factory(self, env):
        sub = self.c.choice(["sized", "tensor", "arange", "full", "randint", "eye", "linspace", "from_numpy", "new"])
        if sub == "sized":
            fn = self.c.choice(["zeros", "ones", "randn", "rand", "empty"])
            dims = self.shape()
            args = self.size_text(dims, env) if dims or self.c.chance(50) else "()"
            if self.c.chance(5):
                args = f"size=({', '.join(map(str, dims))}{',' if len(dims) == 1 else ''})"
            grad = ", requires_grad=True" if self.c.chance(15) else ""
            return f"torch.{fn}({args}{self.dtype_kw()}{grad})", f"torch.{fn}", 1
        if sub == "tensor":
            kind = self.c.choice(["int", "float", "bool", "mixed"])
            rank = self.c.choice([1, 2, 0, 3])
            dims = [self.c.choice([2, 3, 1, 0]) if self.c.chance(80) else 0 for _ in range(rank)]
            grad = ", requires_grad=True" if self.c.chance(10) else ""
            return f"torch.tensor({self.literal(dims, kind)}{self.dtype_kw(20)}{grad})", "torch.tensor", 1
        if sub == "arange":
            form = self.c.choice(["n", "ab", "abs", "float", "dtype"])
            a, b, s = self.c.integer(0, 6), self.c.integer(0, 8), self.c.choice([1, 2, -1, 3])
            text = {"n": f"{b}", "ab": f"{a}, {b}", "abs": f"{a}, {b}, {s}", "float": f"{a * 0.5}, {b}, 0.5",
                    "dtype": f"{b}, dtype={self.c.choice(DTYPES[:4])}"}[form]
            return f"torch.arange({text})", "torch.arange", 1
        if sub == "full":
            fill = self.c.choice(["1.5", "2", "True", "-1"])
            return f"torch.full({self.size_text(self.shape(), env, False)}, {fill}{self.dtype_kw(25)})", \
                "torch.full", 1
        if sub == "randint":
            dims = self.size_text(self.shape(), env, False)
            high = self.c.integer(1, 6)
            text = f"{high}, {dims}" if self.c.chance(60) else f"0, {high}, {dims}"
            if self.c.chance(20):
                text += f", dtype={self.c.choice(['torch.int32', 'torch.int64', 'torch.uint8', 'torch.float32'])}"
            return f"torch.randint({text})", "torch.randint", 1
        if sub == "eye":
            n, m = self.c.integer(1, 4), self.c.integer(1, 4)
            cols = f", {m}" if self.c.chance(50) else ""
            return f"torch.eye({n}{cols}{self.dtype_kw(20)})", "torch.eye", 1
        if sub == "linspace":
            steps = self.c.integer(0, 6)
            return f"torch.linspace(0, {self.c.choice(['1', '2.5', '10'])}, {steps}{self.dtype_kw(20)})", \
                "torch.linspace", 1
        if sub == "from_numpy" and self.c.chance(15):
            kind = self.c.choice(["int", "float", "bool"])
            return f"torch.as_tensor({self.literal(self.shape(self.c.choice([1, 2])), kind)})", \
                "torch.as_tensor(list)", 1
        if sub == "from_numpy":
            arrays = self.names(env, np.ndarray)
            source = self.c.choice(arrays) if arrays and self.c.chance(70) else self.ex_numpy(env)[0]
            fn = self.c.choice(["torch.from_numpy", "torch.tensor", "torch.as_tensor"])
            extra = f", dtype={self.c.choice(DTYPES[:4])}" if fn != "torch.from_numpy" and self.c.chance(25) else ""
            return f"{fn}({source}{extra})", fn + "(ndarray)", 1
        x = self.pick(env)
        if x is None:
            return self.ex_factory(env)
        fn = self.c.choice(["new_zeros", "new_ones", "new_empty", "new_full"])
        size = self.size_text(self.shape(), env, fn != "new_full")
        return (f"{x}.{fn}({size}, 2.5)" if fn == "new_full" else f"{x}.{fn}({size}{self.dtype_kw(20)})"), \
            f".{fn}", 1

    def ex_numpy(self, env):
        dims = self.shape(self.c.choice([2, 1, 3]))
        tup = "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
        form = self.c.choice(["rand", "zeros32", "array", "ones", "zeros_int", "randn"])
        text = {"rand": f"np.random.rand({', '.join(map(str, dims))})",
                "zeros32": f"np.zeros({tup}, dtype=np.float32)",
                "array": f"np.array({self.literal(dims, self.c.choice(['int', 'float', 'bool']))})",
                "ones": f"np.ones({tup})", "zeros_int": f"np.zeros({tup}, dtype=np.int32)",
                "randn": f"np.random.randn({', '.join(map(str, dims))})"}[form]
        return text, "numpy", 1

    def ex_like(self, env):
        x = self.pick(env)
        fn = self.c.choice(["zeros_like", "ones_like", "rand_like", "empty_like", "randn_like", "full_like"])
        if fn == "full_like":
            return f"torch.full_like({x}, 2)", "torch.full_like", 1
        return f"torch.{fn}({x}{self.dtype_kw(30)})", f"torch.{fn}", 1

    def ex_binop(self, env):
        x = self.pick(env)
        t = env[x]
        form = self.c.choice(["scalar", "same", "broadcast", "any", "zero_d"])
        if form == "scalar":
            other = self.c.choice(SCALARS)
        elif form == "same":
            other = self.compatible_tensor(env, list(t.shape), lambda v: v.shape == t.shape, x)
        elif form == "broadcast":
            tail = list(t.shape[-1:]) if t.dim() else []
            other = self.compatible_tensor(env, tail, lambda v: t.dim() and v.dim() == 1 and v.shape[0] == t.shape[-1])
        elif form == "zero_d":
            other = self.pick(env, pred=lambda v: v.dim() == 0, fallback=False) or f"{self.pick(env)}.sum()"
        else:
            other = self.pick(env)
        op = self.c.choice(["+", "*", "-", "/", "//", "**", "%", "<", "==", ">=", "!="])
        kind = "compare" if op in ("<", "==", ">=", "!=") else f"binop {op}"
        style = self.c.choice(["infix", "reversed", "method", "function"])
        if style == "reversed":
            return f"{other} {op} {x}", kind, 1
        names = {"+": "add", "*": "mul", "-": "sub", "/": "div", "//": "floor_divide", "**": "pow",
                 "%": "remainder", "<": "lt", "==": "eq", ">=": "ge", "!=": "ne"}
        if style == "method":
            return f"{x}.{names[op]}({other})", kind, 1
        if style == "function" and op in ("+", "*", "-", "/"):
            return f"torch.{names[op]}({x}, {other})", kind, 1
        return f"{x} {op} {other}", kind, 1

    def ex_unary(self, env):
        x = self.pick(env)
        fn = self.c.choice(["exp", "abs", "sqrt", "neg", "sigmoid", "relu", "tanh", "floor", "log", "square"])
        style = self.c.choice(["method", "torch", "minus"])
        if style == "minus":
            return f"-{x}", "unary -", 1
        return (f"{x}.{fn}()" if style == "method" else f"torch.{fn}({x})"), f"unary {fn}", 1

    def ex_matmul(self, env):
        form = self.c.choice(["@", "matmul", "mm", "mv", "dot", "bmm"])
        want = {"mm": 2, "mv": 2, "dot": 1, "bmm": 3}.get(form)
        x = self.pick(env, pred=(lambda v: v.dim() == want) if want else (lambda v: v.dim() >= 1))
        t = env[x]
        k = self.c.integer(1, 4)
        last = t.shape[-1] if t.dim() else 1
        if form == "mv":
            shape = [last]
        elif form == "dot":
            shape = [last]
        elif form == "bmm":
            shape = [t.shape[0] if t.dim() else 1, last, k]
        elif form == "mm":
            shape = [last, k]
        else:
            shape = self.c.choice([[last, k], [last], [2, last, k]])
        if self.bad(20):
            other = self.pick(env)
        else:
            other = self.compatible_tensor(env, shape, lambda v: list(v.shape) == shape and v.dtype == t.dtype, x)
        if form == "@":
            return f"{x} @ {other}", "matmul @", 1
        if form == "matmul" or self.c.chance(50):
            return f"torch.{form}({x}, {other})", f"matmul {form}", 1
        return f"{x}.{form}({other})", f"matmul {form}", 1

    def ex_reduce(self, env):
        x = self.pick(env)
        t = env[x]
        if t.dim() >= 1 and self.c.chance(15):
            return self._selection(x, t)
        fn = self.c.choice(["sum", "mean", "amax", "max", "argmax", "all", "any", "min", "prod", "amin", "argmin"])
        args = []
        if fn in ("max", "min") and self.c.chance(15):  # with a tensor: element-wise, broadcast and promoted
            other = self.pick(env)
            return (f"{x}.{fn}({other})" if self.c.chance(50) else f"torch.{fn}({x}, {other})"), f"{fn}(other)", 1
        if self.c.chance(65):
            if fn in ("sum", "mean", "amax", "amin") and t.dim() >= 2 and self.c.chance(30):
                args.append(f"dim=({self.other_dim(t, 5)}, {self.other_dim(t, 5)})")
            else:
                d = self.other_dim(t)
                args.append(f"dim={d}" if self.c.chance(50) else str(d))
            if self.c.chance(40):
                args.append(f"keepdim={self.c.choice(['True', 'False'])}")
        call = f"{x}.{fn}({', '.join(args)})" if self.c.chance(70) else \
            f"torch.{fn}({', '.join([x] + args)})"
        if fn in ("max", "min") and args:
            style = self.c.choice(["unpack", "index", "whole"])
            if style == "unpack":
                return call, f"reduce {fn}(dim)", 2
            if style == "index":
                return f"{call}[{self.c.choice(['0', '1'])}]", f"reduce {fn}(dim)", 1
        return call, f"reduce {fn}", 1

    def _selection(self, x: str, t):
        """The ops returning a (values, indices) named tuple, read whole, unpacked, by index or by field."""
        fn = self.c.choice(["topk", "kthvalue", "sort", "max", "median"])
        d = self.other_dim(t)
        size = t.shape[d] if -t.dim() <= d < t.dim() else 1
        args = [f"dim={d}" if self.c.chance(50) else str(d)]
        if fn in ("topk", "kthvalue"):
            low = 0 if fn == "topk" else 1
            k = self.c.integer(low, max(size, low)) if not self.bad(15) else size + 1
            args = [str(k)] + ([f"dim={d}"] if self.c.chance(70) else [])
        if fn in ("kthvalue", "max", "median") and self.c.chance(30):
            args.append(f"keepdim={self.c.choice(['True', 'False'])}")
        call = f"{x}.{fn}({', '.join(args)})" if self.c.chance(70) else f"torch.{fn}({', '.join([x] + args)})"
        style = self.c.choice(["unpack", "index", "values", "indices"])
        if style == "unpack":
            return call, f"select {fn}", 2
        suffix = f"[{self.c.choice(['0', '1'])}]" if style == "index" else f".{style}"
        return call + suffix, f"select {fn}", 1

    def ex_view(self, env):
        x = self.pick(env)
        t = env[x]
        n = t.numel()
        rank = self.c.choice([1, 2, 3, 4])
        dims = []
        rest = n
        for _ in range(rank - 1):
            d = self.c.choice(_divisors(rest)) if rest else self.c.choice([0, 1, 2])
            dims.append(d)
            rest = rest // d if d else rest
        dims.append(rest)
        if self.bad(20):
            dims[self.c.integer(0, rank - 1)] += self.c.choice([1, 2])
        if self.c.chance(40) and not (n == 0 and self.c.chance(50)):
            dims[self.c.integer(0, rank - 1)] = -1
        fn = self.c.choice(["view", "reshape"])
        size = self.size_text(dims, env)
        return f"{x}.{fn}({size})", fn, 1

    def ex_layout(self, env):
        x = self.pick(env)
        t = env[x]
        r = t.dim()
        op = self.c.choice(["transpose", "t", "permute", "unsqueeze", "contiguous", "T", "mT", "squeeze", "flatten",
                            "expand", "repeat", "clone"])
        if op == "transpose":
            return f"{x}.transpose({self.other_dim(t)}, {self.other_dim(t)})", op, 1
        if op == "t":
            return f"{x}.t()", op, 1
        if op in ("T", "mT"):
            return f"{x}.{op}", op, 1
        if op == "permute":
            perm = list(range(r))
            random.Random(self.c.integer(0, 5)).shuffle(perm)
            if self.bad(15):
                perm = perm[:-1] if perm and self.c.chance(50) else perm + [0]
            return f"{x}.permute({', '.join(map(str, perm))})" if perm and self.c.chance(70) else \
                f"{x}.permute({tuple(perm)})", op, 1
        if op == "unsqueeze":
            d = self.c.integer(-r - 1, r) if not self.bad(10) else r + 2
            return f"{x}.unsqueeze({d})", op, 1
        if op == "squeeze":
            return (f"{x}.squeeze({self.other_dim(t)})" if self.c.chance(50) else f"{x}.squeeze()"), op, 1
        if op == "flatten":
            if self.c.chance(50) or r < 2:
                return f"{x}.flatten()", op, 1
            return f"{x}.flatten({self.other_dim(t, 5)}, {self.other_dim(t, 5)})", op, 1
        if op == "expand":
            sizes = [self.c.choice([3, 2]) if s == 1 else (s if self.c.chance(70) else -1) for s in t.shape]
            if self.c.chance(40):
                sizes = [self.c.integer(1, 3)] + sizes
            if self.bad(15) and sizes:
                sizes[-1] = (sizes[-1] if sizes[-1] > 0 else 1) + 1
            return f"{x}.expand({', '.join(map(str, sizes)) or '()'})", op, 1
        if op == "repeat":
            reps = [self.c.integer(1, 3) for _ in range(r + self.c.choice([0, 1]))]
            if self.bad(10):
                reps = reps[:-1]
            return f"{x}.repeat({', '.join(map(str, reps)) or '()'})", op, 1
        return f"{x}.{op}()", op, 1

    def ex_index(self, env):
        x = self.pick(env, pred=lambda v: v.dim() >= 1)
        t = env[x]
        r = t.dim()
        s0 = t.shape[0] if r else 1
        i = self.c.integer(-s0, s0 - 1) if s0 and not self.bad(15) else s0
        form = self.c.choice(["int", "col", "step", "none", "ellipsis", "range", "mask", "last", "pair", "gather",
                              "gather"])
        if form == "gather":
            return self._gather(x, t)
        if form == "int":
            return f"{x}[{i}]", "index [i]", 1
        if form == "col":
            j = self.c.integer(0, t.shape[1] - 1) if r >= 2 and t.shape[1] and not self.bad(15) else 1
            return f"{x}[:, {j}]", "index [:, j]", 1
        if form == "step":
            return f"{x}[::{self.c.choice([2, 3, 1])}]", "index [::k]", 1
        if form == "none":
            return f"{x}[{self.c.choice(['None', ':, None', 'None, ...'])}]", "index [None]", 1
        if form == "ellipsis":
            j = self.c.integer(0, t.shape[-1] - 1) if r and t.shape[-1] and not self.bad(15) else 0
            return f"{x}[..., {j}]", "index [..., j]", 1
        if form == "range":
            return f"{x}[{self.c.integer(0, 2)}:{self.c.integer(1, 4)}]", "index [a:b]", 1
        if form == "last":
            return f"{x}[-1]", "index [-1]", 1
        if form == "pair":
            return f"{x}[0, {self.c.choice(['0', '1:', '-1'])}]", "index [i, j]", 1
        mask = self.pick(env, pred=lambda v: v.dtype == torch.bool and v.shape == t.shape, fallback=False)
        if mask is None or self.c.chance(40):
            mask = f"({x} > 0)" if not self.bad(10) else f"({self.pick(env)} > 0)"
        return f"{x}[{mask}]", "index [mask]", 1

    def _gather(self, x: str, t):
        """Integer tensors (and lists) as indices: one, two of them apart or adjacent, with slices and ints."""
        def ids(dim: int) -> str:
            size = t.shape[dim] if dim < t.dim() else 1
            if self.c.chance(20):  # a list: its ints are in the text, so out of bounds now and then
                top = size if not self.bad(10) else size + 3
                return f"[{', '.join(str(self.c.integer(0, max(top - 1, 0))) for _ in range(self.c.integer(1, 3)))}]"
            # a tensor: in bounds (its values are data, which the engine does not see), but any index of an
            # empty dim is out of bounds
            shape = ", ".join(str(self.c.integer(1, 3)) for _ in range(self.c.integer(0, 2)))
            return f"torch.randint(0, {max(size, 1)}, ({shape}{',' if shape.count(',') == 0 and shape else ''}))"
        r = t.dim()
        form = self.c.choice(["one", "rows-cols", "apart", "after-slice", "after-int"])
        if form == "one" or r < 2:
            return f"{x}[{ids(0)}]", "index [ids]", 1
        if form == "rows-cols":
            return f"{x}[{ids(0)}, {ids(1)}]", "index [ids, ids]", 1
        if form == "apart" and r >= 3:
            return f"{x}[{ids(0)}, :, {ids(2)}]", "index [ids, :, ids]", 1
        if form == "after-int" and r >= 3:
            return f"{x}[0, :, {ids(2)}]", "index [i, :, ids]", 1
        return f"{x}[:, {ids(1)}]", "index [:, ids]", 1

    def ex_cat(self, env):
        x = self.pick(env)
        t = env[x]
        fn = self.c.choice(["cat", "stack"])
        d = self.other_dim(t, 10) if t.dim() else 0
        if fn == "stack" and t.dim() and self.c.chance(30):
            d = t.dim()  # a new last dim
        if self.bad(20):
            other = self.pick(env)
        elif fn == "stack":
            other = self.compatible_tensor(env, list(t.shape), lambda v: v.shape == t.shape)
        else:
            shape = list(t.shape)
            if shape and -len(shape) <= d < len(shape):
                shape[d] = self.c.integer(1, 3)
            other = self.compatible_tensor(env, shape, lambda v: list(v.shape) == shape)
        seq = self.c.choice([f"[{x}, {other}]", f"({x}, {other})", f"[{x}, {other}, {x}]"])
        return (f"torch.{fn}({seq}, dim={d})" if self.c.chance(60) else f"torch.{fn}({seq}, {d})"), fn, 1

    def ex_split(self, env):
        x = self.pick(env, pred=lambda v: v.dim() >= 1)
        t = env[x]
        d = self.other_dim(t, 5)
        form = self.c.choice(["split", "chunk", "unbind", "sections", "torch.split", "meshgrid"])
        if form == "meshgrid":
            return self._meshgrid(env)
        if form == "split":
            call = f"{x}.split({self.c.integer(1, 3)}, {d})"
        elif form == "chunk":
            call = f"{x}.chunk({self.c.integer(1, 3)}, {d})"
        elif form == "unbind":
            call = f"{x}.unbind({d})"
        elif form == "sections":
            size = t.shape[d] if -t.dim() <= d < t.dim() else 2
            a = self.c.integer(0, size)
            call = f"{x}.split([{a}, {size - a if not self.bad(15) else size - a + 1}], {d})"
        else:
            call = f"torch.split({x}, {self.c.integer(1, 3)})"
        result = self.value(call, env)
        count = len(result) if isinstance(result, tuple) and 1 <= len(result) <= 5 else 2
        if self.bad(10):
            count += 1
        return call, form if form != "sections" else "split [sizes]", count

    def _meshgrid(self, env):
        """``torch.meshgrid(a, b, indexing=...)``: 0-d and 1-d inputs (others, now and then, which raise)."""
        small = [n for n in self.names(env) if env[n].dim() <= 1]
        count = self.c.integer(1, 3)
        tensors = [self.c.choice(small) if small and not self.bad(10) else self.pick(env) for _ in range(count)]
        spread = ", ".join(tensors)
        if self.c.chance(30):
            spread = f"[{spread}]" if self.c.chance(50) else f"({spread},)"
        indexing = self.c.choice(['indexing="ij"', 'indexing="xy"', 'indexing="ij"'])
        return f"torch.meshgrid({spread}, {indexing})", "torch.meshgrid", count

    def ex_cast(self, env):
        x = self.pick(env)
        form = self.c.choice(["method", "to", "to_kw", "to_device"])
        if form == "method":
            fn = self.c.choice(CASTS)
            return f"{x}.{fn}()", f".{fn}()", 1
        if form == "to_device":
            return f"{x}.to({self.c.choice(TO_OTHER)})", ".to", 1
        dtype = self.c.choice(DTYPES)
        return (f"{x}.to({dtype})" if form == "to" else f"{x}.to(dtype={dtype})"), ".to", 1

    def ex_where(self, env):
        x = self.pick(env)
        t = env[x]
        cond = self.pick(env, pred=lambda v: v.dtype == torch.bool, fallback=False)
        if cond is None or self.c.chance(50):
            cond = f"{x} > 0"
        other = self.c.choice(SCALARS[:3]) if self.c.chance(40) else self.compatible_tensor(
            env, list(t.shape), lambda v: v.shape == t.shape)
        return f"torch.where({cond}, {x}, {other})", "torch.where", 1

    def ex_einsum(self, env):
        x = self.pick(env, pred=lambda v: 1 <= v.dim() <= 3)
        t = env[x]
        r = t.dim()
        if r == 1:
            eq = self.c.choice(["i->", "i,i->", "i,j->ij"])
        elif r == 2:
            eq = self.c.choice(["ij->ji", "ij->", "ij->i", "ij,jk->ik", "ii->i", "ij,ij->ij"])
        else:
            eq = self.c.choice(["bij,bjk->bik", "bij->bji", "...j->...", "bij->b"])
        if r and self.bad(10):
            eq = eq.replace("i", "ii", 1)
        operands = [x]
        if "," in eq:
            lhs = eq.split("->")[0].split(",")
            sizes = dict(zip(lhs[0], t.shape))
            shape = [sizes.get(c, self.c.integer(1, 3)) for c in lhs[1]]
            operands.append(self.compatible_tensor(env, shape, lambda v: list(v.shape) == shape, x))
        return f"torch.einsum({eq!r}, {', '.join(operands)})", "einsum", 1

    def ex_nn(self, env):
        layer = self.c.choice(["Linear", "Conv2d", "Embedding", "LayerNorm", "MaxPool2d", "Flatten", "Sequential",
                               "module"])
        if layer == "module":
            made = self.ex_nn_module(env)
            return made
        modules = self.names(env, nn.Module)
        if modules and self.c.chance(50):
            m = self.c.choice(modules)
            x = self.pick(env, pred=lambda v: _fits(env[m], v))
            return f"{m}({x})", f"nn.{type(env[m]).__name__}(x)", 1
        x = self.pick(env)
        t = env[x]
        last = t.shape[-1] if t.dim() else 1
        if layer == "Linear":
            n_in = last if not self.bad(15) else last + 1
            return f"nn.Linear({n_in}, {self.c.integer(1, 5)})({x})", "nn.Linear(x)", 1
        if layer == "Conv2d":
            x = self.pick(env, pred=lambda v: v.dim() in (3, 4) and v.shape[-1] >= 1)
            t = env[x]
            c_in = t.shape[-3] if t.dim() >= 3 and not self.bad(15) else 3
            k, s, p = self.c.choice([3, 1, 2]), self.c.choice([1, 2]), self.c.choice([1, 0])
            return f"nn.Conv2d({c_in}, {self.c.integer(1, 4)}, {k}, {s}, {p})({x})", "nn.Conv2d(x)", 1
        if layer == "Embedding":
            x = self.pick(env, pred=lambda v: v.dtype in (torch.int64, torch.int32)
                          and (v.numel() == 0 or v.min() >= 0))
            t = env[x]
            top = min(max(int(t.max()) + 1, 1), 20) if t.numel() and _is_int(t) else 1
            return f"nn.Embedding({top + self.c.integer(0, 3)}, {self.c.integer(1, 4)})({x})", "nn.Embedding(x)", 1
        if layer == "LayerNorm":
            return f"nn.LayerNorm({last if not self.bad(15) else last + 1})({x})", "nn.LayerNorm(x)", 1
        if layer == "MaxPool2d":
            x = self.pick(env, pred=lambda v: v.dim() in (3, 4))
            args = self.c.choice(["2", "1", "3", "2, stride=1", "3, 2, 1", "2, ceil_mode=True"])
            return f"nn.MaxPool2d({args})({x})", "nn.MaxPool2d(x)", 1
        if layer == "Flatten":
            return f"nn.Flatten()({x})", "nn.Flatten(x)", 1
        hidden = self.c.integer(1, 4)
        return f"nn.Sequential(nn.Linear({last}, {hidden}), nn.ReLU(), nn.Linear({hidden}, 2))({x})", \
            "nn.Sequential(x)", 1

    def ex_nn_module(self, env):
        form = self.c.choice(["Linear", "Conv2d", "Embedding", "LayerNorm", "Sequential"])
        a, b = self.c.integer(1, 5), self.c.integer(1, 5)
        text = {"Linear": f"nn.Linear({a}, {b})", "Conv2d": f"nn.Conv2d({a}, {b}, 3, 1, 1)",
                "Embedding": f"nn.Embedding({a + 5}, {b})", "LayerNorm": f"nn.LayerNorm({a})",
                "Sequential": f"nn.Sequential(nn.Linear({a}, {b}), nn.ReLU())"}[form]
        if form == "Linear" and self.c.chance(20):
            text = f"nn.Linear({a}, {b}, bias=False)"
        if form == "Conv2d" and self.c.chance(40):
            text = f"nn.Conv2d({a}, {b}, kernel_size={self.c.choice([3, 1, 2])}, " \
                   f"stride={self.c.choice([1, 2])}, padding={self.c.choice(['1', '0', repr('same')])})"
        if self.c.chance(20):  # converted in place, returned
            text += self.c.choice([".double()", ".to(torch.float64)", ".half()", ".float()"])
        return text, f"nn.{form}", 1

    def ex_functional(self, env):
        fn = self.c.choice(["relu", "softmax", "linear", "one_hot", "cross_entropy", "log_softmax", "gelu"])
        x = self.pick(env)
        t = env[x]
        if fn in ("relu", "gelu"):
            return f"F.{fn}({x})", f"F.{fn}", 1
        if fn in ("softmax", "log_softmax"):
            return f"F.{fn}({x}, dim={self.other_dim(t, 5) if t.dim() else 0})", f"F.{fn}", 1
        if fn == "linear":
            last = t.shape[-1] if t.dim() else 1
            o = self.c.integer(1, 4)
            w = self.compatible_tensor(env, [o, last], lambda v: list(v.shape) == [o, last], x)
            bias = f", torch.zeros({o})" if self.c.chance(50) else ""
            return f"F.linear({x}, {w}{bias})", "F.linear", 1
        if fn == "one_hot":
            x = self.pick(env, pred=lambda v: v.dtype == torch.int64 and (v.numel() == 0 or v.min() >= 0))
            t = env[x]
            top = min(max(int(t.max()) + 1, 1), 20) if t.numel() and _is_int(t) else 1
            return f"F.one_hot({x}, {top + self.c.integer(0, 2)})", "F.one_hot", 1
        x = self.pick(env, pred=lambda v: v.dim() == 2 and _is_float(v) and v.shape[1] > 0)
        t = env[x]
        n, classes = (t.shape[0], t.shape[1]) if t.dim() == 2 else (2, 3)
        target = f"torch.randint(0, {max(classes, 1)}, ({n},))"
        return f"F.cross_entropy({x}, {target})", "F.cross_entropy", 1

    def ex_scalar(self, env):
        x = self.pick(env)
        t = env[x]
        r = t.dim()
        form = self.c.choice(["shape_i", "size_i", "len", "dim", "numel", "shape", "dtype", "item", "unpack"])
        if form == "unpack":  # a, b = x.shape (a wrong count now and then)
            return f"{x}.shape", "a, b = x.shape", max(r, 1) + (1 if self.bad(10) else 0)
        if form == "shape_i":
            return f"{x}.shape[{self.c.integer(-r, r - 1) if r else 0}]", "x.shape[i]", 1
        if form == "size_i":
            return f"{x}.size({self.c.integer(-r, r - 1) if r else 0})", "x.size(i)", 1
        if form == "len":
            return f"len({x})", "len(x)", 1
        if form in ("dim", "numel"):
            return f"{x}.{form}()", f"x.{form}()", 1
        if form == "item":
            return f"{x}.sum().item()", "x.item()", 1
        return f"{x}.{form}", f"x.{form}", 1


def _fits(module, t) -> bool:
    """Whether a module variable takes tensor ``t`` (so that calls are valid more often than not)."""
    if isinstance(module, nn.Sequential):
        module = module[0]
    if isinstance(module, nn.Linear):
        return t.dim() >= 1 and t.shape[-1] == module.in_features and _is_float(t)
    if isinstance(module, nn.Conv2d):
        return t.dim() in (3, 4) and t.shape[-3] == module.in_channels and _is_float(t)
    if isinstance(module, nn.Embedding):
        return _is_int(t) and (t.numel() == 0 or 0 <= t.min() and t.max() < module.num_embeddings)
    if isinstance(module, nn.LayerNorm):
        return t.dim() >= 1 and t.shape[-1] == module.normalized_shape[0] and _is_float(t)
    return True


def generate(chooser: Chooser, max_statements: int = 10) -> Program:
    return Generator(chooser, max_statements).generate()
