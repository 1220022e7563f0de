"""From a loop in the editor to a job the worker can run: setup, loop, rewrite, outputs.

``prepare(text, line)`` finds the fixable TW4xx finding of the loop on ``line`` (0-based), takes
the statements its fix replaces (the loop) and the same statements with the fix applied (the
rewrite), and builds ``setup``: code that gives every input of the loop a value.

Where inputs come from, in order of preference:

1. **The user's own setup statements**, when they are *plain* (see ``plain.py``: literals,
   torch / numpy / math creation and arithmetic, methods of values; no other calls, no I/O, no
   imports beyond torch / numpy / math). They are found by walking back from the loop through the
   statements that run before it in the same function (then the module's top-level statements,
   for globals), taking each statement that sets or changes a needed name, and then the names
   *it* needs. Real code (``torch.rand`` for images, ``torch.arange`` for indices, ``.reshape``
   for broadcasting) is what the loop was written for, so it is preferred to made-up values.
2. **Values synthesized from the inferred facts** for the rest: a name set by a statement that is
   not plain (``x = load()``, that statement is *not* run), a parameter, a global of another kind.
   ``torch.randn`` with the inferred dtype and shape, ``torch.randint(0, size)`` for integer
   tensors used as indices, constants for ints and floats.
3. **Sizes given by the user** (``sizes``: the ``--size N=1000`` option or the
   ``torchwise.benchmark.sizes`` setting) for symbolic dimensions and ints the analysis cannot
   know. Without them the result is a :class:`Problem` naming exactly what is unknown.

Nothing of the user's code runs but the plain statements and the loop and its rewrite; the
server only builds text here (no torch).
"""

from __future__ import annotations

import ast
import builtins
import copy
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence, Union

from torchwise.analysis.dtypes import DType
from torchwise.analysis.scopes import BindingKind, Scope
from torchwise.analysis.values import InstanceValue, ScalarValue, SeqValue, TensorValue
from torchwise.bench.plain import SAFE_BUILTINS, allowed_function, allowed_import, plain_statement
from torchwise.bench.region import (
    Region, RegionError, _free_block, changed_names, find_target, fingerprint, free_names, locate, outputs_of,
)
from torchwise.bench.synth import SCALE_VAR, Synth, Unknown
from torchwise.findings import Finding
from torchwise.source import split_lines

_MIN_SCALE = 16  # a trip count below this is never scaled (and a literal this small is never rewritten)


@dataclass
class Problem:
    """Why there is nothing to run; ``sizes``: names ``--size NAME=VALUE`` would settle."""

    message: str
    sizes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return False


@dataclass
class BenchJob:
    code: str  # TW401...
    title: str  # the fix's title
    line: int  # 0-based first line of the statements the fix replaces (the loop)
    end_line: int  # 0-based last line
    setup: str
    loop: str
    vectorized: str
    outputs: list
    scale: Optional[dict]  # {"var", "full", "label"}: the trip count, as a setup variable
    no_grad: bool
    inputs: str  # one sentence: where the inputs come from
    notes: list
    fingerprint: str  # of the loop's lines: a different one later means the result is stale
    setup_lines: list = field(default_factory=list)  # per setup line, the 1-based file line it came from (or None)
    ran_lines: list = field(default_factory=list)  # the 1-based lines of the user's setup code that run
    refused: list = field(default_factory=list)  # (1-based line, why) of the setup statements that do not run

    @property
    def runs(self) -> str:
        """One sentence: which of the user's lines run (and which do not, and why)."""
        loop = f"{self.line + 1}" if self.end_line == self.line else f"{self.line + 1}–{self.end_line + 1}"
        loop = f"the loop (line{'s' if self.end_line > self.line else ''} {loop}) and its rewrite"
        if self.ran_lines:
            plural = "s" if len(self.ran_lines) > 1 else ""
            sentence = f"Benchmark runs your line{plural} {_ranges(self.ran_lines)} as setup, then {loop}."
        else:
            sentence = f"Benchmark runs {loop}, on inputs it makes."
        if self.refused:
            sentence += " Not run: " + "; ".join(f"line {line} ({why})" for line, why in self.refused) + "."
        return sentence

    @property
    def ok(self) -> bool:
        return True

    def request(self, device: str = "auto", budget_s: float = 1.0, threads: Optional[int] = None) -> dict:
        """The worker request (``session.run(job.request(...))``); ``threads``: torch's CPU threads while
        timing (default 1, as torch.utils.benchmark does)."""
        return {"setup": self.setup, "loop": self.loop, "vectorized": self.vectorized, "outputs": list(self.outputs),
                "device": device, "budget_s": budget_s, "scale": self.scale, "no_grad": self.no_grad,
                "threads": threads}


def prepare(text: str, line: int, sizes: Optional[Mapping[str, int]] = None, *, analysis=None,
            findings: Optional[Sequence[Finding]] = None, path: str = "<string>") -> Union[BenchJob, Problem]:
    """The job for benchmarking the loop on ``line`` (0-based), or the Problem that prevents it.

    ``analysis``: the document's current ``engine.analyze`` result, if the caller has one (else it
    is computed). ``findings``: use these instead of the analysis' findings (tests; a caller that
    filtered them).
    """
    if analysis is None:
        from torchwise.engine import analyze

        analysis = analyze(text, path)
    if analysis.parse_error is not None:
        err = analysis.parse_error
        return Problem(f"The file does not parse (line {err.position.line + 1}: {err.message}).")
    tree = analysis.source.tree
    if analysis.facts is None:
        return Problem("torchwise did not analyse this file (is it marked `# torchwise: ignore-file`?).")
    finding = find_target(tree, analysis.findings if findings is None else findings, line)
    if finding is None:
        return Problem(f"No loop torchwise can rewrite on line {line + 1}: the benchmark compares a loop "
                       "with its TW401–TW407 rewrite, and there is none here.")
    try:
        edits = finding.fixes[0].edits
    except Exception as err:  # a bug in a fix builder must not take the command down
        return Problem(f"Building the {finding.code} rewrite failed: {type(err).__name__}: {err}")
    try:
        region = locate(analysis.source, edits)
    except RegionError as err:
        return Problem(f"Cannot benchmark this {finding.code} rewrite: {err}.")
    for label, code in (("loop", region.loop), ("rewrite", region.vectorized)):
        try:
            ast.parse(code)
        except SyntaxError as err:
            return Problem(f"The {label} code does not parse on its own ({err.msg}, line {err.lineno}).")
    outputs = outputs_of(region.loop, region.vectorized)
    if not outputs:
        return Problem("The rewrite sets no variable to compare with the loop's.")
    return _Builder(analysis, finding, region, dict(sizes or {}), outputs).build()


class _Builder:
    def __init__(self, analysis, finding: Finding, region: Region, sizes: dict, outputs: list):
        self.analysis = analysis
        self.facts = analysis.facts
        self.index = analysis.facts.index
        self.finding = finding
        self.region = region
        self.sizes = sizes
        self.outputs = outputs
        self.module_scope: Scope = self.index.module_scope
        self.function = region.function
        self.scope: Scope = self.index.scope_of_node.get(self.function, self.module_scope) \
            if self.function is not None else self.module_scope
        self.imports: dict[str, str] = {}  # name -> import statement
        self.problems: list[str] = []
        self.missing_sizes: list[str] = []
        self.tainted: dict[str, tuple] = {}  # name -> (statement that sets it, why it is not run, scope)
        self.to_synthesize: dict[str, Scope] = {}
        self.global_wanted: dict[str, None] = {}
        self.notes: list[str] = []

    # -- the steps
    def build(self) -> Union[BenchJob, Problem]:
        region = self.region
        if any(isinstance(owner, ast.ClassDef) for owner, _, _ in region.path[-1:]):
            return Problem("The loop is in a class body; torchwise benchmarks loops in functions and modules.")
        full = self._trip_count()
        synth = Synth(self.sizes, full)
        wanted: dict[str, None] = {}
        for name in dict.fromkeys(free_names(region.loop) + free_names(region.vectorized)):
            self._need(name, self.scope, wanted)
        for text in region.imports:
            self._fix_imports(text)
        local = self._slice(self._preceding_local(), wanted, self.scope)
        for name in wanted:
            self.to_synthesize.setdefault(name, self.scope)
        module: list = []
        if self.function is not None and self.global_wanted:
            wanted_globals = dict(self.global_wanted)
            module = self._slice(self.index.module_scope.node.body, wanted_globals, self.module_scope,
                                 skip=self._top_level_of_function())
            for name in wanted_globals:
                self.to_synthesize.setdefault(name, self.module_scope)
        synthesized = self._synthesize(synth)
        if self.problems or self.missing_sizes:
            return self._problem()
        setup, origins, literal_scaled = self._setup_text(synthesized, module + local, full)
        loop, loop_scaled = _scale_literals(region.loop, full)
        vectorized, vec_scaled = _scale_literals(region.vectorized, full)
        scaled = synth.scaled or literal_scaled or loop_scaled or vec_scaled
        scale = {"var": SCALE_VAR, "full": full, "label": self._trip_label()} if scaled and full else None
        self.notes.extend(synth.notes)
        refused = sorted({(stmt.lineno, why) for stmt, why, _ in self.tainted.values()})
        ran = sorted({n for stmt in module + local for n in range(stmt.lineno, stmt.end_lineno + 1)})
        return BenchJob(
            code=self.finding.code, title=self.finding.fixes[0].title, line=region.first_line,
            end_line=region.last_line, setup=setup, loop=loop, vectorized=vectorized, outputs=self.outputs,
            scale=scale, no_grad=region.statements[0] in getattr(self.facts, "grad_not_on", ()),
            inputs=self._inputs_sentence(module + local, synthesized), notes=self.notes,
            fingerprint=fingerprint(self.analysis.source.text, region.first_line, region.last_line),
            setup_lines=origins, ran_lines=ran, refused=refused)

    # -- names
    def _need(self, name: str, scope: Scope, wanted: dict) -> None:
        """Route a name the code reads: an import, a builtin, a value to find in ``wanted``, or a problem."""
        if name in wanted or name in self.imports or name in self.to_synthesize or name == SCALE_VAR:
            return
        owner = scope.owner_of(name)
        if owner is None:
            if name in builtins.__dict__:
                return
            self.problems.append(f"`{name}` is not defined in this file")
            return
        bindings = owner.bindings.get(name, [])
        if bindings and all(b.kind is BindingKind.IMPORT for b in bindings):
            qualname = scope.import_of(name)
            if qualname is None:
                self.problems.append(f"`{name}` is imported more than once, differently")
            elif not allowed_import(qualname):
                self.problems.append(f"the loop uses `{name}` from `{qualname}`; a benchmark imports only torch, "
                                     "numpy and math")
            else:
                self.imports[name] = _import_line(name, qualname)
            return
        for binding in bindings:
            if len(bindings) == 1 and isinstance(binding.node, ast.FunctionDef) \
                    and plain_statement(binding.node, owner) is None:
                break  # a plain function (assignments and a return of allowed ops): set up like a value
            if isinstance(binding.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = "class" if isinstance(binding.node, ast.ClassDef) else "function"
                self.problems.append(f"the loop uses `{name}`, a {kind} of this file (line {binding.node.lineno}); "
                                     "torchwise runs only the loop and plain setup, not the rest of the file")
                return
        if owner is scope:
            wanted.setdefault(name, None)
        elif owner is self.module_scope:
            self.global_wanted.setdefault(name, None)
        else:
            self.to_synthesize.setdefault(name, owner)

    def _fix_imports(self, text: str) -> None:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return
        for stmt in tree.body:
            for alias in stmt.names:
                qualname = alias.name if isinstance(stmt, ast.Import) else f"{stmt.module}.{alias.name}"
                name = alias.asname or alias.name.split(".")[0]
                if isinstance(stmt, ast.ImportFrom) or alias.asname:
                    bound_to = qualname
                else:
                    bound_to = alias.name.split(".")[0]
                if allowed_import(qualname):
                    self.imports.setdefault(name, _import_line(name, bound_to))
                else:
                    self.problems.append(f"the rewrite imports `{qualname}`")

    # -- walking back through the statements that run before the loop
    def _preceding_local(self) -> list:
        """Statements that run before the region in its own function (or module), outer blocks first."""
        path = self.region.path
        start = 0
        if self.function is not None:
            start = next(i for i, (owner, _, _) in enumerate(path) if owner is self.function)
        statements = []
        for depth in range(start, len(path)):
            _, block, index = path[depth]
            stop = self.region.lo if depth == len(path) - 1 else index
            statements.extend(block[:stop])
        return statements

    def _top_level_of_function(self):
        return self.region.path[0][1][self.region.path[0][2]] if self.region.path else None

    def _slice(self, statements: list, wanted: dict, scope: Scope, skip=None) -> list:
        """The plain statements (in order) that set up ``wanted``; ``wanted`` keeps what they do not."""
        chosen = []
        for stmt in reversed(statements):
            if not wanted:
                break
            if stmt is skip:
                continue
            binds, touches = _effects(stmt, scope)
            hit = [n for n in wanted if n in binds or n in touches]
            if not hit:
                continue
            why = plain_statement(stmt, scope)
            if why is None:
                chosen.append(stmt)
                for name in _rebinds(stmt):
                    wanted.pop(name, None)
                found: dict = {}
                _free_block([stmt], set(), found)
                for name in found:
                    self._need(name, scope, wanted)
            else:
                for name in hit:
                    wanted.pop(name, None)
                    self.tainted[name] = (stmt, why, scope)
                    self.to_synthesize.setdefault(name, scope)
        chosen.reverse()
        return chosen

    # -- values from facts
    def _synthesize(self, synth: Synth) -> list:
        lines = []
        bounds = self._index_bounds()
        for name, scope in self.to_synthesize.items():
            value = self._value_of(name, scope)
            try:
                if isinstance(value, InstanceValue):
                    text = self._instance(name, synth)
                else:
                    text = synth.value(value, name, bounds.get(name), self._dtype_hint(name, scope))
            except Unknown as unknown:
                self._unknown(name, unknown)
                continue
            lines.append((name, text))
        return lines

    def _dtype_hint(self, name: str, scope: Scope):
        """A parameter annotated ``Int[Tensor, ...]`` / ``Bool[...]`` / ``Float[...]`` is at least of that
        kind, though the facts leave the exact dtype open: int64, bool, float32."""
        if self.function is None or scope is not self.scope:
            return None
        args = self.function.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if arg.arg == name and isinstance(arg.annotation, ast.Subscript):
                kind = (self.scope.qualname(arg.annotation.value) or "").rsplit(".", 1)[-1]
                if kind.startswith(("Int", "UInt")):
                    return DType.int64 if kind in ("Int", "UInt") else None
                if kind == "Bool":
                    return DType.bool
                if kind in ("Float", "Real", "Num", "Shaped"):
                    return DType.float32
        return None

    def _instance(self, name: str, synth: Synth) -> str:
        """``self`` of a method: a namespace with the attributes the loop reads (from the class's facts)."""
        attrs = {}
        for node in self._region_nodes():
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
                attrs.setdefault(node.attr, self.facts.values.get(node))
        parts = [f"{attr}={synth.value(value, f'{name}.{attr}')}" for attr, value in attrs.items()]
        self.imports.setdefault("_tw_types", "import types as _tw_types")
        return f"_tw_types.SimpleNamespace({', '.join(parts)})"

    def _unknown(self, name: str, unknown: Unknown) -> None:
        taint = self.tainted.get(name)
        for size in unknown.sizes:
            if size not in self.missing_sizes:
                self.missing_sizes.append(size)
        if unknown.sizes and taint is None:
            return  # "unknown sizes: ..." says it
        reason = unknown.what
        if taint is not None:
            stmt, why, _ = taint
            reason += f" (line {stmt.lineno} sets it with code torchwise does not run: {why})"
        self.problems.append(reason)

    def _value_of(self, name: str, scope: Scope):
        values = self.facts.values
        taint = self.tainted.get(name)
        if taint is not None:
            stored = loaded = None
            for node in ast.walk(taint[0]):
                if isinstance(node, ast.Name) and node.id == name and node in values:
                    if isinstance(node.ctx, ast.Store):
                        stored = values[node]
                    elif loaded is None:
                        loaded = values[node]
            if stored is not None or loaded is not None:
                return stored if stored is not None else loaded
        for node in self._region_nodes():
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) and node in values:
                return values[node]
        if scope is self.module_scope and self.facts.module_env is not None:
            return self.facts.module_env.vars.get(name)
        return None

    def _region_nodes(self) -> list:
        nodes = []
        for stmt in self.region.statements:
            nodes.extend(ast.walk(stmt))
        nodes.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        return nodes

    def _index_bounds(self) -> dict:
        """Integer inputs used as indices: name -> the size of the dimension they index (the smallest)."""
        values = self.facts.values
        bounds: dict = {}

        def note(name, dim):
            if isinstance(dim, int) and (name not in bounds or (isinstance(bounds[name], int) and dim < bounds[name])):
                bounds[name] = dim
            elif name not in bounds:
                bounds[name] = dim

        for node in self._region_nodes():
            if isinstance(node, ast.Subscript):
                receiver = values.get(node.value)
                if not isinstance(receiver, TensorValue) or receiver.shape is None:
                    continue
                parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                for position, part in enumerate(parts):
                    if isinstance(part, (ast.Constant, ast.Starred)) and not isinstance(part, ast.Name) \
                            and (isinstance(part, ast.Starred) or part.value is None or part.value is Ellipsis):
                        break  # None / ... / *idx shift the dimensions: stop here
                    if position >= len(receiver.shape):
                        break
                    if isinstance(part, ast.Name):  # x[idx]
                        note(part.id, receiver.shape[position])
                    elif isinstance(part, ast.Subscript) and isinstance(part.value, ast.Name):  # x[idx[j]]
                        note(part.value.id, receiver.shape[position])
            elif isinstance(node, ast.Call):
                func = node.func
                qualname = self.scope.qualname(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
                args = list(node.args)
                if qualname == "torch.nn.functional.embedding" and len(args) >= 2 and isinstance(args[0], ast.Name):
                    weight = values.get(args[1])
                    if isinstance(weight, TensorValue) and weight.shape:
                        note(args[0].id, weight.shape[0])
                elif isinstance(func, ast.Attribute) and func.attr in ("index_select", "gather") and qualname is None \
                        and len(args) >= 2 and isinstance(args[1], ast.Name) and isinstance(args[0], ast.Constant):
                    receiver = values.get(func.value)
                    dim = args[0].value
                    if isinstance(receiver, TensorValue) and receiver.shape and isinstance(dim, int) \
                            and -len(receiver.shape) <= dim < len(receiver.shape):
                        note(args[1].id, receiver.shape[dim])
        return bounds

    # -- the trip count (what "N=1000 of 10000" scales)
    def _loop_iterable(self):
        for stmt in self.region.statements:
            for node in ast.walk(stmt):
                if isinstance(node, (ast.For, ast.AsyncFor)):
                    return node.iter
        for stmt in self.region.statements:
            for node in ast.walk(stmt):
                if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
                    return node.generators[0].iter
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 \
                        and node.func.id in ("sum", "max", "min", "any", "all", "list", "tuple") \
                        and self.scope.owner_of(node.func.id) is None:
                    return node.args[0]
        return None

    def _trip_count(self) -> Optional[int]:
        iterable = self._loop_iterable()
        dim = _count_of(iterable, self.facts.values, self.scope) if iterable is not None else None
        if dim is None:
            return None
        try:
            value = Synth(self.sizes).dim(dim, "the loop")
        except Unknown:
            return None
        return value if value >= _MIN_SCALE else None

    def _trip_label(self) -> str:
        iterable = self._loop_iterable()
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range" \
                and iterable.args and isinstance(iterable.args[-1 if len(iterable.args) < 3 else 1], ast.Name):
            return iterable.args[-1 if len(iterable.args) < 3 else 1].id
        return "N"

    # -- text
    def _setup_text(self, synthesized: list, statements: list, full: Optional[int]):
        lines, origins = [], []
        if any("_tw_np." in text for _, text in synthesized):
            self.imports.setdefault("_tw_np", "import numpy as _tw_np")
        for line in dict.fromkeys(self.imports.values()):
            lines.append(line)
            origins.append(None)
        for name, text in synthesized:
            lines.append(f"{name} = {text}")
            origins.append(None)
        scaled = False
        for stmt in statements:
            node = copy.deepcopy(stmt)
            if isinstance(node, ast.AnnAssign):
                node = ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)
            if isinstance(node, ast.FunctionDef):
                _drop_annotations(node)
            if full is not None:
                changer = _ScaleConstants(full)
                node = changer.visit(node)
                scaled = scaled or changer.changed
            ast.fix_missing_locations(node)
            text = ast.unparse(node)
            for i, part in enumerate(text.split("\n")):  # ast.unparse ends lines with \n only
                lines.append(part)
                origins.append(stmt.lineno + i if i < (stmt.end_lineno - stmt.lineno + 1) else None)
        return "\n".join(lines) + "\n", origins, scaled

    def _inputs_sentence(self, statements: list, synthesized: list) -> str:
        parts = []
        if statements:
            lines = sorted({s.lineno for s in statements})
            parts.append("your setup code (line" + ("s " if len(lines) > 1 else " ") + _ranges(lines) + ")")
        if synthesized:
            parts.append("synthesized from the inferred types: " + ", ".join(
                f"`{name}` = {_short(text)}" for name, text in synthesized))
        return "; ".join(parts) + "." if parts else "no inputs."

    def _problem(self) -> Problem:
        parts = list(dict.fromkeys(self.problems))
        message = "Cannot build inputs for this loop" + (": " + "; ".join(parts) if parts else "")
        if self.missing_sizes:
            sizes = ", ".join(self.missing_sizes)
            example = " ".join(f"--size {s}=1000" for s in self.missing_sizes)
            message += ("; " if parts else ": ") + f"unknown sizes: {sizes} (give them with `{example}`, " \
                                                    "or the torchwise.benchmark.sizes setting)"
        return Problem(message + ".", list(self.missing_sizes))


# -- helpers ------------------------------------------------------------------------------------------
def _drop_annotations(function: ast.FunctionDef) -> None:
    """Annotations run when the ``def`` does (before Python 3.14), and no benchmark needs them: gone, so that
    ``def f(x: <anything>)`` runs nothing of the annotation (``plain`` refuses all but plain type expressions)."""
    args = function.args
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if arg is not None:
            arg.annotation = None
    function.returns = None


def _import_line(name: str, qualname: str) -> str:
    if "." not in qualname:
        return f"import {qualname}" if name == qualname else f"import {qualname} as {name}"
    parent, last = qualname.rsplit(".", 1)
    return f"from {parent} import {last}" if name == last else f"from {parent} import {last} as {name}"


def _effects(stmt, scope) -> tuple[set, set]:
    """(names a statement binds, names whose value it may change in place)."""
    binds, touches = set(), set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            binds.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                binds.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            binds.update(node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            if not _may_change_arguments(func, scope):
                continue
            for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                if isinstance(arg, ast.Name):
                    touches.add(arg.id)
    touches |= changed_names(stmt)[1]
    return binds, touches


def _may_change_arguments(func, scope) -> bool:
    """Whether a call may change a list or tensor passed to it: a function whose name ends in "_"
    (``nn.init.normal_(w)``), a function of the file or of another module; not torch / numpy /
    math functions, safe builtins, ``print``, or methods (their receiver is what they change)."""
    if isinstance(func, ast.Name):
        if scope.owner_of(func.id) is None and (func.id in SAFE_BUILTINS or func.id == "print"):
            return False
        qualname = scope.qualname(func)
        return qualname is None or not allowed_function(qualname) or func.id.endswith("_")
    if isinstance(func, ast.Attribute):
        qualname = scope.qualname(func)
        if qualname is None:
            return False
        return not allowed_function(qualname) or func.attr.endswith("_")
    return True


def _rebinds(stmt) -> set:
    """Names a plain statement sets outright (its earlier value no longer matters)."""
    targets = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    elif isinstance(stmt, ast.FunctionDef):
        return {stmt.name}
    names = set()
    for target in targets:
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            names |= {e.id for e in target.elts if isinstance(e, ast.Name)}
    return names


def _count_of(iterable, values, scope):
    """How many times a ``for`` over ``iterable`` runs (int or symbolic), if the facts say."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
            and scope.owner_of(iterable.func.id) is None:
        name, args = iterable.func.id, iterable.args
        if name == "range" and 1 <= len(args) <= 2:
            if len(args) == 2 and not (isinstance(args[0], ast.Constant) and args[0].value == 0):
                return None
            return _int_value(args[-1], values)
        if name in ("enumerate", "zip", "reversed") and args:
            return _count_of(args[0], values, scope)
        return None
    value = values.get(iterable)
    if isinstance(value, TensorValue) and value.shape:
        return value.shape[0]
    if isinstance(value, SeqValue) and value.items is not None:
        return len(value.items)
    return None


def _int_value(node, values):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    value = values.get(node)
    if isinstance(value, ScalarValue) and value.kind == "int":
        return value.value
    return None


class _ScaleConstants(ast.NodeTransformer):
    """Integer literals equal to the trip count become the scale variable (``torch.randn(10000, 512)``)."""

    def __init__(self, full: int):
        self.full = full
        self.changed = False

    def visit_Constant(self, node):
        if type(node.value) is int and node.value == self.full and self.full >= _MIN_SCALE:
            self.changed = True
            return ast.copy_location(ast.Name(id=SCALE_VAR, ctx=ast.Load()), node)
        return node


def _scale_literals(code: str, full: Optional[int]) -> tuple[str, bool]:
    """Integer literals equal to the trip count become the scale variable in the loop and rewrite
    too (``sims = torch.zeros(256)``, ``range(256)``), so both run at the same smaller size.
    A literal that only happens to equal it is caught by the worker, which re-checks at full size
    before it reports different results for a scaled run."""
    if full is None or full < _MIN_SCALE:
        return code, False
    tree = ast.parse(code)
    spots = [(node.lineno - 1, node.col_offset, node.end_col_offset) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and type(node.value) is int and node.value == full
             and node.lineno == node.end_lineno]
    if not spots:
        return code, False
    lines = split_lines(code)  # as ast numbers them
    for line, start, end in sorted(spots, reverse=True):
        raw = lines[line].encode("utf-8")
        lines[line] = (raw[:start] + SCALE_VAR.encode() + raw[end:]).decode("utf-8")
    return "".join(lines), True


def _ranges(lines: list) -> str:
    out, start, prev = [], lines[0], lines[0]
    for line in lines[1:] + [None]:
        if line is not None and line == prev + 1:
            prev = line
            continue
        out.append(str(start) if start == prev else f"{start}–{prev}")
        if line is not None:
            start = prev = line
    return ", ".join(out)


def _short(text: str) -> str:
    text = text.replace(", device=DEVICE", "").replace("(device=DEVICE)", "()")
    return f"`{text}`" if len(text) <= 80 else f"`{text[:77]}...`"
