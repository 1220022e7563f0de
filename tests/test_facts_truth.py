"""The facts engine checked against real PyTorch (CPU) on generated programs: right when it speaks.

``program_gen`` writes random straight-line programs (plus ``if``/``else`` and small functions),
many of them invalid on purpose. Each one is

1. run for real (:func:`run_program`): top-level statement by top-level statement, in a fresh
   namespace, until the first one that raises; every assignment, at any depth, records a
   snapshot of what it bound, and the untaken branch of each ``if`` is run too, on a copy, so both
   branches are checked;
2. analysed (:func:`analyse`): ``Inference(ModuleIndex(tree)).run()`` on the same text;
3. compared (:func:`check_program`): each fact the engine states (dtype, int dims, strides,
   device, requires_grad, is_leaf, ndarray dtype/shape, int scalars, sequence lengths, module
   parameters, dtypes) must equal torch's; symbolic dims must at least be consistent with each
   other; where torch raised, the engine must not claim a value for that target once all inputs
   were fully known to it. At the end of the module, ``module_env.vars`` must agree with the
   namespace.

Silence is allowed: a fact the engine does not know is counted (coverage, per property) and an
op whose inputs were all fully known but whose result is unknown is counted per op kind ("engine
silent"). ``test_coverage_sweep`` prints the report; hypothesis shrinks any disagreement to a
minimal program, which is in the failure message.

Engine bugs found so far are in ``KNOWN_BUGS``: each has a minimal repro pinned by a strict xfail
test, and the generated tests skip disagreements matching it, so the suite stays green while the
bug is visible (fix the engine -> the xfail turns XPASS -> remove the entry).
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from program_gen import HEADER, DataChooser, Program, RandomChooser, generate  # noqa: E402

from torchwise.analysis.dims import Sym, fmt_shape  # noqa: E402
from torchwise.analysis.dtypes import DType  # noqa: E402
from torchwise.analysis.infer import Inference  # noqa: E402
from torchwise.analysis.scopes import ModuleIndex  # noqa: E402
from torchwise.analysis.values import (  # noqa: E402
    DeviceValue, DtypeValue, ModuleValue, NdarrayValue, PartialValue, ScalarValue, SeqValue, SymbolicValue, TensorValue,
)

FILENAME = "<program>"
# Errors that depend on the values in tensors, not on facts the engine could know.
DATA_DEPENDENT = re.compile(r"index out of range in self|Class values must be|Target -?\d+ is out of bounds"
                            r"|ZeroDivisionError|Integers to negative integer powers")


@pytest.fixture(autouse=True)
def restore_default_dtype():
    before = torch.get_default_dtype()
    yield
    torch.set_default_dtype(before)


# -- snapshots of real values ---------------------------------------------------------------------------
def snapshot(value) -> dict:
    """The facts of a real value, taken at once (a later in-place op must not change them)."""
    try:
        if isinstance(value, torch.Tensor):
            return {"type": "tensor", "dtype": str(value.dtype).removeprefix("torch."), "shape": tuple(value.shape),
                    "strides": tuple(value.stride()), "device": str(value.device),
                    "requires_grad": value.requires_grad, "is_leaf": value.is_leaf}
        if isinstance(value, np.ndarray):
            return {"type": "ndarray", "dtype": value.dtype.name, "shape": tuple(value.shape)}
        if isinstance(value, torch.dtype):
            return {"type": "dtype", "dtype": str(value).removeprefix("torch.")}
        if isinstance(value, torch.device):
            return {"type": "device", "device": str(value)}
        if isinstance(value, (tuple, list)):
            kind = "size" if isinstance(value, torch.Size) else "list" if isinstance(value, list) else "tuple"
            return {"type": "seq", "kind": kind, "items": [snapshot(v) for v in value]}
        if isinstance(value, (bool, int, float, complex, str)) or value is None:
            kind = next((k.__name__ for k in (bool, int, float, complex, str) if isinstance(value, k)), "none")
            return {"type": "scalar", "kind": kind, "value": value}
        if isinstance(value, torch.nn.Module):
            return {"type": "module", "kind": type(value).__name__,
                    "params": {n: snapshot(p) for n, p in value.named_parameters(recurse=False)}}
    except Exception as error:  # never let the recorder raise inside the program
        return {"type": "other", "what": f"snapshot failed: {error!r}"}
    return {"type": "other", "what": type(value).__name__}


# -- the runner --------------------------------------------------------------------------------------------
@dataclass
class Run:
    # (line, col) -> [(snapshot, the int arguments of the enclosing call), ...]
    values: dict = field(default_factory=lambda: defaultdict(list))
    # (line, col) -> [(message, None), or (message, line) when it raised inside a called function]
    errors: dict = field(default_factory=lambda: defaultdict(list))
    raised_line: Optional[int] = None  # the top-level statement that raised
    error: Optional[str] = None
    final: dict = field(default_factory=dict)  # generated name -> snapshot at the end


def target_names(stmt) -> list:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return [n for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def key(name: ast.Name) -> tuple:
    return name.lineno, name.col_offset


def _instrument(stmts: list) -> list:
    """After every assignment, at any depth: ``__rec__(line, col, name)`` for each target name;
    first in every function: ``__enter__(locals())``. (Rewrites ``if`` and ``def`` in place.)"""
    out = []
    for stmt in stmts:
        out.append(stmt)
        if isinstance(stmt, ast.If):
            stmt.body, stmt.orelse = _instrument(stmt.body), _instrument(stmt.orelse)
        elif isinstance(stmt, ast.FunctionDef):
            enter = ast.Expr(ast.Call(ast.Name("__enter__", ast.Load()),
                                      [ast.Call(ast.Name("locals", ast.Load()), [], [])], []))
            stmt.body = [_located(enter, stmt.body[0])] + _instrument(stmt.body)
        elif isinstance(stmt, (ast.Assign, ast.AugAssign)):
            for name in target_names(stmt):
                call = ast.Call(ast.Name("__rec__", ast.Load()), [ast.Constant(name.lineno),
                                ast.Constant(name.col_offset), ast.Name(name.id, ast.Load())], [])
                out.append(_located(ast.Expr(call), stmt))
    return out


def _located(node, like):
    return ast.fix_missing_locations(ast.copy_location(node, like))


def _error_line(error: BaseException) -> Optional[int]:
    line, tb = None, error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _exec(stmts: list, ns: dict) -> None:
    exec(compile(ast.Module(stmts, []), FILENAME, "exec"), ns)


def run_program(source: str) -> Run:
    """Execute the program for real, top-level statement by statement, until the first raise."""
    run = Run()
    original = ast.parse(source)
    body_lines = {line for top in original.body if isinstance(top, ast.FunctionDef)
                  for line in range(top.lineno, top.end_lineno + 1)}
    targets_at = defaultdict(list)  # line -> target keys of the assignment on that line
    assigned = set()  # module-level names
    for node in ast.walk(original):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets_at[node.lineno] += [key(n) for n in target_names(node)]
            if node.lineno not in body_lines:
                assigned.update(n.id for n in target_names(node))

    call_ints: dict = {}  # the int arguments of the function running now (for symbolic dims)

    def record(line, col, value):
        run.values[(line, col)].append((snapshot(value), dict(call_ints)))

    def enter(arguments):
        call_ints.clear()
        call_ints.update({n: v for n, v in arguments.items() if type(v) is int})

    def fail(error: BaseException, top: Optional[ast.stmt]):
        message = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        inner = _error_line(error)
        for k in targets_at.get(inner, ()):
            run.errors[k].append((message, None))
        if top is not None and top.lineno != inner:
            # Raised inside a function this statement called, on line ``inner``.
            for k in targets_at.get(top.lineno, ()):
                run.errors[k].append((message, inner))
        return message

    ns = {"__rec__": record, "__enter__": enter, "__name__": "__program__"}
    default = torch.get_default_dtype()
    torch.default_generator.manual_seed(0)  # (torch.manual_seed is 20x slower: it also seeds CUDA & co)
    np.random.seed(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for top in ast.parse(source).body:
                if isinstance(top, ast.If):
                    _run_untaken_branch(top, ns, fail)
                try:
                    _exec(_instrument([top]), ns)
                except Exception as error:
                    run.raised_line, run.error = top.lineno, fail(error, top)
                    break
    finally:
        torch.set_default_dtype(default)
    run.final = {n: snapshot(v) for n, v in ns.items() if n in assigned}
    return run


def _run_untaken_branch(stmt: ast.If, ns: dict, fail) -> None:
    """Run the branch the program will not take, on a copy of the namespace, with the RNG put back."""
    try:
        taken = bool(eval(compile(ast.Expression(stmt.test), FILENAME, "eval"), ns))
    except Exception:
        return  # the if statement itself raises: the main run reports it
    branch = stmt.orelse if taken else stmt.body
    rng, np_rng = torch.get_rng_state(), np.random.get_state()
    default = torch.get_default_dtype()
    side = dict(ns)
    try:
        for inner in _instrument(list(branch)):
            try:
                _exec([inner], side)
            except Exception as error:
                fail(error, None)
                break
    finally:
        torch.set_rng_state(rng)
        np.random.set_state(np_rng)
        torch.set_default_dtype(default)


# -- the engine ---------------------------------------------------------------------------------------
@dataclass
class Analysis:
    inf: Inference
    targets: dict  # (line, col) -> (Name node, its statement, the enclosing function or None)
    top_names: dict  # name -> [(line, Name node)] of module-level (incl. if-branch) bindings
    returns: dict  # line -> ast.Return
    variables: set  # every name the program assigns, and every parameter


def analyse(source: str) -> Analysis:
    tree = ast.parse(source)
    inf = Inference(ModuleIndex(tree, wanted=(ast.Call,))).run()
    targets, top_names = {}, defaultdict(list)

    def visit(stmts, function):
        for stmt in stmts:
            if isinstance(stmt, (ast.Assign, ast.AugAssign)):
                for name in target_names(stmt):
                    targets[key(name)] = (name, stmt, function)
                    if function is None:
                        top_names[name.id].append((name.lineno, name))
            elif isinstance(stmt, ast.If):
                visit(stmt.body, function)
                visit(stmt.orelse, function)
            elif isinstance(stmt, ast.FunctionDef):
                visit(stmt.body, stmt)
    visit(tree.body, None)
    returns, variables = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            returns[node.lineno] = node
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            variables.add(node.id)
        elif isinstance(node, ast.arg):
            variables.add(node.arg)
    return Analysis(inf, targets, top_names, returns, variables)


def fully_known(value, strides: bool = False) -> bool:
    """The engine knows everything about this value that decides whether an op raises (dtype,
    int shape, device, requires_grad; the strides too for ``strides=True``)."""
    if isinstance(value, TensorValue):
        return (value.dtype is not None and value.device is not None and value.requires_grad is not None
                and value.shape is not None and all(type(d) is int for d in value.shape)
                and (not strides or value.strides is not None and all(type(s) is int for s in value.strides)))
    if isinstance(value, NdarrayValue):
        return value.dtype is not None and value.shape is not None and all(type(d) is int for d in value.shape)
    if isinstance(value, ScalarValue):
        return value.kind is not None and (value.kind != "int" or type(value.value) is int)
    if isinstance(value, SeqValue):
        return value.items is not None and all(fully_known(i, strides) for i in value.items)
    if isinstance(value, ModuleValue):
        return all(fully_known(p, strides) for _, p in value.params)
    if isinstance(value, DtypeValue):
        return value.dtype is not None
    if isinstance(value, DeviceValue):
        return value.device is not None
    return False


def inputs_known(analysis: Analysis, stmt, strides: bool = False) -> bool:
    """Every variable the statement reads is fully known to the engine where it reads it."""
    loads = [n for n in ast.walk(stmt.value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and n.id in analysis.variables]
    values = [analysis.inf.values.get(n) for n in loads]
    if isinstance(stmt, ast.AugAssign):  # the target's value before: its latest earlier binding
        earlier = [node for line, node in analysis.top_names.get(stmt.target.id, ()) if line < stmt.lineno]
        values.append(analysis.inf.values.get(earlier[-1]) if earlier else None)
    return all(fully_known(v, strides) for v in values)


# -- comparing -------------------------------------------------------------------------------------------
@dataclass
class Problem:
    prop: str  # the property that disagrees, or RAISES
    op: str  # the op kind of the statement (program_gen's label), "end of module" for the final check
    name: str  # the variable
    message: str

    def __str__(self):
        return self.message


@dataclass
class Stats:
    programs: int = 0
    statements: int = 0
    raised: int = 0
    facts: Counter = field(default_factory=Counter)  # (property, "stated"|"unknown") -> n
    ops: dict = field(default_factory=lambda: defaultdict(Counter))  # kind -> {"full","partial","silent"}
    errors: Counter = field(default_factory=Counter)
    known_bugs: Counter = field(default_factory=Counter)
    silent_example: dict = field(default_factory=dict)  # op kind -> a statement the engine was silent on
    error_example: dict = field(default_factory=dict)  # why an error was not checked -> an example

    def report(self) -> str:
        out = [f"{self.programs} programs, {self.statements} assignments checked, {self.raised} programs end "
               f"in an error; {sum(n for (_, s), n in self.facts.items() if s == 'stated')} facts stated and "
               f"checked against torch"]
        out.append("coverage per property (stated / checked):")
        for prop in sorted({p for p, _ in self.facts}):
            stated, unknown = self.facts[(prop, "stated")], self.facts[(prop, "unknown")]
            share = 100 * stated / max(stated + unknown, 1)
            out.append(f"  {prop:22} {stated:6} / {stated + unknown:6}  {share:5.1f}%")
        out.append("errors: " + ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items())))
        out += [f"  not checked ({why}), e.g. {example}" for why, example in self.error_example.items()]
        out.append("op results with every input fully known (full = dtype+shape known; silent = no value):")
        for kind, c in sorted(self.ops.items(), key=lambda kv: -kv[1]["silent"] / max(sum(kv[1].values()), 1)):
            total = sum(c.values())
            example = f"  e.g. {self.silent_example[kind]}" if kind in self.silent_example else ""
            out.append(f"  {kind:24} n={total:5}  full {100 * c['full'] / total:5.1f}%  partial "
                       f"{100 * c['partial'] / total:5.1f}%  silent {100 * c['silent'] / total:5.1f}%{example}")
        if self.known_bugs:
            out.append("known engine bugs hit: " + ", ".join(f"{k} x{v}" for k, v in self.known_bugs.items()))
        return "\n".join(out)


class Comparer:
    def __init__(self, stats: Stats, where: str):
        self.stats, self.where = stats, where
        self.problems: list = []
        self.symbols: dict = {}  # Sym -> the int it was at runtime (module level)
        self.op, self.name = "?", "?"  # the statement's op kind and the variable being compared
        self.module_names: set = set()  # names bound once at module level: a size named by use (`n, m = x.shape`)

    def fact(self, prop: str, stated: bool, ok: bool = True, detail: str = ""):
        self.stats.facts[(prop, "stated" if stated else "unknown")] += 1
        if stated and not ok:
            self.problems.append(Problem(prop, self.op, self.name, f"{self.where}: {prop}: {detail}"))

    def compare(self, engine, real: dict, symbols: Optional[dict] = None):
        """``symbols``: what symbolic dims were at runtime - Sym -> int as seen so far, and
        parameter name -> int for a function's ``int`` parameters (module level: self.symbols)."""
        symbols = self.symbols if symbols is None else symbols
        kind = real["type"]
        if engine is None or kind == "other" and real["what"].startswith("snapshot failed"):
            return  # silent; or torch's own object cannot be read (a view invalidated in place)
        expected = {"tensor": TensorValue, "ndarray": NdarrayValue, "dtype": DtypeValue, "device": DeviceValue,
                    "seq": SeqValue, "scalar": ScalarValue, "module": ModuleValue}.get(kind)
        if kind == "other" and real["what"] == "partial" and isinstance(engine, PartialValue):
            return  # `partial(nn.Linear, bias=False)`: what its calls make is compared where they are
        if not isinstance(engine, expected or ()):
            self.fact("value type", True, False, f"engine says {engine!r}, torch made a {kind} {real}")
            return
        if kind == "tensor":
            self.tensor(engine, real, symbols)
        elif kind == "ndarray":
            self.fact("ndarray.dtype", engine.dtype is not None,
                      engine.dtype is not None and engine.dtype.short == real["dtype"],
                      f"engine {engine.dtype}, numpy {real['dtype']}")
            self.shape("ndarray.shape", engine.shape, real["shape"], symbols)
        elif kind == "dtype":
            self.fact("dtype value", engine.dtype is not None,
                      engine.dtype is not None and engine.dtype.short == real["dtype"],
                      f"engine {engine.dtype}, torch {real['dtype']}")
        elif kind == "device":
            self.fact("device value", engine.device is not None, engine.device == real["device"],
                      f"engine {engine.device}, torch {real['device']}")
        elif kind == "scalar":
            self.fact("scalar.kind", True, engine.kind == real["kind"], f"engine {engine!r}, torch {real['value']!r}")
            if engine.kind == "int" and real["kind"] == "int":
                value = _evaluate(engine.value, symbols)
                self.fact("scalar.int", type(value) is int, value == real["value"],
                          f"engine {engine.value} = {value}, torch {real['value']}")
        elif kind == "seq":
            kinds = {"size": ("size",), "tuple": ("tuple",), "list": ("list",)}
            self.fact("seq.kind", True, engine.kind in kinds[real["kind"]] or engine.kind == "tuple" and
                      real["kind"] == "size", f"engine {engine.kind}, torch {real['kind']}")
            if engine.items is not None:
                ok = len(engine.items) == len(real["items"])
                self.fact("seq.length", True, ok, f"engine {len(engine.items)} items, torch {len(real['items'])}")
                if ok:
                    for item, real_item in zip(engine.items, real["items"]):
                        self.compare(item, real_item, symbols)
            else:
                self.fact("seq.length", False)
        elif kind == "module":
            self.fact("module.kind", True, engine.kind == real["kind"], f"engine {engine.kind}, torch {real['kind']}")
            for name, param in engine.params:
                if name in real["params"]:
                    self.compare(param, real["params"][name], {})
                else:
                    self.fact("module.params", True, False, f"engine has a parameter {name!r}, torch does not")

    def tensor(self, engine: TensorValue, real: dict, symbols: dict):
        self.fact("tensor.dtype", engine.dtype is not None,
                  engine.dtype is not None and engine.dtype.short == real["dtype"],
                  f"engine {engine.dtype}, torch {real['dtype']}")
        self.shape("tensor.shape", engine.shape, real["shape"], symbols)
        strides = engine.strides
        if strides is not None and engine.shape is not None and len(strides) != len(engine.shape):
            self.fact("tensor.strides", True, False, f"{len(strides)} strides for shape {engine.shape}")
        elif strides is not None and len(strides) == len(real["strides"]) and all(type(s) is int for s in strides):
            # The engine's convention: the stride of a size-1 dim is not stated (torch never reads it).
            checked = [(s, r) for s, r, n in zip(strides, real["strides"], real["shape"]) if n != 1]
            self.fact("tensor.strides", True, all(s == r for s, r in checked),
                      f"engine {strides}, torch {real['strides']} (shape {real['shape']})")
        elif strides is not None and len(strides) != len(real["strides"]):
            self.fact("tensor.strides", True, False, f"engine {strides}, torch {real['strides']}")
        else:
            self.fact("tensor.strides", False)
        self.fact("tensor.device", engine.device is not None, engine.device == real["device"],
                  f"engine {engine.device}, torch {real['device']}")
        self.fact("tensor.requires_grad", engine.requires_grad is not None,
                  engine.requires_grad == real["requires_grad"],
                  f"engine {engine.requires_grad}, torch {real['requires_grad']} (dtype {real['dtype']})")
        self.fact("tensor.is_leaf", engine.is_leaf is not None, engine.is_leaf == real["is_leaf"],
                  f"engine {engine.is_leaf}, torch {real['is_leaf']} (dtype {real['dtype']})")

    def shape(self, prop: str, shape, real: tuple, symbols: dict):
        if shape is None:
            self.fact(prop, False)
            return
        if len(shape) != len(real):
            self.fact(prop, True, False, f"engine {fmt_shape(shape)}, torch {real}")
            return
        if all(type(d) is int for d in shape):
            self.fact(prop, True, tuple(shape) == real, f"engine {fmt_shape(shape)}, torch {real}")
            return
        self.fact(prop, False)
        self.fact(prop.replace("shape", "rank"), True)
        ok, module_level = True, symbols is self.symbols
        for dim, size in zip(shape, real):
            if module_level and isinstance(dim, Sym) and any("#" not in n and n not in self.module_names
                                                             for n in dim.symbols):
                # Generated module code has no symbolic sizes of its own: this one is a function's
                # parameter that escaped its function (it means nothing here).
                self.fact(prop.replace("shape", "symbolic dims"), True, False,
                          f"engine {fmt_shape(shape)}, torch {real}: a parameter's symbol outside its function")
                return
            value = _evaluate(dim, symbols)
            if type(value) is int:  # an int, or a polynomial in the int parameters of this call
                ok &= value == size
            elif isinstance(value, Sym):  # a size nobody knows: at least the same one everywhere
                ok &= symbols.setdefault(value, size) == size
        self.fact(prop.replace("shape", "symbolic dims"), True, ok,
                  f"engine {fmt_shape(shape)}, torch {real} (symbols: {symbols})")


def _evaluate(dim, symbols: dict):
    """A dim with the parameters of this call substituted (an int when no other symbol is left)."""
    if isinstance(dim, Sym):
        return dim.subs({k: v for k, v in symbols.items() if isinstance(k, str)})
    return dim


def check_program(program: Program, stats: Stats, known_bugs=None) -> list:
    """Run, analyse, compare. Returns the disagreements (known bugs filtered out and counted)."""
    return check_source(program.source(), program.kinds(), stats, KNOWN_BUGS if known_bugs is None else known_bugs)


def check_source(source: str, kinds: dict, stats: Stats, known_bugs) -> list:
    """``check_program`` for a text; ``kinds``: line -> op kind (for the report)."""
    run = run_program(source)
    stats.programs += 1
    try:
        analysis = analyse(source)
    except Exception as error:  # the engine itself must never raise
        return _known_or_new([Problem("engine crashes", "analysis", "", f"the analysis raises {error!r}")],
                             stats, known_bugs)
    stats.raised += run.raised_line is not None
    comparer = Comparer(stats, "")
    stores = Counter(n.id for stmt in ast.parse(source).body for n in ast.walk(stmt)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    comparer.module_names = {name for name, count in stores.items() if count == 1}
    for k in sorted(set(run.values) | set(run.errors)):
        if k not in analysis.targets:
            continue
        node, stmt, function = analysis.targets[k]
        engine = analysis.inf.values.get(node)
        known = inputs_known(analysis, stmt)
        op = kinds.get(k[0], "?")
        comparer.where = f"line {k[0]} `{ast.unparse(stmt)}` ({node.id})"
        comparer.op, comparer.name = op, node.id
        stats.statements += 1
        for real, arguments in run.values.get(k, ()):
            comparer.compare(engine, real, None if function is None else dict(arguments))
        if run.values.get(k) and known:
            real = run.values[k][0][0]
            if engine is None:
                stats.ops[op]["silent"] += 1
                stats.silent_example.setdefault(op, comparer.where)
            elif real["type"] != "tensor" or (isinstance(engine, TensorValue) and engine.dtype is not None
                                              and engine.shape is not None):
                stats.ops[op]["full"] += 1
            else:
                stats.ops[op]["partial"] += 1
        for message, inner in run.errors.get(k, ()):
            # Whether a view works depends on the strides; anything else on dtypes, shapes, devices.
            strict = known if "view size is not compatible" not in message else inputs_known(analysis, stmt, True)
            if inner is not None:
                # Raised inside the called function: the call's value is the function's summary,
                # which must be None only when the ``return`` itself raised from known inputs.
                ret = analysis.returns.get(inner)
                strict = ret is not None and inputs_known(analysis, ret)
            if DATA_DEPENDENT.search(message):
                stats.errors["data-dependent (not checked)"] += 1
            elif engine is None:
                stats.errors["raised, engine gives None"] += 1
            elif inner is not None and not strict:
                stats.errors["raised inside a called function, from partly known values"] += 1
                stats.error_example.setdefault("inside", f"{comparer.where}: <{message}>, engine {engine!r}")
            elif strict:
                comparer.problems.append(Problem(RAISES, op, node.id, f"{comparer.where}: torch raises "
                                                 f"<{message}> but the engine claims {engine!r}"))
            else:
                stats.errors["raised, engine claims a value from partly known inputs"] += 1
                stats.error_example.setdefault("partly known", f"{comparer.where}: <{message}>, engine {engine!r}")
    # The end of the module: names whose every binding ran.
    unexecuted = set()
    if run.raised_line is not None:
        unexecuted = {name for name, bindings in analysis.top_names.items()
                      if any(line >= run.raised_line for line, _ in bindings)}
    for name, real in run.final.items():
        if name in unexecuted:
            continue
        comparer.where = f"end of module: {name}"
        comparer.op, comparer.name = "end of module", name
        comparer.compare(stated(analysis.inf.module_env.vars.get(name)), real)
    wrong = {p.name for p in comparer.problems if p.op != "end of module"}
    return _known_or_new([p for p in comparer.problems if not (p.op == "end of module" and p.name in wrong)],
                         stats, known_bugs)


def _known_or_new(problems: list, stats: Stats, known_bugs) -> list:
    """The problems that are not known bugs. After a known bug, the rest of the program is not
    judged: a wrong fact propagates (and hypothesis finds a new bug in other programs too)."""
    if problems:
        bug = next((b for b in known_bugs if b.matches(problems[0].prop, problems[0].op, problems[0].message)), None)
        if bug is not None:
            stats.known_bugs[bug.name] += 1
            return []
    return problems


def explain(program: Program, problems: list) -> str:
    return "the engine disagrees with torch:\n  " + "\n  ".join(map(str, problems)) + "\nin the program:\n" + \
        program.source()[len(HEADER):]


# -- known engine bugs ---------------------------------------------------------------------------------------
@dataclass
class KnownBug:
    """An engine bug found by this suite: what it looks like in a problem, and minimal repros.

    Each repro is a program body (after the imports) whose last line assigns the variable to look
    at; ``test_known_engine_bug`` runs each one as a strict xfail."""

    name: str
    reason: str
    repros: tuple
    prop: str = ""  # a regex on the property ("claims a value where torch raises", "tensor.dtype", ...)
    op: str = ""  # a regex on the op kind of the statement
    message: str = ""  # a regex on the message

    def matches(self, prop: str, op: str, message: str) -> bool:
        return bool(re.search(self.prop, prop) and re.search(self.op, op) and re.search(self.message, message))


RAISES = "claims a value where torch raises"
# Engine bugs this suite found, each fixed: their minimal repros stay as regression tests.
FIXED_BUGS: list = [
    # -- the engine gives a value for a statement that raises ------------------------------------------
    KnownBug(
        "factory-dtype-without-kernel",
        "random/linspace factories with a dtype torch has no kernel for raise; the engine gives a tensor",
        ("y = torch.rand(2, dtype=torch.int64)\n",
         "y = torch.randn(2, dtype=torch.int32)\n",
         "x = torch.zeros(2, dtype=torch.int64)\ny = torch.rand_like(x)\n",
         "y = torch.linspace(0, 1, 3, dtype=torch.bool)\n"),
        prop=RAISES, op=r"^torch\.|call", message=r"not implemented for"),
    KnownBug(
        "requires-grad-on-integers",
        "requires_grad=True with an integer/bool dtype raises; the engine gives a tensor",
        ("y = torch.zeros(2, dtype=torch.int64, requires_grad=True)\n",
         "y = torch.tensor([1, 2], requires_grad=True)\n"),
        prop=RAISES, message=r"can require gradients"),
    KnownBug(
        "arange-step-sign",
        "arange whose step points away from the end raises; the engine gives shape (0,)",
        ("y = torch.arange(5, 0)\n", "y = torch.arange(0, 5, -1)\n"),
        prop=RAISES, message=r"inconsistent with step sign"),
    KnownBug(
        "inplace-not-checked",
        "`t op= x` keeps t's facts without checking that torch accepts it: the result dtype must cast "
        "to t's, the broadcast shape must be t's shape, no bool subtraction, not a leaf requiring grad",
        ("x = torch.zeros(3, dtype=torch.int64)\nx += 1.5\n",
         "x = torch.zeros(3, dtype=torch.int64)\nx /= 2\n",
         "x = torch.zeros(3)\nx += torch.zeros(2, 3)\n",
         "x = torch.ones(2, dtype=torch.bool)\nx -= x\n",
         "x = torch.zeros(3, requires_grad=True)\nx += 1\n"),
        prop=RAISES, op=r"augassign"),
    KnownBug(
        "matmul-on-bool",
        "matmul/dot/linear/einsum products of bool tensors raise (no bool kernel); the engine gives a bool "
        "tensor",
        ("x = torch.ones(3, dtype=torch.bool)\ny = x @ x\n",
         "x = torch.ones(2, 3, dtype=torch.bool)\ny = x @ torch.ones(3, 1, dtype=torch.bool)\n",
         "x = torch.ones(2, 4, dtype=torch.bool)\ny = F.linear(x, torch.ones(3, 4, dtype=torch.bool))\n",
         "x = torch.ones(2, 2, dtype=torch.bool)\ny = torch.einsum('ij,jk->ik', x, x)\n"),
        prop=RAISES, op=r"matmul|F.linear|einsum|call", message=r"not implemented for 'Bool'"),
    KnownBug(
        "bool-and-complex-ops",
        "ops torch rejects for bool or complex tensors get a value: bool - bool, -bool, bool ** bool, "
        "relu/argmax of bool, complex <, complex relu, complex argmin",
        ("x = torch.ones(2, dtype=torch.bool)\ny = x - x\n",
         "x = torch.ones(2, dtype=torch.bool)\ny = -x\n",
         "x = torch.ones(2, dtype=torch.bool)\ny = x ** x\n",
         "x = torch.ones(2, dtype=torch.bool)\ny = x.relu()\n",
         "x = torch.ones(2, dtype=torch.bool)\ny = x.argmax()\n",
         "x = torch.ones(2, dtype=torch.complex64)\ny = x < x\n",
         "x = torch.ones(2, dtype=torch.complex64)\ny = x.relu()\n",
         "x = torch.ones(2, dtype=torch.complex64)\ny = x.argmin()\n"),
        prop=RAISES, message=r"not implemented for '(Bool|Complex)|is not supported|does not support (complex|bool)"
                             r"|Boolean inputs not supported"),
    KnownBug(
        "matmul-mixed-dtypes",
        "einsum, nn.Linear and nn.Conv2d need equal dtypes (no promotion); with different dtypes the "
        "engine drops the dtype but still claims the shape",
        ("x = torch.ones(2, 2, dtype=torch.int64)\ny = torch.einsum('ij,jk->ik', x, torch.randn(2, 2))\n",
         "x = torch.randn(2, 4, dtype=torch.float64)\ny = nn.Linear(4, 3)(x)\n",
         "x = torch.randn(1, 3, 4, 4, dtype=torch.float64)\ny = nn.Conv2d(3, 2, 3, 1, 1)(x)\n"),
        prop=RAISES, message=r"same dtype|should be the same|expected scalar type|mixed dtype|same datatype"),
    KnownBug(
        "mean-of-integers",
        "mean of an integer/bool tensor raises; the engine gives a tensor with dtype None but a shape",
        ("x = torch.ones(2, 4, dtype=torch.int64)\ny = x.mean()\n",
         "x = torch.ones(2, 4, dtype=torch.bool)\ny = x.mean(0)\n"),
        prop=RAISES, message=r"could not infer output dtype"),
    KnownBug(
        "cross-entropy-not-checked",
        "F.cross_entropy checks neither the input's rank and dtype nor the target's shape and dtype; "
        "the engine always gives shape ()",
        ("x = torch.randn(2, 4)\ny = F.cross_entropy(x, torch.zeros(3, dtype=torch.int64))\n",
         "x = torch.randn(2, 4)\ny = F.cross_entropy(x, torch.zeros(2))\n",
         "x = torch.tensor(1.0)\ny = F.cross_entropy(x, torch.zeros(2, dtype=torch.int64))\n",
         "x = torch.ones(2, 4, dtype=torch.int64)\ny = F.cross_entropy(x, torch.zeros(2, dtype=torch.int64))\n"),
        prop=RAISES, op=r"F.cross_entropy|call"),
    KnownBug(
        "reductions-of-empty-tensors",
        "argmax/argmin/amax/amin/max/min of an empty tensor without dim, or over a zero-size dim, raise",
        ("x = torch.zeros(0)\ny = x.argmax()\n",
         "x = torch.zeros(0)\ny = x.amax()\n",
         "x = torch.zeros(2, 0)\ny = x.argmax(1)\n",
         "x = torch.zeros(2, 0)\ny = x.max(1)\n"),
        prop=RAISES, message=r"Expected reduction dim"),
    KnownBug(
        "len-of-0d",
        "len() of a 0-d tensor raises TypeError; the engine gives an int",
        ("x = torch.tensor(1.0)\nn = len(x)\n",),
        prop=RAISES, message=r"len\(\) of a 0-d tensor"),
    KnownBug(
        "conv-empty-spatial",
        "Conv2d of an input whose spatial size is 0 raises even when the padding makes room; the engine "
        "gives a shape",
        ("x = torch.zeros(1, 0, 0)\ny = nn.Conv2d(1, 1, 2, 1, 1)(x)\n",),
        prop=RAISES, message=r"Only zero batch or zero channel inputs"),
    KnownBug(
        "maxpool-empty-feature-dim",
        "MaxPool2d of a 4-D input whose dim 1 (not the batch) is 0 raises; the engine gives a shape",
        ("x = torch.zeros(2, 0, 2, 4)\ny = nn.MaxPool2d(2)(x)\n",),
        prop=RAISES, message=r"Expected 3D or 4D"),
    # -- the engine crashes ---------------------------------------------------------------------------
    KnownBug(
        "size-of-0d-crashes",
        "x.size(0) of a 0-d tensor: the analysis raises IndexError (torch raises IndexError too)",
        ("x = torch.tensor(1.0)\nn = x.size(0)\n",),
        prop=r"engine crashes", message=r"IndexError"),
    # -- wrong facts ------------------------------------------------------------------------------------------
    KnownBug(
        "symbolic-summary-leaks-parameters",
        "a function's symbolic sizes escape to its calls: with `n: int`, f(2) and f(3) both get shape "
        "(n,) instead of (2,) and (3,) (so f(2) + f(3), which raises, gets a value; cat([f(2), "
        "zeros(3)]) gets (n + 3,)); a size made up inside (x[x > 0]) is one symbol shared by all calls",
        ("def f(n: int):\n    return torch.zeros(n)\na = f(2)\n",
         "def f(n: int):\n    return torch.zeros(n)\na = f(2)\nb = f(3)\nc = a + b\n",
         "def f(x):\n    return x[x > 0]\na = f(torch.ones(3))\nb = f(torch.zeros(3))\n"),
        prop=r"symbolic dims", message=r"outside its function|^line \d+ `v\d+ = f\d+\("),
    KnownBug(
        "compare-of-unknowns-is-a-python-bool",
        "`a > b` with neither operand known is taken for a Python bool; a tensor comparison gives a tensor",
        ("x = torch.nonzero(torch.ones(3))\ny = x > 0\n",),
        prop=r"value type", message=r"ScalarValue\(kind='bool'"),
    KnownBug(
        "integer-results-require-grad",
        "results with an integer/bool dtype never require grad (comparisons, .int()/.bool()/.to(int), "
        "all/any, argmax); the engine copies requires_grad (and is_leaf) from the input",
        ("x = torch.ones(3, requires_grad=True)\ny = x < x\n",
         "x = torch.ones(3, requires_grad=True)\ny = x.int()\n",
         "x = torch.ones(3, requires_grad=True)\ny = x.to(torch.int8)\n",
         "x = torch.ones(3, requires_grad=True)\ny = x.all()\n",
         "x = torch.randn(3, requires_grad=True)\ny = x.argmax()\n"),
        prop=r"requires_grad|is_leaf", message=r"\(dtype (bool|u?int\d+)\)$"),
    KnownBug(
        "square-of-bool",
        "torch.square of a bool tensor gives int64 (it is pow(x, 2)); the engine keeps bool",
        ("x = torch.ones(3, dtype=torch.bool)\ny = torch.square(x)\n",),
        prop=r"tensor.dtype", op=r"square", message=r"engine DType.bool, torch int64"),
    KnownBug(
        "einsum-sum-of-integers",
        "an einsum that sums a single integer/bool operand gives int64 (it is a sum); the engine keeps "
        "the input's dtype",
        ("x = torch.ones(2, 3, dtype=torch.int32)\ny = torch.einsum('ij->', x)\n",
         "x = torch.ones(2, 3, dtype=torch.bool)\ny = torch.einsum('ij->i', x)\n"),
        prop=r"tensor.dtype", op=r"einsum|call"),
    KnownBug(
        "abs-of-complex",
        "abs of a complex tensor is real (complex64 -> float32); the engine keeps the complex dtype",
        ("x = torch.ones(2, dtype=torch.complex64)\ny = torch.abs(x)\n",
         "x = torch.ones(2, dtype=torch.complex64)\ny = x.abs()\n"),
        prop=r"tensor.dtype", message=r"engine DType.complex\d+, torch float"),
    KnownBug(
        "all-any-of-uint8",
        "all/any of a uint8 tensor give uint8 (kept for compatibility); the engine says bool",
        ("x = torch.ones(2, 3, dtype=torch.uint8)\ny = x.all()\n",
         "x = torch.ones(2, 3, dtype=torch.uint8)\ny = x.any(0)\n"),
        prop=r"tensor.dtype", message=r"engine DType.bool, torch uint8"),
    KnownBug(
        "no-op-views-return-self",
        "flatten() of a 0-d/1-d tensor, nn.Flatten() of a 2-d one and .mT of a 0-d one return the input "
        "itself (still a leaf); the engine makes a new non-leaf view",
        ("x = torch.ones(2, requires_grad=True)\ny = x.flatten()\n",
         "x = torch.ones(2, 3, requires_grad=True)\ny = nn.Flatten()(x)\n",
         "x = torch.ones((), requires_grad=True)\ny = x.mT\n"),
        prop=r"is_leaf", op=r"flatten|Flatten|mT|call", message=r"engine False, torch True"),
    KnownBug(
        "layout-preserving-ops",
        ".to(dtype) and the *_like factories keep a permuted input's dim order "
        "(memory_format=torch.preserve_format); the engine claims row-major strides",
        ("x = torch.randn(2, 3)\ny = x.t().to(torch.float64)\n",
         "x = torch.randn(2, 3)\ny = torch.zeros_like(x.t())\n"),
        prop=r"tensor.strides", op=r"^\.|_like|torch.where|einsum|call"),
    KnownBug(
        "empty-tensor-strides",
        "empty tensors: torch strides them in ways the engine does not follow - all zeros when made "
        "from an empty ndarray, and element-wise results of a permuted empty tensor keep its dim order",
        ("y = torch.from_numpy(np.zeros((0, 2)))\n",
         "y = torch.tensor(np.random.rand(0, 2, 3))\n",
         "y = torch.as_tensor(np.zeros((2, 1, 0)))\n",
         "x = torch.zeros(4, 0, 3).transpose(0, 2)\ny = x + 1\n"),
        prop=r"tensor.strides", message=r"\(shape \([^)]*\b0\b"),
    KnownBug(
        "layer-params-of-unknown-dtype",
        "a layer made where the default dtype is unknown (set_default_dtype elsewhere in the file) has "
        "parameters of unknown dtype; applied to a float32 input it may raise (mixed dtype), and the engine "
        "claimed the input's dtype",
        ("torch.set_default_dtype(torch.float64)\ndef f(p):\n    return nn.LayerNorm(3)(p)\n"
         "y = f(torch.randn(2, 3, dtype=torch.float32))\n",
         "torch.set_default_dtype(torch.float64)\ndef f(p):\n    return nn.Linear(3, 2)(p)\n"
         "y = f(torch.randn(2, 3, dtype=torch.float32))\n"),
        prop=RAISES, op=r"call"),
    KnownBug(
        "max-of-two-tensors",
        "`torch.max(a, b)` / `a.min(b)` with a tensor is the element-wise maximum (broadcast, promoted), not a "
        "reduction; the engine crashed on it (TypeError), and on a reduction over an unknown dim",
        ("a = torch.randn(3)\nb = torch.randn(2, 3, dtype=torch.float64)\ny = torch.max(a, b)\n",
         "a = torch.randn(2, 3)\ny = a.min(torch.zeros(3, dtype=torch.int64))\n",
         "k = torch.randint(0, 2, ()).item()\ny = torch.randn(2, 3).sum(k)\n"),
        prop=r".", op=r"."),
]


# -- the tests ---------------------------------------------------------------------------------------------
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_generated_programs_agree_with_torch(data):
    program = generate(DataChooser(data))
    problems = check_program(program, Stats())
    assert not problems, explain(program, problems)


SWEEP = 2500


def test_coverage_sweep():
    """A fixed, seeded batch: zero disagreements, the coverage report, and floors on coverage."""
    stats = Stats()
    failures = []
    for seed in range(SWEEP):
        program = generate(RandomChooser(seed))
        problems = check_program(program, stats)
        if problems:
            failures.append(f"seed {seed}: " + explain(program, problems))
    print("\n" + stats.report())
    assert not failures, f"{len(failures)} programs disagree; the first:\n" + failures[0]
    stated = {p: stats.facts[(p, "stated")] / max(stats.facts[(p, "stated")] + stats.facts[(p, "unknown")], 1)
              for p, _ in stats.facts}
    assert stats.statements > 5 * SWEEP // 2
    assert stats.errors["raised, engine gives None"] > SWEEP // 10  # errors are exercised
    for prop, floor in {"tensor.dtype": 0.9, "tensor.shape": 0.8, "tensor.strides": 0.5, "tensor.device": 0.9}.items():
        assert stated[prop] >= floor, (prop, stated[prop], stats.report())


# -- fixed regressions from the spec -------------------------------------------------------------------------
def stated(value):
    """What the engine claims about a value: a value known only by its name (a SymbolicValue) claims nothing."""
    return None if isinstance(value, SymbolicValue) else value


def engine_vars(body: str) -> dict:
    return {name: stated(value) for name, value in analyse(HEADER + body).inf.module_env.vars.items()}


def real_vars(body: str) -> dict:
    ns: dict = {}
    exec(HEADER + body, ns)
    return ns


@pytest.mark.parametrize(("expr", "shape", "strides"), [
    ("x.t().view(4, 3)", (4, 3), (1, 4)),
    ("x.transpose(0, 1).view(2, 2, 3)", (2, 2, 3), (2, 1, 4)),
    ("x.transpose(0, 1).reshape(12)", (12,), (1,)),
    ("x.t().contiguous().view(12)", (12,), (1,)),
])
def test_views_after_transpose(expr, shape, strides):
    body = f"x = torch.randn(3, 4)\ny = {expr}\n"
    real = real_vars(body)["y"]
    assert (tuple(real.shape), real.stride()) == (shape, strides)
    value = engine_vars(body)["y"]
    assert (value.shape, value.strides) == (shape, strides)


def test_a_view_that_raises_has_no_value():
    body = "x = torch.randn(3, 4)\ny = x.transpose(0, 1).view(12)\nz = y + 1\n"
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        real_vars(body)
    values = engine_vars(body)
    assert values["x"].shape == (3, 4)
    assert values["y"] is None and values["z"] is None


def test_symbolic_matmul_in_a_function():
    source = HEADER + (
        "def f(B: int, T: int, C: int):\n"
        "    x = torch.randn(B, T, C)\n"
        "    w = torch.randn(C, 4 * C)\n"
        "    y = x @ w\n"
        "    return y\n")
    analysis = analyse(source)
    [(node, _, _)] = [t for t in analysis.targets.values() if t[0].id == "y"]
    value = analysis.inf.values[node]
    assert fmt_shape(value.shape) == "(B, T, 4*C)"
    assert value.dtype.short == "float32"
    assert fmt_shape(analysis.inf.values[[t for t in analysis.targets.values() if t[0].id == "w"][0][0]].shape) \
        == "(C, 4*C)"


def test_the_runner_records_both_branches_and_the_failing_line():
    program = ("x = torch.randn(3, 4)\n"
               "if x.dim() > 1:\n"
               "    y = x.sum(0)\n"
               "else:\n"
               "    y = x.view(5)\n"
               "z = y @ x\n")
    run = run_program(HEADER + program)
    lines = {line for line, _ in run.values}
    first = HEADER.count("\n") + 1
    assert {first, first + 2} <= lines and first + 5 not in lines
    assert (first + 4, 4) in run.errors and (first + 5, 0) in run.errors
    assert run.raised_line == first + 5


def test_the_comparer_catches_wrong_facts():
    real = snapshot(torch.randn(3, 1, 4).transpose(0, 2))  # shape (4, 1, 3), strides (1, 4, 4)
    tensor = TensorValue(DType.float32, (4, 1, 3), "cpu", (1, 99, 4), False, True)  # size-1 stride: not stated
    assert _problems(tensor, real) == []
    for wrong in (dict(dtype=DType.float64), dict(shape=(4, 3, 1)), dict(shape=(4, 1)), dict(strides=(3, 1, 1)),
                  dict(device="cuda"), dict(requires_grad=True), dict(is_leaf=False),
                  dict(shape=(4, 1, Sym.var("n")))):  # a parameter's symbol outside its function
        assert _problems(tensor.with_(**wrong), real), wrong
    fresh = Sym.fresh("n")
    comparer = Comparer(Stats(), "")
    comparer.compare(tensor.with_(shape=(fresh, 1, 3)), real)
    comparer.compare(TensorValue(shape=(fresh,)), snapshot(torch.zeros(5)))  # the same size, 4 then 5
    assert [p.prop for p in comparer.problems] == ["tensor.symbolic dims"]
    assert _problems(ScalarValue("int", 3), snapshot(4)) and _problems(ScalarValue("bool"), real)
    assert _problems(SeqValue("size", (ScalarValue("int", 4),)), snapshot(torch.Size([4, 1])))


def _problems(value, real) -> list:
    comparer = Comparer(Stats(), "")
    comparer.compare(value, real)
    return comparer.problems


# Bugs found and not fixed yet: the generated tests skip programs that hit them (none at the moment).
KNOWN_BUGS: list = []

REPROS = [pytest.param(body, id=f"{bug.name}-{i}") for bug in FIXED_BUGS for i, body in enumerate(bug.repros)]


@pytest.mark.parametrize("body", REPROS)
def test_fixed_engine_bug_stays_fixed(body):
    """The minimal repro of a known bug, judged like a generated program (every variable, and no
    value for the statement that raises)."""
    problems = check_source(HEADER + body, {}, Stats(), known_bugs=())
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize("body", [
    "y = torch.randperm(5)\n", "y = torch.randperm(0)\n", "y = torch.randperm(4, dtype=torch.int32)\n",
    "n = 6\ny = torch.randperm(n)\nz = y.numel()\n", "y = torch.randperm(3, dtype=torch.float64)\n",
    "y = torch.randperm((3,))\n", "y = torch.randperm(2, 3)\n", "y = torch.randperm(-1)\n",
])
def test_randperm_facts(body):
    """``torch.randperm(n)``: an int64 (or ``dtype=``) tensor of shape (n,); never a shape from a tuple."""
    problems = check_source(HEADER + body, {}, Stats(), known_bugs=())
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize("body", [
    "a = torch.randn(5, 3)\nb = torch.randn(4, 3)\ny = torch.cdist(a, b)\n",
    "a = torch.randn(0, 3, dtype=torch.float64)\nb = torch.randn(4, 3, dtype=torch.float64)\ny = torch.cdist(a, b, p=1.0)\n",
    "a = torch.randn(5, 3, requires_grad=True)\ny = torch.cdist(a, torch.randn(2, 3))\n",
    "a = torch.randn(5, 3)\ny = torch.cdist(a.t(), torch.randn(2, 5), 1.0)\n",
    "a = torch.randn(5, 3)\ny = torch.cdist(a, torch.randn(2, 3, dtype=torch.float64))\n",
    "a = torch.randn(5, 3)\ny = torch.cdist(a, torch.randn(2, 4))\n",
    "a = torch.randn(5, 3).half()\ny = torch.cdist(a, a)\n",
    "a = torch.randn(5, 3).long()\ny = torch.cdist(a, a)\n",
    "def f(n):\n    a = torch.randn(n, 3)\n    return torch.cdist(a, a)\ny = f(4)\n",
])
def test_cdist_facts(body):
    """``torch.cdist(x1, x2)`` of two matrices: a new (P, R) tensor of their one float dtype; mixed dtypes, half,
    ints and different column counts raise, and get no value."""
    problems = check_source(HEADER + body, {}, Stats(), known_bugs=())
    assert not problems, "\n".join(map(str, problems))


def test_randperm_of_a_symbolic_size_does_not_crash():
    """``torch.randperm(len(x))`` in a function of unknown sizes: a symbolic int (it crashed on ``<``)."""
    from torchwise.engine import analyze

    analyze("import torch\ndef f(x):\n    n = x.shape[0]\n    return torch.randperm(n)[: n // 2]\n")
    analyze("import torch\ndef g(items):\n    return torch.randperm(len(items))\n")
    analyze("import torch\nclass S:\n    def f(self):\n        n = len(self.data)\n"
            "        return torch.randperm(n, generator=torch.Generator()).tolist()\n")
