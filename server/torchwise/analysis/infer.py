"""Flow-sensitive inference: what every expression of a module is.

One abstract interpretation pass over ``ast``: straight-line code in order,
``if``/``else`` joined (a fact survives when both branches agree), loops run to a
fixed point (only what the loop cannot change survives), functions analysed with
parameters from annotations or from call sites that all agree, classes with the
attributes ``__init__`` sets. Every evaluated expression's value is recorded for
hover and for the rules. Unknown is ``None`` and stays unknown: nothing is guessed.

Op semantics (factories, arithmetic, shape ops, layers) live in ``ops.py``.

Incremental: an edit usually touches one function. Each top-level class and function
is a *unit*, analysed on its own once the module-level pass is done; a unit records
what it read from outside itself (module-level values, other functions' summaries,
other classes' attributes, its call sites, the defaults) and what it produced. The
next analysis of the same document reuses a unit whose syntax tree was reused by the
incremental parse (the very same nodes) when every one of those reads gives the same
answer again, which is exactly when analysing it again would give the same facts.
"""

from __future__ import annotations

import ast
import heapq
from contextlib import contextmanager
from dataclasses import dataclass, field, replace as with_fields
from itertools import compress, repeat
from operator import is_, is_not
from typing import Callable, Iterable, Optional, Tuple

from torchwise.analysis import dims, modpass, ops, ops_einops, ops_nn, wrappers
from torchwise.analysis.dims import Sym
from torchwise.analysis.dtypes import DType
from torchwise.analysis.layers import LAYERS
from torchwise.analysis.scopes import BindingKind, ModuleIndex, Scope, ScopeKind
from torchwise.analysis.values import (
    EitherValue, InstanceValue, LambdaValue, MappingValue, ModuleValue, NdarrayValue, PartialValue, ScalarValue,
    SeqValue, SiteKeywordsValue, SymbolicValue, TensorValue, join, map_dims, module_or_none,
)

_LIST_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                            "__setitem__", "__delitem__"})
_PURE_BUILTINS = frozenset({"len", "range", "print", "int", "float", "bool", "str", "isinstance", "enumerate", "zip",
                            "sum", "max", "min", "abs", "round", "sorted", "list", "tuple", "repr", "type"})
_DEFAULT_SETTERS = frozenset({"set_default_dtype", "set_default_tensor_type", "set_default_device"})
_LOOP_PASSES = 3  # a loop body is re-run until its facts are stable, at most this often
_MAX_CALL_SITES = 64
_MAX_CALL_DEPTH = 12  # calls analysed inside calls
_MAX_SPECIALIZATIONS = 400  # calls analysed with their arguments' facts, per unit (and per pass over module code)
_MAX_TRIALS = 8  # parameters whose rank is tried (each rank: one run of the body), per def analysed as a unit
_TRIAL_RANKS = range(1, 7)  # a rank is decided when exactly one of these (and not the largest) can run
_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "ParameterList"})
# What every nn.Module instance has without __init__ setting it: reading one never fails.
_MODULE_ATTRIBUTES = frozenset({
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu",
    "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state",
    "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers",
    "named_children", "named_modules", "named_parameters", "parameters", "register_backward_hook",
    "register_buffer", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_module", "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook",
    "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
    "training", "type", "xpu", "zero_grad"})
# Decorators that leave a function what it is, for a call's purposes.
_PLAIN_DECORATORS = frozenset({"staticmethod", "torch.no_grad", "torch.inference_mode", "torch.enable_grad",
                               "torch.jit.ignore", "torch.jit.unused", "torch.compiler.disable", "torch.jit.export"})


class _RankRuledOut(Exception):
    """A rank trial's body certainly raised: the rest of it need not run."""


@dataclass
class FunctionInfo:
    node: ast.FunctionDef
    scope: Scope
    call_sites: list = field(default_factory=list)  # [(positional values, keyword values)]
    opaque: bool = False  # used other than by a direct call: its parameters are unknowable
    summary: object = None  # the value it returns, when every return agrees
    analysed: bool = False


@dataclass
class MethodInfo:
    """A method of a class of this file other than ``__init__``: a unit of its own."""

    node: ast.FunctionDef
    scope: Scope
    owner: "ClassInfo"
    call_sites: list = field(default_factory=list)  # [(positional values, keyword values)], in its own terms
    analysed: bool = False
    opaque: bool = False  # called with *args: its parameters are unknowable

    @property
    def key(self) -> str:
        return f"{self.owner.node.name}.{self.node.name}"


def _distinct_reads(reads: list) -> list:
    """``reads`` less repeats of a read with the very same answer object: a unit reads a class's attributes once
    per ``self.x`` (2.4x repeats on real code), and each read is checked again on every edit. Checking a repeat
    gives what checking the first gives (the answers are worked out at one moment, without side effects)."""
    if len(reads) < 2:
        return reads
    return list({(kind, key, id(answer)): (kind, key, answer) for kind, key, answer in reads}.values())


@dataclass
class _UnitRecord:
    """One unit's analysis: what it read from outside itself and what it produced."""

    inputs: tuple  # the defaults it started from, and its call sites (functions)
    reads: list  # [(kind, key, answer)]: see Inference._external
    values: dict
    grad_not_on: set
    calls: list  # [(callee name, starred, positional values, keyword values)] to this file's functions
    result: object  # a function's summary, a class's attributes


@dataclass
class ClassInfo:
    node: ast.ClassDef
    scope: Scope
    is_module: bool  # an nn.Module subclass
    is_plain: bool = False  # a plain Python class (no base but object, nothing that changes how attributes work)
    attrs: dict = field(default_factory=dict)  # self.<name> facts set once, in __init__
    methods: dict = field(default_factory=dict)  # name -> its def
    method_infos: dict = field(default_factory=dict)  # name -> MethodInfo, for every method but __init__
    dataclass_fields: Optional[tuple] = None  # a @dataclass: ((field, default expression or None), ...)
    constructions: list = field(default_factory=list)  # the arguments of each `Name(...)` seen, by parameter
    constructed_unseen: bool = False  # built where the analysis does not follow (a function, a demo, a subclass)
    wrapped_by: set = field(default_factory=set)  # {(wrapper class, its parameter)} its instances were passed to

    @property
    def init(self):
        return self.methods.get("__init__")

    @property
    def init_params(self) -> frozenset:
        """The names of ``__init__``'s parameters (its symbols are the instance's arguments)."""
        init = self.init
        if init is None:
            return frozenset()
        args = init.args
        return frozenset(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)[1:])


class Env:
    """Names to values in one scope, flow-sensitive."""

    __slots__ = ("scope", "vars", "self_class")

    def __init__(self, scope: Scope, vars: Optional[dict] = None, self_class: Optional[str] = None):
        self.scope = scope
        self.vars = vars if vars is not None else {}
        self.self_class = self_class

    def copy(self) -> "Env":
        return Env(self.scope, dict(self.vars), self.self_class)

    def joined(self, other: "Env", loop=None, made: Optional[set] = None, branch=None,
               minted: Optional[set] = None) -> "Env":
        """What holds on both paths. At a loop's head (``loop``: the loop statement), a tensor whose sizes change
        from pass to pass keeps its rank: each changing size is a symbol of the loop's own, for that pass (the
        names given one are added to ``made``). After an ``if`` (``branch``), a tensor of one rank on both paths
        keeps it, each differing size a symbol of that statement's own (its name added to ``minted``: inside a loop,
        one size per pass, forgotten at the loop head in what outlives the pass)."""
        mine_vars, their_vars = self.vars, other.vars
        # The very same value on both paths (most names, most of the time) is its own join: copied at C speed. A
        # module-level `if` or loop joins every name of the module, so this was most of a script's cost.
        merged = dict(mine_vars)
        for k in _differing_names(mine_vars, their_vars):
            a, b = mine_vars[k], their_vars.get(k)
            merged[k] = _widened(a, b, (id(loop), k), made) if loop is not None else \
                _branches_joined(a, b, (id(branch), k), minted=minted) if branch is not None else join(a, b)
        for k in their_vars.keys() - mine_vars.keys():
            merged[k] = None  # bound on one path only: unknown after
        merged.pop("<self>", None)
        mine, theirs = self.vars.get("<self>") or {}, other.vars.get("<self>") or {}
        if mine or theirs:  # self.<attr> facts: joined attribute by attribute
            merged["<self>"] = {k: join(mine.get(k), theirs.get(k)) for k in mine.keys() | theirs.keys()}
        return Env(self.scope, merged, self.self_class)


def _names_holding(vars: dict, kind: type) -> list:
    """The names of ``vars`` bound to a ``kind``, found at C speed: a module's scope holds thousands of names, and
    a list changed in place at module level made every one of them be looked at in Python (quadratic in a script)."""
    return list(compress(vars, map(isinstance, vars.values(), repeat(kind))))


def _differing_names(mine: dict, theirs: dict) -> list:
    """The names of ``mine`` not bound to the very same object in ``theirs`` (None where absent, as a join reads
    it), found at C speed: most names hold the same value on both paths."""
    return list(compress(mine, map(is_not, mine.values(), map(theirs.get, mine))))


class Inference:
    def __init__(self, index: ModuleIndex, previous: "Inference | None" = None):
        """``previous``: the last inference of the same document, whose units may be reused."""
        self.index = index
        self.values: dict[ast.AST, object] = {}
        self.functions: dict[str, FunctionInfo] = {}
        self.int_fields: frozenset = frozenset()  # attribute names that are ints where they are anything
        self._int_names: dict = {}  # function node -> its names used where only an int is accepted
        self.classes: dict[str, ClassInfo] = {}
        self.module_env: Optional[Env] = None
        self.default_float: Optional[DType] = DType.float32
        self.default_float_why = "the default dtype float32"
        self.default_device: Optional[str] = "cpu"
        self.grad_enabled: Optional[bool] = True  # autograd recording; False under torch.no_grad()
        self.grad_not_on: set = set()  # statements run with grad off (or maybe off)
        self._default_changed_anywhere = False
        self._device_changed = False  # torch.set_default_device anywhere: the default device is unknown
        self._default_changed_in_function = False
        self._returns: Optional[list] = None
        self._in_function = False
        self._units_pending = True  # the module's first pass: no function has been analysed yet
        self._in_main_guard = False  # running the body of `if __name__ == "__main__":`
        self._loop_depth = 0  # loops around the statement being run (a name bound in a loop changes per pass)
        self._specializing = 0  # > 0 while a call is analysed with its arguments' facts (nothing is recorded)
        self._specialized: dict = {}  # (callee node, self, arguments) -> the call's value
        self._built: dict = {}  # (class node, an instance's arguments) -> what its __init__ sets, run with them
        self._active: list = []  # the callee nodes being specialized (a recursive call gets nothing)
        self._specializations = 0  # how many were analysed: bounded per analysis
        # Rank trials (``_ranks_by_trial``): while one runs, [whether an op certainly raised on every path].
        self._trial: Optional[list] = None
        self._maybe_depth = 0  # > 0 where the code runs on some paths only (a branch, a loop body, a handler)
        self._trials_left = _MAX_TRIALS
        self._trial_calls = 0  # calls of the file's modules being run inside a rank trial (one level deep)
        self._forced = None  # a map(...) or generator that an unpacking runs to its end (every item)
        self._forced_count: Optional[int] = None  # ... into that many targets (None: a starred target)
        self._previous_statement: Optional[ast.stmt] = None  # the statement before the one run now, in its block
        self._item_axes = False  # a pattern names an item's axes: fresh symbols (each item has sizes of its own)
        self._by_trial: set = set()  # ids of the parameter values a trial decided (use still names their dims)
        self._per_pass: set = set()  # names of the symbols a branch inside a loop made: one size per pass
        self._bindings = _bindings_signature(index.module_scope)
        # Every name each def or top-level statement mentions, kept for the nodes the incremental parse reused.
        self._names_in: dict = dict(getattr(previous, "_names_in", {})) if previous is not None else {}
        # Module-level names bound otherwise now (a new name in a notebook cell, an import): a unit, or a statement's
        # int uses, is kept only when it mentions none of them and read nothing named so (it dropped every unit).
        self._changed = _changed_names(previous._bindings, self._bindings) if previous is not None else set()
        # Units of the previous analysis that may still hold.
        self._previous_units = {} if previous is None else previous._units if not self._changed else {
            node: record for node, record in previous._units.items()
            if not self._names_read(node, record, previous) & self._changed}
        self._units: dict = {}  # unit node -> _UnitRecord
        # What each def's code names, kept for the defs the incremental parse reused.
        self._uses: dict = dict(previous._uses) if previous is not None else {}
        self._wrapper_attrs: dict = dict(previous._wrapper_attrs) if previous is not None else {}
        # (Where names are used as ints depends on what the module's names are bound to: kept while that holds.)
        self._int_cache: dict = {stmt: uses for stmt, uses in previous._int_cache.items()
                                 if not self._changed or not self._names_of(stmt) & self._changed} \
            if previous is not None else {}
        self._reads: Optional[list] = None  # while a unit runs: what it reads from outside itself
        self._calls: Optional[list] = None
        self._unit_class: Optional[str] = None  # the class being analysed as a unit
        self.reused: set = set()  # top-level defs whose units were all reused: their facts are the same objects
        self._reused_units: set = set()
        self._callers: dict = {}  # unit -> the units that may call it (from the call graph)
        self._unit_tag: Optional[str] = None  # the unit being analysed, for the symbols of its call sites
        # Each pass over the module's code, statement by statement, for the next analysis (modpass.run).
        self._passes: dict = {}
        self._previous_passes: dict = previous._passes if previous is not None else {}
        self._pass_log: Optional[list] = None  # while a statement of module code is recorded: its call notes
        # Each top-level statement's set_default_* flags, for the next analysis (_scan_global_defaults).
        self._defaults_cache: dict = previous._defaults_cache if previous is not None and not self._changed else {}

    # -- driver ---------------------------------------------------------------------------
    def run(self) -> "Inference":
        tree = self.index.module_scope.node
        self._collect_definitions(tree)
        self._scan_global_defaults()
        self.module_env = Env(self.index.module_scope)
        # Each pass over the module's code makes the same fresh symbols as the last analysis's, when it runs alike:
        # the call sites and module-level values it hands the units are then equal to theirs, and the units reused.
        with dims.fresh_names("m1"):
            modpass.run(self, tree.body, self.module_env, "m1")
        module_end = self.module_env
        first_pass_specializations = self._specializations
        # (A unit gets nothing of the first pass but what it reads, compared on reuse: not its memoised calls.)
        self._specialized.clear()
        self._built.clear()
        self._in_function = True
        float_default = self.default_float if not self._default_changed_anywhere else None
        # Each unit sets the defaults it starts from; what holds after the module's code must not depend on
        # which unit ran last (nor on whether it was reused).
        module_defaults = (self.default_float, self.default_float_why, self.default_device, self.grad_enabled)
        for info in self.classes.values():  # what each __init__ sets: every method reads it
            self._unit(info, float_default, None)
        self._specialized.clear()  # calls run before the attributes were known: their values knew less
        self._built.clear()
        # Then every method and function, callers before callees: a callee's parameters take the facts of its
        # call sites, once all of them have been seen.
        self._callers_order = self._callers_first()
        for info in self._callers_order:
            self._unit(info, float_default, self._call_sites_for(info))
        for info in self.classes.values():
            if info.node in self._reused_units and all(m.node in self._reused_units
                                                      for m in info.method_infos.values()):
                self.reused.add(info.node)
        self.reused |= {f.node for f in self.functions.values() if f.node in self._reused_units}
        self._previous_units = {}  # what was not reused is garbage now
        self._uses = {unit.node: self._uses[unit.node] for unit in self._callers_order if unit.node in self._uses}
        kept = {unit for unit in self._units} | {stmt for stmt, _, _ in self.index.top_level}
        self._names_in = {node: names for node, names in self._names_in.items() if node in kept}
        self.default_float, self.default_float_why, self.default_device, self.grad_enabled = module_defaults
        self._in_function = False
        self._units_pending = False
        if self.functions or self.classes:
            # Module code that calls this file's functions gets their summaries on a second pass (and calls
            # analysed on the first, before any unit ran, are analysed again).
            self._specialized.clear()
            self._built.clear()
            self._reset_defaults()
            self.module_env = Env(self.index.module_scope)
            self._specializations = first_pass_specializations  # (the first pass's budget, whatever units used)
            with dims.fresh_names("m2"):
                modpass.run(self, tree.body, self.module_env, "m2")
        else:
            self.module_env = module_end
        self._previous_passes = {}
        return self

    def _scan_global_defaults(self) -> None:
        """``torch.set_default_dtype``/``set_default_device`` change what factories make.

        At module level they are followed in order; anywhere else (a function may run at any
        time) they make the default unknown everywhere.
        """
        # Each top-level statement's share is kept for the next analysis (a reused statement is the same node; what
        # a name means is the same while no module-level name is bound otherwise).
        cache = self._defaults_cache
        found = {}
        nodes = self.index.nodes
        for stmt, start, end in self.index.top_level:
            flags = cache.get(stmt)
            if flags is None:
                flags = self._default_setters_in(nodes[start:end])
            found[stmt] = flags
            anywhere, in_function, device = flags
            self._default_changed_anywhere |= anywhere
            self._default_changed_in_function |= in_function
            self._device_changed |= device
        self._defaults_cache = found
        self._reset_defaults()

    def _default_setters_in(self, nodes) -> tuple:
        """(set_default_dtype called, called in a function, set_default_device called) among ``nodes``."""
        anywhere = in_function = device = False
        for node, scope in nodes:
            if node.__class__ is not ast.Call:
                continue
            func = node.func
            if func.__class__ is ast.Attribute and func.attr not in _DEFAULT_SETTERS:
                continue  # the common case, decided without resolving the name
            qualname = scope.qualname(func)
            if qualname in ("torch.set_default_dtype", "torch.set_default_tensor_type"):
                anywhere = True
                if scope is not self.index.module_scope:
                    in_function = True
            elif qualname == "torch.set_default_device":
                device = True
        return anywhere, in_function, device

    def _reset_defaults(self) -> None:
        if self._default_changed_in_function:
            self.default_float, self.default_float_why = None, None
        else:
            self.default_float, self.default_float_why = DType.float32, "the default dtype float32"
        self.default_device = None if self._device_changed else "cpu"
        self.grad_enabled = True

    def set_default_dtype(self, dtype: Optional[DType], line: int) -> None:
        """A module-level ``torch.set_default_dtype(...)`` call, reached in order."""
        if self._default_changed_in_function or self._in_function:
            return
        self.default_float = dtype
        self.default_float_why = (f"the default dtype, set to {dtype.short} by set_default_dtype on line {line}"
                                  if dtype else None)

    def value(self, node: ast.AST):
        return self.values.get(node)

    def config_defaults(self) -> dict:
        """The int defaults of this file's config dataclasses (``n_embd: int = 768``), by field: a size read from a
        config (``config.n_embd``) is that number wherever the config keeps its default."""
        defaults = {}
        for info in self.classes.values():
            for name, default in info.dataclass_fields or ():
                if isinstance(default, ast.Constant) and type(default.value) is int and _annotated_int(info.node, name):
                    defaults.setdefault(name, (default.value, info.node.name))
        return defaults

    # -- definitions ----------------------------------------------------------------------
    def _collect_definitions(self, tree: ast.Module) -> None:
        module_scope = self.index.module_scope
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if len(module_scope.bindings.get(stmt.name, ())) == 1:
                    self.functions[stmt.name] = FunctionInfo(stmt, self.index.scope_of_node[stmt])
            elif isinstance(stmt, ast.ClassDef) and len(module_scope.bindings.get(stmt.name, ())) == 1:
                info = ClassInfo(stmt, self.index.scope_of_node[stmt], False)
                info.methods = {m.name: m for m in stmt.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
                info.method_infos = {name: MethodInfo(m, self.index.scope_of_node[m], info)
                                     for name, m in info.methods.items() if name != "__init__"}
                info.dataclass_fields = _dataclass_fields(stmt, module_scope)
                self.classes[stmt.name] = info
        # Fields a config class of this file declares as ints (`n_embd: int = 768`): `config.n_embd` is one.
        self.int_fields = frozenset(name for info in self.classes.values() for name, _ in info.dataclass_fields or ()
                                    if _annotated_int(info.node, name))
        self._int_names, attributes, built_as_arguments = _int_uses(self.index, self._int_cache)
        self.int_fields |= attributes
        self._int_cache = {stmt: self._int_cache[stmt] for stmt, _, _ in self.index.top_level}
        # An nn.Module subclass, directly or through this file's own base classes (`class Block(MyModule)`).
        for info in self.classes.values():
            info.is_module = self._subclasses_module(info.node, module_scope, set())
            info.is_plain = not info.is_module and info.dataclass_fields is None and _is_plain_class(info.node,
                                                                                                      module_scope)
        # A module of this file built as another call's argument is called by code the call graph cannot follow
        # (`self.fn(x)`): the calls it sees are not all its calls, so its methods take no facts from them.
        # (Unless the call builds a wrapper of this file that only calls it: its calls are the wrapper's.)
        # (What a class's code does with an argument, kept for the class nodes the incremental parse reused.)
        self._wrapper_attrs = {key: attr for key, attr in self._wrapper_attrs.items()
                               if self.classes.get(key[0].name) is not None
                               and self.classes[key[0].name].node is key[0]}
        self._subclassed = frozenset(base.id for info in self.classes.values() for base in info.node.bases
                                     if isinstance(base, ast.Name) and base.id in self.classes)
        for name, wrapper, slot in built_as_arguments:
            if name in self.classes and self._wrapper_param(wrapper, slot) is None:
                for method in self.classes[name].method_infos.values():
                    method.opaque = True
        for name, info in self.classes.items():
            info.constructed_unseen = bool(self.index.name_loads.get(name)) or any(
                not self._built_where_seen(scope) for _, scope in self.index.calls_by_name.get(name, ()))
        # A function used as a value (callback, decorator argument, stored) may be called with anything.
        for name, info in self.functions.items():
            if self.index.name_loads.get(name):
                info.opaque = True
        # self.<attr> stores per method: an attribute is a fact only when __init__ sets it once.
        self._self_stores: dict = {}  # function node -> (its scope, {attr: count})
        for scope, base, attr in self.index.attribute_stores:
            if base == "self":
                counts = self._self_stores.setdefault(scope.node, (scope, {}))[1]
                counts[attr] = counts.get(attr, 0) + 1
        # ...and grouped by the top-level statement holding them (one walk up each, not one per class).
        self._stores_within: dict = {}  # top-level node -> [(function node, {attr: count})]
        for node, (scope, counts) in self._self_stores.items():
            self._stores_within.setdefault(_top_level(scope), []).append((node, counts))
        self._setattr_within = {_top_level(scope) for _, scope in self.index.calls_by_name.get("setattr", ())}
        # Attributes stored on something other than `self` (`m.scale = 2.5`, `self.attn.scale = s`): an instance's
        # attribute of that name may change after __init__, from outside the class.
        self._outside_stores = frozenset(attr for scope, base, attr in self.index.attribute_stores
                                         if base != "self" and not self._not_an_instance(scope, base))

    def _not_an_instance(self, scope: Scope, base: str) -> bool:
        """A name that is never an instance of a class of this file: bound only to what a call of a name imported
        makes (``C = CN()``; a class of another module does not build this file's)."""
        owner = scope.owner_of(base) if base else None
        bindings = owner.bindings.get(base, ()) if owner is not None else ()
        if not bindings:
            return False
        for binding in bindings:
            value = binding.value if binding.kind is BindingKind.ASSIGN else None
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                return False
            callee = owner.owner_of(value.func.id)
            if callee is None or callee.parent is not None or value.func.id in self.classes \
                    or value.func.id in self.functions or any(
                    b.kind is not BindingKind.IMPORT for b in callee.bindings.get(value.func.id, ())):
                return False
        return True

    def _subclasses_module(self, node: ast.ClassDef, module_scope: Scope, seen: set) -> bool:
        for base in node.bases:
            if module_scope.qualname(base) in ops.MODULE_BASES:
                return True
            if isinstance(base, ast.Name) and base.id in self.classes and base.id not in seen:
                seen.add(base.id)
                if self._subclasses_module(self.classes[base.id].node, module_scope, seen):
                    return True
        return False

    # -- units --------------------------------------------------------------------------
    def _unit(self, info, float_default, sites) -> None:
        """Analyse a top-level class or function, or reuse its previous analysis when that still holds."""
        inputs = (float_default, self._device_changed, sites,
                  self._self_of(info.owner) if isinstance(info, MethodInfo) else None)
        record = self._previous_units.get(info.node)
        if record is not None and _same(record.inputs, inputs) and all(
                _same(self._external(kind, key), answer) for kind, key, answer in record.reads):
            self._reused_units.add(info.node)
            for name, starred, args, kwargs in record.calls:  # (analysing it made these calls itself)
                self._replay_call(name, starred, args, kwargs)
        else:
            record = self._record_unit(info, float_default, sites, inputs)
        self._units[info.node] = record
        self.values.update(record.values)
        self.grad_not_on |= record.grad_not_on
        if isinstance(info, ClassInfo):
            info.attrs = record.result
        elif isinstance(info, MethodInfo):
            info.analysed = True
        else:
            info.summary, info.analysed = record.result, True

    def _replay_call(self, name: str, starred: bool, args: list, kwargs: dict) -> None:
        if name.startswith("new:"):
            self._note_construction(name[4:], args)
        elif name.startswith("escape:"):
            self._note_escape(name[7:])
        elif "." in name:
            owner, _, method = name.partition(".")
            self._note_method_call(self.classes[owner].method_infos[method], starred, args, kwargs)
        else:
            self._note_call(self.functions[name], starred, args, kwargs)

    def _callers_first(self) -> list:
        """Every method and function, each after the units that call it (file order otherwise; a cycle is cut
        where it starts in the file). Kahn's order over the call graph: linear in its edges."""
        units = [m for c in self.classes.values() for m in c.method_infos.values()] + list(self.functions.values())
        self._wrapped_in: dict = {}  # wrapper class -> the classes of the modules its constructions were passed
        for name, info in self.classes.items():
            for wrapper, _ in info.wrapped_by:
                self._wrapped_in.setdefault(wrapper, set()).add(name)
        position = {id(u): i for i, u in enumerate(units)}
        callees = {id(u): {id(x) for x in self._callees_of(u)} - {id(u)} for u in units}
        callers: dict = {id(u): [] for u in units}
        for u in units:
            for callee in callees[id(u)]:
                callers[callee].append(u)
        self._callers = callers
        waiting = {key: len(found) for key, found in callers.items()}
        ready = [position[key] for key, count in waiting.items() if count == 0]
        heapq.heapify(ready)
        done, order, cut = set(), [], 0
        while len(order) < len(units):
            if not ready:  # a cycle: take the first remaining unit in the file
                while id(units[cut]) in done:
                    cut += 1
                heapq.heappush(ready, cut)
            chosen = units[heapq.heappop(ready)]
            if id(chosen) in done:
                continue
            done.add(id(chosen))
            order.append(chosen)
            for callee in callees[id(chosen)]:
                waiting[callee] -= 1
                if waiting[callee] == 0 and callee not in done:
                    heapq.heappush(ready, position[callee])
        return order

    def _callees_of(self, unit) -> list:
        """The units a method or function may call: this file's functions and classes it names, its own class's
        methods through ``self``, and the forward (and other methods) of every module its instance holds."""
        called, named, through_self = self._names_used(unit.node)
        found = [self.functions[name] for name in called if name in self.functions]
        classes = {name for name in named if name in self.classes}
        if isinstance(unit, MethodInfo):
            found += [unit.owner.method_infos[name] for name in through_self if name in unit.owner.method_infos]
            classes |= _classes_in(unit.owner.attrs.values())
            classes |= self._wrapped_in.get(unit.owner.node.name, set())  # what a wrapper's constructions passed it
        for name in classes:
            found.extend(self.classes[name].method_infos.values())
        return found

    def _names_used(self, node) -> tuple:
        """(names called, names mentioned, ``self.<attr>`` read) in a def's own code; kept per def between
        analyses (an unchanged def is the very same node)."""
        found = self._uses.get(node)
        if found is None:
            called, named, through_self = set(), set(), set()
            for sub in _own_nodes(node):
                kind = sub.__class__
                if kind is ast.Call and sub.func.__class__ is ast.Name:
                    called.add(sub.func.id)
                elif kind is ast.Name:
                    named.add(sub.id)
                elif kind is ast.Attribute and sub.value.__class__ is ast.Name and sub.value.id == "self":
                    through_self.add(sub.attr)
            found = self._uses[node] = (frozenset(called), frozenset(named), frozenset(through_self))
        return found

    def _record_unit(self, info, float_default, sites, inputs) -> _UnitRecord:
        values, grad_not_on = self.values, self.grad_not_on
        self.values, self.grad_not_on, self._reads, self._calls = {}, set(), [], []
        # While a class's __init__ runs, its attributes are being made: read directly, not as a dependency.
        self._unit_class = info.node.name if isinstance(info, ClassInfo) else None
        self._unit_tag = info.key if isinstance(info, MethodInfo) else info.node.name
        # Budgets of its own: what a unit tries and specialises never depends on which other units were reused.
        self._trials_left, self._specializations = _MAX_TRIALS, 0
        try:
            if isinstance(info, ClassInfo):
                self._analyse_class(info, float_default)
                result = info.attrs
            elif isinstance(info, MethodInfo):
                env = self._function_env(info.node, info.scope, info.owner.node.name, float_default, sites,
                                         self_value=inputs[3])
                self._exec_function_body(info.node, env)
                result = None
            else:
                self._analyse_function(info, float_default, sites)
                result = info.summary
            return _UnitRecord(inputs, _distinct_reads(self._reads), self.values, self.grad_not_on, self._calls, result)
        finally:
            self.values, self.grad_not_on = values, grad_not_on
            self._reads = self._calls = self._unit_class = self._unit_tag = None

    def _names_of(self, node) -> frozenset:
        """Every name ``node``'s code mentions (its whole subtree), remembered per node."""
        found = self._names_in.get(node)
        if found is None:
            found = self._names_in[node] = frozenset(
                n.id if n.__class__ is ast.Name else n.name for n in ast.walk(node)
                if n.__class__ in (ast.Name, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        return found

    def _names_read(self, node, record, previous: "Inference") -> set:
        """The module-level names a previous unit depends on: those its code mentions, those of the defs whose code
        it ran (calls analysed with their arguments' facts), and every name it read by."""
        names = set(self._names_of(node))
        for kind, key, answer in record.reads:
            names.add(key.partition(".")[0])
            if kind == "code" and answer is not None:
                names |= self._names_of(answer)
            elif kind == "signature" and key in previous.classes:
                names |= self._names_of(previous.classes[key].node)
        return names

    def _external(self, kind: str, key: str):
        """What a unit learns from outside itself; recorded while a unit runs."""
        if kind == "env":  # a module-level name bound once
            return self.module_env.vars.get(key)
        if kind == "function":
            info = self.functions.get(key)
            return None if info is None else (info.analysed, info.summary if info.analysed else None)
        if kind == "class":  # an nn.Module subclass (True), a @dataclass, a plain class, or neither (False)
            info = self.classes.get(key)
            return None if info is None else (True if info.is_module else
                                              "dataclass" if info.dataclass_fields is not None else
                                              "plain" if info.is_plain else False)
        if kind == "code":  # the def of a function ("f") or a method ("Class.method"): the very same node or not
            owner, _, method = key.partition(".")
            if method:
                info = self.classes.get(owner)
                return info.methods.get(method) if info is not None else None
            info = self.functions.get(key)
            return info.node if info is not None else None
        if kind == "signature":  # how a class binds its arguments: its __init__ and dataclass fields (the nodes)
            info = self.classes.get(key)
            if info is None:
                return None
            fields = tuple((name, _dumped(default) if default is not None else None)
                           for name, default in info.dataclass_fields) if info.dataclass_fields is not None else None
            return _dumped(info.init.args) if info.init is not None else None, fields
        if kind == "stored outside":  # an attribute of that name stored on something other than `self`
            return key in self._outside_stores
        if kind == "int field":  # an attribute name used as an int somewhere in the file (`config.batch_size`)
            return key in self.int_fields
        if kind == "wrapped":  # what a wrapper's constructions passed as a parameter ("PreNorm.fn")
            wrapper, _, param = key.partition(".")
            return self._wrapped_values(wrapper, param)
        if kind == "attributes":  # what `__init__` sets on its instances
            info = self.classes.get(key)
            return None if info is None else info.attrs
        raise ValueError(kind)

    def _read(self, kind: str, key: str):
        answer = self._external(kind, key)
        if self._reads is not None:
            self._reads.append((kind, key, answer))
        return answer

    @staticmethod
    def _built_where_seen(scope: Scope) -> bool:
        """A construction in module code or in a class's ``__init__`` (both run before any method's unit)."""
        while scope.parent is not None and isinstance(scope.node, _COMPREHENSION_NODES):
            scope = scope.parent
        if scope.parent is None:
            return True
        return isinstance(scope.node, ast.FunctionDef) and scope.node.name == "__init__" \
            and scope.parent.parent is not None and scope.parent.parent.parent is None \
            and isinstance(scope.parent.node, ast.ClassDef)

    def _self_of(self, info: ClassInfo):
        """What ``self`` is in the class's own methods: the instance, when every construction is seen, all agree,
        and their arguments are concrete (no size known only by name: those stay the class's own symbols)."""
        if info.constructed_unseen or not info.constructions or not (info.is_module or info.is_plain):
            return None
        first = info.constructions[0]
        if any(not _same(first, other) for other in info.constructions[1:]) or _mentions_symbols(first):
            return None
        return InstanceValue(info.node.name, first)

    def _note_call(self, info: FunctionInfo, starred: bool, args: list, kwargs: dict) -> None:
        """A direct call of one of this file's functions: its arguments may become its parameters' facts."""
        self._note_site(info, starred, args, kwargs)
        if self._calls is not None:
            self._calls.append((info.node.name, starred, args, kwargs))

    def _note_method_call(self, info: MethodInfo, starred: bool, args: list, kwargs: dict) -> None:
        self._note_site(info, starred, args, kwargs)
        if self._calls is not None:
            self._calls.append((info.key, starred, args, kwargs))

    def _note_site(self, info, starred: bool, args: list, kwargs: dict) -> None:
        """A call under ``if __name__ == "__main__":`` is a demo: the module's importers pass other sizes, dtypes
        and devices, so all it says is the rank of each tensor it passes (which the code it runs fixes)."""
        if self._pass_log is not None:
            self._pass_log.append(("site", info.key if isinstance(info, MethodInfo) else info.node.name, starred,
                                   args, kwargs, self._in_main_guard))
        if starred:
            info.opaque = True
        elif len(info.call_sites) <= _MAX_CALL_SITES:
            if self._in_main_guard:
                args, kwargs = [_rank_only(a, (id(info.node), i)) for i, a in enumerate(args)], \
                    {k: _rank_only(v, (id(info.node), k)) for k, v in kwargs.items()}
            info.call_sites.append((args, kwargs))

    def _replay_note(self, note: tuple) -> None:
        """A call site or construction a statement of module code noted, noted again (``modpass``)."""
        kind, name, starred, args, kwargs, in_main_guard = note
        saved, self._in_main_guard = self._in_main_guard, in_main_guard
        try:
            if kind == "new":
                self._note_construction(name, args)
            elif kind == "escape":
                self._note_escape(name)
            elif "." in name:
                owner, _, method = name.partition(".")
                self._note_site(self.classes[owner].method_infos[method], starred, args, kwargs)
            else:
                self._note_site(self.functions[name], starred, args, kwargs)
        finally:
            self._in_main_guard = saved

    def _call_sites_for(self, info):
        """The call sites a function's parameters are read from; None when some are unseen or unknowable."""
        if info.opaque or not info.call_sites or len(info.call_sites) > _MAX_CALL_SITES:
            return None
        if isinstance(info, MethodInfo):
            if any(self._wrapped_values(wrapper, param) is None or not self._passed_as_is(wrapper, param)
                   for wrapper, param in info.owner.wrapped_by):
                return None  # some wrapper's calls of it could not be followed
            # Its callers are the units that may call it; all analysed before it unless they call each other.
            callers = self._callers.get(id(info), ())
            return list(info.call_sites) if all(c.analysed or c is info for c in callers) else None
        # A copy: the module's second pass adds its calls again later, and the record must not change.
        return None if self._has_unseen_call_sites(info) else list(info.call_sites)

    def _analyse_class(self, info: ClassInfo, float_default) -> None:
        init = info.init
        info.attrs = {}
        if init is not None:
            env = self._function_env(init, self.index.scope_of_node[init], info.node.name, float_default, None)
            self._exec_block(init.body, env)
            info.attrs = self._set_once(info, env)

    def _set_once(self, info: ClassInfo, env: Env) -> dict:
        """The attributes ``__init__`` (run in ``env``) set once, and no other method sets: what every method reads."""
        init = info.init
        if info.node in self._setattr_within:
            return {}
        elsewhere = {attr for node, counts in self._stores_within.get(info.node, ()) if node is not init
                     for attr in counts}
        counts = dict(self._self_stores.get(init, (None, {}))[1])
        for name in _registered(init):  # self.register_buffer("mask", m): set, as by `self.mask = m`
            counts[name] = counts.get(name, 0) + 1
        seen = _placed_anywhere if info.is_module else lambda value: value
        return {name: seen(_contents_forgotten(value)) for name, value in (env.vars.get("<self>") or {}).items()
                if counts.get(name) == 1 and name not in elsewhere and not self._read("stored outside", name)}

    def _built_attributes(self, info: ClassInfo, instance: InstanceValue) -> Optional[dict]:
        """What ``__init__`` sets when run with this instance's own arguments. A layer built from a setting the
        class's own analysis cannot tell (``kernel_size``: an int or a tuple) has no weights there; built with
        ``kernel_size=3`` it has them. Memoised, bounded; nothing is recorded for hover."""
        bound = dict(instance.bindings)
        if not info.init_params <= bound.keys() or any(v is None for v in bound.values()):
            return None  # some arguments not known (`Block(**config)`): the class's own symbols tell more
        key = (info.node, instance.bindings)
        try:
            if key in self._built:
                return self._built[key]
        except TypeError:
            return None
        if info.init is None or self._trial is not None or self._specializations >= _MAX_SPECIALIZATIONS \
                or not _specializable(
                info.init, self.index.scope_of_node[info.init]):
            return None
        self._specializations += 1
        self._read("code", f"{info.node.name}.__init__")
        self._built[key] = None  # an __init__ that builds its own class gets nothing
        init = info.init
        with self._specialization():
            self._unit_class = None  # the attributes are read as any instance's, not as being made
            env = self._function_env(init, self.index.scope_of_node[init], info.node.name, self.default_float,
                                     [([], bound)])
            self._exec_block(init.body, env)
            built = self._set_once(info, env)
        self._built[key] = built
        return built

    @contextmanager
    def _specialization(self):
        """A body run for one call (or one instance): its names stay inside, nothing is recorded for hover, and
        the caller's defaults, loop depth and unit hold again after."""
        saved = (self.values, self.grad_not_on, self.default_float, self.default_float_why, self.default_device,
                 self.grad_enabled, self._loop_depth, self._unit_class)
        self.values, self.grad_not_on, self._loop_depth = {}, set(), 0
        self._specializing += 1
        try:
            yield
        finally:
            self._specializing -= 1
            (self.values, self.grad_not_on, self.default_float, self.default_float_why, self.default_device,
             self.grad_enabled, self._loop_depth, self._unit_class) = saved

    def _analyse_function(self, info: FunctionInfo, float_default, sites) -> None:
        env = self._function_env(info.node, info.scope, None, float_default, sites)
        info.summary = self._exec_function_body(info.node, env)
        info.analysed = True
        # A summary that mentions the function's own parameters, or sizes made up inside it, is only true
        # for one call: callers get nothing rather than a symbol that means different things.
        if info.summary is not None and _mentions_parameters(info.summary, info.node):
            info.summary = None

    def _has_unseen_call_sites(self, info: FunctionInfo) -> bool:
        """A call from code not analysed yet (a later function, a nested def, a lambda) would add
        arguments we have not seen."""
        for _, scope in self.index.calls_by_name.get(info.node.name, ()):
            if not self._call_site_seen(scope):
                return True
        return False

    def _call_site_seen(self, scope: Scope) -> bool:
        chain = []
        while scope.parent is not None:
            if not isinstance(scope.node, _COMPREHENSION_NODES):
                chain.append(scope)
            scope = scope.parent
        if not chain:
            return True  # module level: seen in the first pass
        top = chain[-1]
        if isinstance(top.node, ast.ClassDef):
            # a method of a top-level class, analysed already (its __init__ always is), not a nested def
            info = self.classes.get(top.node.name)
            if len(chain) != 2 or info is None or info.node is not top.node:
                return False
            method = info.method_infos.get(getattr(chain[0].node, "name", None))
            return method is None or method.analysed
        info = self.functions.get(getattr(top.node, "name", None))
        return len(chain) == 1 and info is not None and info.node is top.node and info.analysed

    def _exec_function_body(self, node, env: Env):
        saved = self._returns
        self._returns = []
        self._exec_block(node.body, env)
        returns, self._returns = self._returns, saved
        if not returns or _may_fall_off_end(node.body):
            return None
        result = returns[0]
        for value in returns[1:]:
            result = _branches_joined(result, value, (id(node), "return"))
        return result

    def _function_env(self, node, scope: Scope, class_name, float_default, sites, self_value=None) -> Env:
        self.default_float = float_default
        self.default_float_why = "the default dtype float32" if float_default else None
        self.default_device = None if self._device_changed else "cpu"
        self.grad_enabled = True
        for decorator in getattr(node, "decorator_list", ()):
            mode = _grad_mode(decorator, scope.parent or scope)
            if mode is not _NOT_A_GRAD_MODE:
                self.grad_enabled = mode
        env = Env(scope, self_class=class_name)
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for i, (arg, default) in enumerate(zip(positional, defaults)):
            if i == 0 and class_name is not None and not _is_static(node):
                env.vars[arg.arg] = self_value if self_value is not None else InstanceValue(class_name)
                continue
            env.vars[arg.arg] = self._parameter_value(arg, default, env, sites, i - (class_name is not None), arg.arg)
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            env.vars[arg.arg] = self._parameter_value(arg, default, env, sites, None, arg.arg)
        for star in (args.vararg, args.kwarg):
            if star is not None:
                env.vars[star.arg] = None
        if args.vararg is not None and sites is not None and len(sites) == 1:
            env.vars[args.vararg.arg] = sites[0][1].get("*" + args.vararg.arg)  # an instance's `*fns`
        if args.kwarg is not None and sites:
            # `def forward(self, x, **kwargs)` called with `context=x`: kwargs is that mapping (passed on whole by
            # `self.fn(x, **kwargs)`); called from several sites, the empty one when none passes an extra keyword.
            named = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
            extras = list(dict.fromkeys(tuple((k, v) for k, v in site[1].items() if k not in named)
                                        for site in sites))
            env.vars[args.kwarg.arg] = MappingValue(extras[0]) if len(extras) == 1 else \
                SiteKeywordsValue(tuple(MappingValue(e) for e in extras))  # (extras differ: per site)
        if not self._specializing:
            self._parameters_by_use(node, env)
            if node.name != "__init__" and class_name is not None and self._is_module_class(class_name):
                self._ranks_by_trial(node, env)  # (a module's methods: where tensors come in unannounced)
        return env

    def _is_module_class(self, name: str) -> bool:
        info = self.classes.get(name)
        return info is not None and info.is_module

    def _ranks_by_trial(self, node, env: Env) -> None:
        """A parameter nothing tells about (no caller seen, no annotation), used as a tensor whose rank the body
        fixes, however indirectly: ``x = self.norm(x)``, ``qkv = self.to_qkv(x).chunk(3, dim=-1)``, then
        ``map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=h), qkv)``. The body is run once per rank; when
        every rank but one makes an op certainly raise on a path every call takes, a call that returns had that
        rank, and the parameter has it (its sizes unnamed, unless a use names them)."""
        if not self._may_fix_a_rank(node, env):
            return
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            value = env.vars.get(arg.arg)
            if not isinstance(value, SymbolicValue) or value.is_int or self._trials_left <= 0 \
                    or arg.arg in self._int_names.get(node, ()):
                continue
            self._trials_left -= 1
            possible = []
            for rank in _TRIAL_RANKS:
                if not self._raises_with(node, env, arg.arg, rank):
                    possible.append(rank)
                    if len(possible) > 1:
                        break  # two ranks run: nothing to decide
            if len(possible) == 1 and possible[0] != _TRIAL_RANKS[-1]:
                shape = tuple(_stable_fresh(arg.arg, (id(node), arg.arg, i)) for i in range(possible[0]))
                env.vars[arg.arg] = TensorValue(shape=shape)
                self._by_trial.add(id(env.vars[arg.arg]))

    def _may_fix_a_rank(self, node, env: Env, depth: int = 0) -> bool:
        """Whether the body itself holds something that admits one rank only (what a trial can decide on): an
        einops call, a shape unpacked into names, or a call of a layer of ``self`` that checks its input's rank
        (an einops layer, a conv, a pooling, a norm with a rank check, or a Sequential holding one). Most bodies
        hold none, and trying them would cost a run of the body per rank for nothing."""
        instance = env.vars.get(node.args.args[0].arg) if node.args.args else None
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and isinstance(sub.targets[0], (ast.Tuple, ast.List)) \
                    and any(isinstance(n, ast.Attribute) and n.attr in ("shape", "size") for n in ast.walk(sub.value)):
                return True
            if not isinstance(sub, ast.Call):
                continue
            qualname = env.scope.qualname(sub.func) or ""
            if qualname.startswith("einops."):
                return True
            func = sub.func
            if isinstance(instance, InstanceValue) and isinstance(func, ast.Attribute) \
                    and isinstance(func.value, ast.Name) and func.value.id == node.args.args[0].arg:
                attribute = self.instance_attribute(instance, func.attr)
                if _checks_rank(attribute) or depth == 0 and isinstance(attribute, InstanceValue) \
                        and self._forward_may_fix_a_rank(attribute):
                    return True
        return False

    def _forward_may_fix_a_rank(self, instance: InstanceValue) -> bool:
        """A module of this file whose forward holds something a trial can decide on (a trial runs it)."""
        info = self.classes.get(instance.class_name)
        node = info.methods.get("forward") if info is not None and info.is_module else None
        if node is None or not node.args.args:
            return False
        env = Env(self.index.scope_of_node[node], {node.args.args[0].arg: InstanceValue(instance.class_name)},
                  instance.class_name)
        return self._may_fix_a_rank(node, env, 1)

    def _raises_with(self, node, env: Env, name: str, rank: int) -> bool:
        """Whether the body, run with ``name`` a tensor of ``rank`` unknown sizes, certainly raises."""
        shape = tuple(Sym.fresh(name) for _ in range(rank))
        trial_env = Env(env.scope, {**env.vars, name: TensorValue(shape=shape)}, env.self_class)
        saved = self._trial, self._maybe_depth, self._returns
        self._trial, self._maybe_depth = [False], 0
        self._active.append(node)
        try:
            with self._specialization():
                self._exec_function_body(node, trial_env)
            return self._trial[0]
        except _RankRuledOut:
            return True
        finally:
            self._active.pop()
            self._trial, self._maybe_depth, self._returns = saved

    def certainly_raises(self) -> None:
        """An op raises here whatever the unknown sizes are: during a rank trial, on a path every call takes,
        the rank tried is not the parameter's."""
        if self._trial is not None and self._maybe_depth == 0:
            self._trial[0] = True
            raise _RankRuledOut

    def _branch(self, run):
        """One branch of an ``if``: (what ``run()`` gives, whether it certainly raises). During a rank trial the
        branch is tried on its own: a branch that raises leaves the other as the only way on (and both raising,
        the ``if`` raises); otherwise an error in it rules nothing out."""
        if self._trial is None:
            with self._on_some_paths():
                return run(), False
        saved = self._trial, self._maybe_depth
        self._trial, self._maybe_depth = [False], 0
        try:
            return run(), False
        except _RankRuledOut:
            return None, True
        finally:
            self._trial, self._maybe_depth = saved

    @contextmanager
    def _on_some_paths(self):
        """Code that runs on some paths only (a branch, a loop body, a handler, a lambda): an error there does
        not rule a rank out."""
        self._maybe_depth += 1
        try:
            yield
        finally:
            self._maybe_depth -= 1

    def _parameters_by_use(self, node, env: Env) -> None:
        """A parameter unpacked into names (``b, t = idx.size()``) has that shape from the first line on, as long
        as nothing rebinds it before: ``device = idx.device`` above the unpacking is a tensor's device too."""
        rebound: set = set()
        renames: dict = {}
        for stmt in node.body:
            unpacked = _unpacked_shape(stmt.targets[0], stmt.value) \
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            if unpacked is not None and unpacked[0] not in rebound:
                owner, elts = unpacked
                if isinstance(env.vars.get(owner), SymbolicValue):
                    self._shape_by_use(stmt.targets[0], stmt.value, env)
                elif isinstance(env.vars.get(owner), TensorValue):
                    self._names_by_use(elts, env.vars[owner], env, renames)
            rebound |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        if renames:  # the callers' sizes, named as this function names them, in every parameter alike
            for name, value in list(env.vars.items()):
                if name != "<self>" and not isinstance(value, InstanceValue):
                    env.vars[name] = map_dims(value, lambda d: dims.rename(d, renames.get))

    def _names_by_use(self, elts: list, value: TensorValue, env: Env, renames: dict) -> None:
        """``B, T, C = x.size()`` where the callers passed ``(b, t, n_embd)``: inside, the sizes are B, T and C (a
        size the callers fixed, such as 768, stays that number)."""
        if value.shape is None or len(value.shape) != len(elts):
            return
        for dim, elt in zip(value.shape, elts):
            if isinstance(dim, Sym) and len(dim.symbols) == 1 and dim == Sym.var(next(iter(dim.symbols))) \
                    and isinstance(elt, ast.Name) and elt.id != "_" and self._stable(elt.id, env):
                renames.setdefault(next(iter(dim.symbols)), Sym.var(elt.id))

    def _parameter_value(self, arg: ast.arg, default, env: Env, sites, position, name):
        self._current_def = env.scope.node
        value = self._parameter_facts(arg, default, env, sites, position, name)
        if value is None and not self._specializing:
            # Nothing passed in is known: the parameter is a value known by its name. Used as a size it is the
            # symbol `name`; used as a tensor (`B, T, C = x.size()`) it gets its shape from that use.
            is_int = isinstance(default, ast.Constant) and type(default.value) is int \
                or name in self._int_names.get(env.scope.node, ())
            return SymbolicValue(Sym.var(name), is_int)
        return value

    def _parameter_facts(self, arg: ast.arg, default, env: Env, sites, position, name):
        """What the call sites pass (when every one is known and they agree), else what the annotation says: an
        annotation (``x: torch.Tensor``) never hides what the callers pass."""
        passed = self._passed(default, sites, position, name) if sites else None
        if passed is not None:
            return passed
        if arg.annotation is not None:
            # Annotations are evaluated where the function is defined (as the index resolves them).
            return ops.from_annotation(self, arg.annotation, env.scope.parent or env.scope, name)
        return None

    def _passed(self, default, sites, position, name):
        seen = []
        for positional, keywords in sites:
            if name in keywords:
                seen.append(keywords[name])
            elif position is not None and 0 <= position < len(positional):
                seen.append(positional[position])
            elif default is not None:
                seen.append(self.eval(default, Env(self.index.module_scope)))
            else:
                return None
        result = seen[0]
        for value in seen[1:]:
            # Call sites passing tensors of one rank, sizes differing: that rank, each differing size the
            # parameter's own (one size per call: per frame, one value).
            result = _widened(result, value, ("parameter", id(self._current_def), name))
        return result

    # -- statements ----------------------------------------------------------------------
    def _exec_block(self, body: Iterable[ast.stmt], env: Env) -> None:
        early = 0  # during a rank trial: the statements after one that may return run on some paths only
        try:
            previous = None
            for stmt in body:
                if self.grad_enabled is not True:
                    self.grad_not_on.add(stmt)
                handler = self._STATEMENTS.get(type(stmt))
                self._previous_statement, previous = previous, stmt
                if handler is not None:
                    handler(self, stmt, env)
                else:
                    for child in ast.iter_child_nodes(stmt):
                        if isinstance(child, ast.expr):
                            self.eval(child, env)
                if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
                    return
                if self._trial is not None and not early and not isinstance(stmt, _SIMPLE_STATEMENTS) \
                        and _may_return(stmt):
                    early = 1
                    self._maybe_depth += 1
        finally:
            self._maybe_depth -= early

    def _assign(self, stmt: ast.Assign, env: Env) -> None:
        unpacked = len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List))
        if unpacked:
            previous = self._previous_statement
            self._shape_by_use(stmt.targets[0], stmt.value, env)
            self._named_where_assigned(previous, stmt, env)
        saved = self._forced, self._forced_count
        self._forced = stmt.value if unpacked else None
        self._forced_count = len(stmt.targets[0].elts) if unpacked and not any(
            isinstance(e, ast.Starred) for e in stmt.targets[0].elts) else None
        try:
            value = self.eval(stmt.value, env)
        finally:
            self._forced, self._forced_count = saved
        if value is None and len(stmt.targets) == 1 and self._is_own_attribute(stmt.targets[0], env):
            value = self._tensor_or_none(stmt.value)
        for target in stmt.targets:
            self._bind(target, value, env)

    def _tensor_or_none(self, value: ast.expr):
        """``self.pos = nn.Parameter(...) if learned else None``: the attribute is that tensor or None (an
        EitherValue), so that a method's ``if exists(self.pos):`` knows it as the tensor."""
        if not isinstance(value, ast.IfExp):
            return None
        for kept, other in ((value.body, value.orelse), (value.orelse, value.body)):
            tensor = self.values.get(kept)
            if isinstance(other, ast.Constant) and other.value is None and isinstance(tensor, TensorValue):
                return EitherValue((tensor, ScalarValue("none", None)))
        return None

    def _shape_by_use(self, target, value: ast.expr, env: Env) -> None:
        """``B, T, C = x.size()`` (or ``x.shape``) where nothing is known of ``x``: then ``x`` is a tensor of rank 3
        whose dims are named ``B``, ``T``, ``C`` for the rest of the function (only a tensor has a ``size()``
        to unpack; ``.shape`` unpacked into names is read the same way)."""
        unpacked = _unpacked_shape(target, value, lambda name: self._size_alias(name, value, env))
        if unpacked is None:
            return
        owner, elts = unpacked
        current = self._lookup(owner, env)
        if current is not None and not isinstance(current, SymbolicValue) and id(current) not in self._by_trial:
            return
        if id(current) in self._by_trial and len(current.shape) != len(elts):
            return
        shape = tuple(self._size_symbol(e, env) for e in elts)
        env.vars[owner] = TensorValue(shape=shape)

    def _named_where_assigned(self, previous, unpacking: ast.Assign, env: Env) -> None:
        """``x = self.to_patch_embedding(img)`` right above ``b, n, _ = x.shape``: what the unpacking tells of ``x``
        held from its assignment on (nothing ran in between), so hover on that ``x`` tells it too."""
        if not (isinstance(previous, ast.Assign) and len(previous.targets) == 1
                and isinstance(previous.targets[0], ast.Name)) or self._trial is not None:
            return
        target = previous.targets[0]
        owner = _unpacked_shape(unpacking.targets[0], unpacking.value)
        value = env.vars.get(target.id)
        if owner is not None and owner[0] == target.id and target not in self.values \
                and isinstance(value, TensorValue) and value.shape is not None:
            self.values[target] = value

    def _size_alias(self, name: str, use: ast.expr, env: Env) -> Optional[ast.expr]:
        """``x.shape`` for ``shape`` in ``shape = x.shape; b, n, _, y, h = *shape, self.heads``: ``shape`` bound
        once, to a size of ``x``, and ``x`` not bound again between there and ``use`` (so it is the same tensor)."""
        found = env.scope.single_value(name)
        if found is None or found[1] is not env.scope or _unpacked_shape_owner(found[0]) is None:
            return None
        size, owner = found[0], _unpacked_shape_owner(found[0])
        between = (size.lineno, size.col_offset), (use.lineno, use.col_offset)
        if any(between[0] < (b.node.lineno, b.node.col_offset) < between[1]
               for b in env.scope.bindings.get(owner, ()) if hasattr(b.node, "lineno")):
            return None
        return size

    def _shape_by_pattern(self, qualname, callee, call, env: Env) -> None:
        """``rearrange(img, 'b c (h p1) (w p2) -> ...', p1=ph, p2=pw)`` (or a Rearrange layer, first in its
        Sequential) where nothing is known of ``img``: ``img`` has the pattern's shape, ``(b, c, h*ph, w*pw)``,
        from here on (einops raises for any other rank). Its axes are named after the pattern's."""
        first = call.node.args[0] if call.node.args else None
        given = call.args[0] if call.args else None
        rank_unknown = isinstance(given, TensorValue) and given.shape is None  # (a layer's output, say)
        if not isinstance(first, ast.Name) or not call.args or call.starred or (
                given is not None and not isinstance(given, SymbolicValue) and not rank_unknown
                and id(given) not in self._by_trial):
            return
        request = ops_einops.input_pattern(self, qualname, callee, call)
        if request is None:
            return
        pattern, axes = request
        line = call.node.lineno

        def symbol(axis: str) -> Sym:
            return Sym.fresh(axis) if self._specializing or self._item_axes else Sym.var(f"{axis}@L{line}")
        shape = ops_einops.pattern_input_shape(pattern, axes, symbol)
        if shape is not None:
            value = given.with_(shape=shape, strides=None) if rank_unknown else TensorValue(shape=shape)
            env.vars[first.id] = value
            call.args[0] = value

    def _size_symbol(self, target: ast.expr, env: Env) -> Sym:
        """The symbol for a size bound to ``target``: its own name where that name is bound once (so the symbol
        stands for one value in the frame), else a fresh one."""
        if isinstance(target, ast.Name) and target.id != "_" and self._stable(target.id, env):
            return Sym.var(target.id)
        return Sym.fresh(target.id if isinstance(target, ast.Name) else "n")

    def _stable(self, name: str, env: Env) -> bool:
        """``name`` holds one value for the whole frame: bound once, not in a loop or a comprehension, and the
        analysis runs this function for itself (not for one call, where its names must not leak to the caller)."""
        return not self._specializing and self._loop_depth == 0 \
            and not isinstance(env.scope.node, _COMPREHENSION_NODES) \
            and len(env.scope.bindings.get(name, ())) == 1

    def _ann_assign(self, stmt: ast.AnnAssign, env: Env) -> None:
        if stmt.value is None:
            return
        value = self.eval(stmt.value, env)
        if value is None and isinstance(stmt.target, ast.Name):
            value = ops.from_annotation(self, stmt.annotation, env.scope, stmt.target.id)
        self._bind(stmt.target, value, env)

    def _aug_assign(self, stmt: ast.AugAssign, env: Env) -> None:
        current = self.eval(stmt.target, env) if not isinstance(stmt.target, ast.Name) else \
            self._lookup(stmt.target.id, env)
        if current is not None:
            self.values[stmt] = current  # the statement node holds the target's value before the update
        else:
            self.values.pop(stmt, None)
        operand = self.eval(stmt.value, env)
        if isinstance(current, TensorValue):
            # In place: the tensor keeps its dtype, shape and device (or the op raises).
            result = ops.inplace_binary(self, stmt, current, operand)
        else:
            result = ops.binary(self, stmt, stmt.op, current, operand)
        if isinstance(stmt.target, ast.Name):
            env.vars[stmt.target.id] = result
            if result is not None:
                self.values[stmt.target] = result
        elif isinstance(stmt.target, ast.Attribute):
            self._bind(stmt.target, result, env)

    def _bind(self, target: ast.expr, value, env: Env) -> None:
        if isinstance(target, ast.Name):
            int_use = target.id in self._int_names.get(_function_node(env.scope), ())
            if (value is None or isinstance(value, ScalarValue) and value.kind == "int" and value.value is None) \
                    and self._stable(target.id, env):
                # Unknown, but one value for the frame: known by its name (a size of that name, if used as one).
                value = SymbolicValue(Sym.var(target.id), int_use) if value is None \
                    else ScalarValue("int", Sym.var(target.id))
            elif isinstance(value, SymbolicValue) and not value.is_int and int_use and self._stable(target.id, env):
                value = SymbolicValue(value.dim, True)  # `patch_dim = c * ph * pw` used as nn.Linear(patch_dim, dim)
            env.vars[target.id] = value
            if value is not None and not isinstance(value, SymbolicValue):  # a name is no fact about the value
                self.values[target] = value
            else:
                self.values.pop(target, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            stars = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
            starred = bool(stars)
            items = ops.unpack(self, value, len(target.elts)) if not starred \
                else ops.unpack_starred(value, len(target.elts), stars[0]) if len(stars) == 1 else None
            if isinstance(value, SeqValue) and value.kind == "size" and value.items is not None and (
                    len(value.items) < len(target.elts) - 1 if starred else len(value.items) != len(target.elts)):
                self.certainly_raises()  # `b, n, d = x.shape` of a 4-d x: too many values to unpack
            for i, elt in enumerate(target.elts):
                self._bind(elt.value if isinstance(elt, ast.Starred) else elt,
                           items[i] if items is not None else None, env)
        elif isinstance(target, ast.Attribute):
            receiver = self.eval(target.value, env)
            if isinstance(receiver, InstanceValue) and isinstance(target.value, ast.Name):
                env.vars.pop(_narrowed_key(target), None)
                attributes = dict(env.vars.get("<self>") or {})  # copied: branches must not share it
                attributes[target.attr] = value
                env.vars["<self>"] = attributes
                if value is not None:
                    self.values[target] = value
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value, env)
            self.eval(target.slice, env)
            if isinstance(container, SeqValue):
                self._forget_list_items(env)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, None, env)

    def _expr_stmt(self, stmt: ast.Expr, env: Env) -> None:
        self.eval(stmt.value, env)

    def _return(self, stmt: ast.Return, env: Env) -> None:
        value = self.eval(stmt.value, env) if stmt.value is not None else ScalarValue("none", None)
        if self._returns is not None:
            self._returns.append(value)

    def _if(self, stmt: ast.If, env: Env) -> None:
        if env.scope is self.index.module_scope and _is_main_guard(stmt.test) and not self._in_main_guard:
            self._in_main_guard = True
            try:
                return self._if(stmt, env)
            finally:
                self._in_main_guard = False
        test = self.eval(stmt.test, env)
        if isinstance(stmt.test, ast.Constant) and isinstance(stmt.test.value, bool):
            # `if True:` / `if False:` take one branch only (the other is dead code).
            self._exec_block(stmt.body if stmt.test.value else stmt.orelse, env)
            return
        body, orelse = env.copy(), env.copy()
        self._narrow(stmt.test, body, True)
        self._narrow(stmt.test, orelse, False)
        decided = _decided_bool(test) if self._trial is None or not self._asks_none(stmt.test, env) else None
        _, body_raises = self._branch(self._dead_if(decided is False, lambda: self._exec_block(stmt.body, body)))
        _, else_raises = self._branch(self._dead_if(decided is True, lambda: self._exec_block(stmt.orelse, orelse)))
        if decided is not None:
            # `if x.ndim == 4:` with x's rank known: the code after goes on from the branch taken only. The other
            # is analysed (its returns left out) and then keeps no facts: it never runs with these.
            taken, taken_raises = (body, body_raises) if decided else (orelse, else_raises)
            self._forget_dead(stmt.orelse if decided else stmt.body)
            if taken_raises:
                self.certainly_raises()
            env.vars = taken.vars
            return
        if body_raises and else_raises:
            self.certainly_raises()
        ends_body = body_raises or _always_leaves(stmt.body)
        ends_else = else_raises or _always_leaves(stmt.orelse)
        if ends_body and not ends_else:
            merged = orelse
        elif ends_else and not ends_body:
            merged = body
        else:
            # A symbol for "whichever branch ran": one size per frame, or inside a loop per pass of the innermost.
            merged = body.joined(orelse, branch=stmt, minted=self._per_pass if self._loop_depth else None)
            self._set_on_one_path(env, body, orelse, merged)
        env.vars = merged.vars

    def _asks_none(self, test: ast.expr, env: Env) -> bool:
        """Whether ``test`` asks if something is None (``x is None``, ``exists(context)``). A rank trial assumes the
        parameter tried is a tensor, so it must not decide such a test: that pinned rank 3 on a ``context`` which
        is None in the calls without it (simple_vit_attn_residual). ``x.ndim == 4`` it may decide."""
        return any(_none_test(node) is not None or isinstance(node, ast.Call) and self._none_helper(node, env)
                   is not None for node in ast.walk(test))

    def _forget_dead(self, block: list[ast.stmt]) -> None:
        """A branch these facts rule out never runs with them: it keeps no fact, so no rule reads one there (a
        TW507 error on `rearrange(x, 'b v c h w -> b v c 1 h w')` under `if x.ndim == 5:` with x 6-d, in
        vit-pytorch's VAT, VAAT and VAT-SigLIP)."""
        values = self.values
        for stmt in block:
            for node in ast.walk(stmt):
                if node.__class__ is not ast.Constant:  # what the code says whatever the facts (a malformed pattern)
                    values.pop(node, None)

    def _dead_if(self, dead: bool, run):
        """``run``, or where it is a branch the facts rule out, ``run`` with its ``return``s left out of the
        function's result (``if not return_hiddens: return x`` when every call passes True)."""
        if not dead:
            return run

        def without_returns():
            saved = self._returns
            self._returns = None if saved is None else []
            try:
                return run()
            finally:
                self._returns = saved
        return without_returns

    def _set_on_one_path(self, before: Env, body: Env, orelse: Env, merged: Env) -> None:
        """``if use_cls_token: self.cls_token = nn.Parameter(...)``: an attribute first set on one path only can
        afterwards be read only where that path ran (elsewhere the read raises AttributeError), so a read sees
        that path's value. Not for a name the class (or what it inherits) has without being set."""
        previous = before.vars.get("<self>") or {}
        mine, theirs = body.vars.get("<self>") or {}, orelse.vars.get("<self>") or {}
        new = [k for k in mine.keys() ^ theirs.keys() if k not in previous]
        known = self._instance_names(before.self_class) if new else None  # (the class walked only when needed)
        if known is None:
            return
        one_sided = {k: (mine.get(k) if k in mine else theirs.get(k)) for k in new if k not in known}
        if one_sided:
            merged.vars["<self>"] = {**merged.vars.get("<self>", {}), **one_sided}

    def _instance_names(self, class_name) -> Optional[frozenset]:
        """The attributes an instance of ``class_name`` has whether or not a method sets them (class-level names,
        nn.Module's), or None when a base class is one this file does not show."""
        info = self.classes.get(class_name) if class_name is not None else None
        if info is None or not info.is_module:
            return None
        names, seen, todo = set(_MODULE_ATTRIBUTES), set(), [info.node]
        while todo:
            node = todo.pop()
            seen.add(node.name)
            for stmt in node.body:
                names |= _names_assigned([stmt]) if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                          ast.ClassDef)) else {stmt.name}
            for base in node.bases:
                if isinstance(base, ast.Name) and base.id in self.classes:
                    if base.id not in seen:
                        todo.append(self.classes[base.id].node)
                elif self.index.module_scope.qualname(base) not in ops.MODULE_BASES:
                    return None
        return frozenset(names)

    def _narrow(self, test: ast.expr, env: Env, holds: bool) -> None:
        """What a branch learns from its test: ``isinstance(t, torch.Tensor)`` (or not), ``x is None`` (or not).
        A fact the test rules out is dropped in that branch, so no rule fires on code the guard keeps away from it
        (``if not isinstance(t, torch.Tensor): t = torch.tensor(t)`` is not a torch.tensor of a tensor)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._narrow(test.operand, env, not holds)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if holds else ast.Or):
            for value in test.values:  # all hold (an `and` taken) / none holds (an `or` not taken)
                self._narrow(value, env, holds)
            return
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and env.scope.owner_of("isinstance") is None and len(test.args) == 2 \
                and isinstance(test.args[0], ast.Name):
            name, current = test.args[0].id, self._lookup(test.args[0].id, env)
            if not self._is_tensor_class(test.args[1], env):
                return
            if holds and not isinstance(current, TensorValue):
                env.vars[name] = TensorValue() if current is None or isinstance(current, SymbolicValue) else None
            elif not holds and isinstance(current, TensorValue):
                env.vars[name] = None  # not a tensor here, whatever was known
            return
        attribute = self._attribute_none_test(test, env)
        if attribute is not None:
            key, current, op = attribute
            if holds != isinstance(op, ast.Is) and isinstance(current, EitherValue) and current.may_be_none:
                env.vars[key] = current.without_none()  # `if exists(self.pos): x = x + self.pos`
            return
        none_test = _none_test(test) or self._none_helper(test, env)
        if none_test is not None:
            name, op = none_test
            is_none = holds == isinstance(op, ast.Is)
            current = self._lookup(name, env)
            if is_none:
                env.vars[name] = ScalarValue("none", None)
            elif isinstance(current, ScalarValue) and current.kind == "none":
                env.vars[name] = None  # not None here
            elif isinstance(current, EitherValue) and current.may_be_none:
                env.vars[name] = current.without_none()  # `if exists(peg): x = peg(x)`

    def _attribute_none_test(self, test: ast.expr, env: Env):
        """``self.pos is (not) None`` / ``exists(self.pos)`` in a method: (the key its narrowed value has in the
        env, what ``self.pos`` is, the ``is`` / ``is not``). Only ``self``'s own attributes: ``__init__`` alone sets
        them (``_set_once``), so what a test tells holds until the branch ends."""
        attribute, op = None, None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            attribute, op = test.left, test.ops[0]
        elif isinstance(test, ast.Call) and len(test.args) == 1 and isinstance(test.args[0], ast.Attribute):
            probe = ast.Call(func=test.func, args=[ast.Name("_", ast.Load())], keywords=test.keywords)
            helper = self._none_helper(probe, env)
            attribute, op = (test.args[0], helper[1]) if helper is not None else (None, None)
        if not (isinstance(attribute, ast.Attribute) and isinstance(attribute.value, ast.Name)):
            return None
        receiver = self._lookup(attribute.value.id, env)
        method = _function_node(env.scope)
        own = getattr(getattr(method, "args", None), "args", None)
        if not isinstance(receiver, InstanceValue) or receiver.class_name != env.self_class or not own \
                or own[0].arg != attribute.value.id or _is_static(method):
            return None  # (only the method's own `self`, which nothing rebinds)
        key = _narrowed_key(attribute)
        current = env.vars.get(key) or self._own_attribute(receiver, attribute.attr, env)
        return key, current, op

    def _own_attribute(self, receiver: InstanceValue, name: str, env: Env):
        if receiver.bindings is None:
            attributes = env.vars.get("<self>") or {}  # set by this very method so far
            if name in attributes:
                return attributes[name]
        return self.instance_attribute(receiver, name)

    def _none_helper(self, test: ast.expr, env: Env):
        """``exists(x)`` of a function of this file that is ``return val is not None`` (lucidrains' ``exists``):
        the test ``x is not None``, as ``(name, op)``."""
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and len(test.args) == 1
                and not test.keywords and isinstance(test.args[0], ast.Name)):
            return None
        name = test.func.id
        info = self.functions.get(name)
        if info is None or env.scope.owner_of(name) is not self.index.module_scope:
            return None
        self._read("code", name)
        params, body = info.node.args, info.node.body
        if len(body) != 1 or not isinstance(body[0], ast.Return) or len(params.args) != 1 or params.vararg \
                or params.kwarg or params.kwonlyargs or params.posonlyargs:
            return None
        inner = _none_test(body[0].value)
        if inner is None or inner[0] != params.args[0].arg:
            return None
        return test.args[0].id, inner[1]

    def _is_tensor_class(self, node: ast.expr, env: Env) -> bool:
        """``torch.Tensor``, or a tuple holding it: isinstance(t, (torch.Tensor, np.ndarray)) narrows too."""
        if isinstance(node, ast.Tuple):
            return any(self._is_tensor_class(e, env) for e in node.elts) and all(
                env.scope.qualname(e) is not None for e in node.elts)
        return env.scope.qualname(node) in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter")

    def _loop(self, stmt, env: Env) -> None:
        is_for = isinstance(stmt, (ast.For, ast.AsyncFor))
        iterable = self.eval(stmt.iter, env) if is_for else self.eval(stmt.test, env)
        if is_for and self._trial is not None and self._first_pass_raises(stmt, iterable, env):
            return  # (a rank trial: the first pass certainly raises, so a call that goes on ran no pass)
        state = env.copy()
        made: set = set()  # the names given loop symbols
        self._loop_depth += 1
        try:
            with self._on_some_paths():
                self._loop_passes(stmt, is_for, iterable, state, made)
        finally:
            self._loop_depth -= 1
        if is_for:
            self._count_appends(stmt, iterable, env, state)
        _leave_loop(stmt, state, made)
        with self._on_some_paths():
            self._exec_block(stmt.orelse, state)
        # The loop may run zero times: what holds after it is the join with what held before.
        env.vars = state.vars

    def _first_pass_raises(self, stmt, iterable, env: Env) -> bool:
        """During a rank trial, ``for stage in self.layers: x = stage(x)``: whether the body's first pass certainly
        raises (tried as a branch, like an ``if``'s). Only for a body every pass runs through to its end (no
        ``break``, ``continue``, ``return``, ``yield`` of its own) and a loop without ``else``."""
        if stmt.orelse or any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom))
                              for n in _own_nodes(stmt)):
            return False

        def first_pass():
            body = env.copy()
            self._bind(stmt.target, ops.iteration_item(self, stmt.iter, iterable, body), body)
            self._exec_block(stmt.body, body)
        return self._branch(first_pass)[1]

    def _count_appends(self, loop, iterable, before: Env, after: Env) -> None:
        """``outs = []`` then ``for ... in range(n): outs.append(y)``: ``outs`` has n items (appended once per pass,
        at the top of the body, with no ``break``/``continue`` that could skip it)."""
        count = ops.iteration_length(self, loop.iter, iterable)
        if count is None or any(isinstance(n, (ast.Break, ast.Continue)) for n in _own_nodes(loop)):
            return
        appended = [s.value.func.value.id for s in loop.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                    and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "append"
                    and isinstance(s.value.func.value, ast.Name)]
        for name in set(appended):
            start, end = before.vars.get(name), after.vars.get(name)
            if appended.count(name) != 1 or not (isinstance(start, SeqValue) and start.items is not None) \
                    or not isinstance(end, SeqValue) or end.items is not None \
                    or name in _names_assigned(loop.body) - {"<self>"}:
                continue
            after.vars[name] = SeqValue("list", element=end.element, length=len(start.items) + count)

    def _loop_passes(self, stmt, is_for: bool, iterable, state: Env, made: set) -> None:
        for _ in range(_LOOP_PASSES):
            body = state.copy()
            if is_for:
                self._bind(stmt.target, ops.iteration_item(self, stmt.iter, iterable, body), body)
            self._exec_block(stmt.body, body)
            if not is_for:
                self.eval(stmt.test, body)
            widened = state.joined(body, loop=stmt, made=made)
            if self._per_pass:
                # A branch's symbol in a loop is one size per pass: what outlives the pass (a list's items, an
                # attribute, a name kept as it was) must not claim one size for all of them.
                widened.vars = {k: _without_sizes(v, self._per_pass) for k, v in widened.vars.items()}
            if widened.vars == state.vars:
                break
            state.vars = widened.vars
        else:
            # Not stable: forget everything the loop assigns, then record values once more.
            for name in _names_assigned(stmt.body) | (_names_assigned([stmt]) if is_for else set()):
                state.vars[name] = None
            body = state.copy()
            if is_for:
                self._bind(stmt.target, ops.iteration_item(self, stmt.iter, iterable, body), body)
            self._exec_block(stmt.body, body)

    def _with(self, stmt, env: Env) -> None:
        saved = self.grad_enabled
        for item in stmt.items:
            self.eval(item.context_expr, env)
            mode = _grad_mode(item.context_expr, env.scope, self)
            if mode is not _NOT_A_GRAD_MODE:
                self.grad_enabled = mode
            if item.optional_vars is not None:
                self._bind(item.optional_vars, None, env)
        with self._on_some_paths():  # (a context manager may swallow the error)
            self._exec_block(stmt.body, env)
        self.grad_enabled = saved

    def _try(self, stmt, env: Env) -> None:
        with self._on_some_paths():
            self._try_paths(stmt, env)

    def _try_paths(self, stmt, env: Env) -> None:
        before = env.copy()
        self._exec_block(stmt.body, env)
        after = env.copy()
        # A handler may start anywhere in the body: names the body assigns are unknown there.
        assigned = _names_assigned(stmt.body)
        for handler in stmt.handlers:
            start = before.joined(after)
            for name in assigned:
                start.vars[name] = None
            if handler.name:
                start.vars[handler.name] = None
            self._exec_block(handler.body, start)
            if not _always_leaves(handler.body):
                after = after.joined(start)
        self._exec_block(stmt.orelse, after)
        self._exec_block(stmt.finalbody, after)
        env.vars = after.vars

    def _function_def(self, stmt, env: Env) -> None:
        for decorator in stmt.decorator_list:
            self.eval(decorator, env)
        env.vars[stmt.name] = None

    def _class_def(self, stmt: ast.ClassDef, env: Env) -> None:
        for base in stmt.bases:
            self.eval(base, env)
        env.vars[stmt.name] = None

    def _delete(self, stmt: ast.Delete, env: Env) -> None:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                env.vars[target.id] = None

    def _global(self, stmt, env: Env) -> None:
        for name in stmt.names:
            env.vars[name] = None

    def _import(self, stmt, env: Env) -> None:
        for alias in stmt.names:
            name = alias.asname or alias.name.split(".")[0]
            env.vars.pop(name, None)

    def _match(self, stmt, env: Env) -> None:
        self.eval(stmt.subject, env)
        for name in _names_assigned([stmt]):
            env.vars[name] = None

    _STATEMENTS: dict = {}

    # -- expressions ---------------------------------------------------------------------------
    def eval(self, node: Optional[ast.expr], env: Env):
        if node is None:
            return None
        method = _EXPRESSIONS.get(type(node))
        value = method(self, node, env) if method is not None else self._eval_children(node, env)
        if value is not None:
            if self._loop_depth and isinstance(node, ast.Call) and not self._specializing:
                # A call in a loop whose result has a symbol nothing in scope has (a branch's or its returns'
                # in the callee: the size of whichever ran in that call): one size per pass here
                # (``outs.append(pick(x, c))``), forgotten at the loop head in what outlives the pass.
                new = _symbol_names(value) - self._per_pass
                if new:
                    for v in env.vars.values():
                        new -= _symbol_names(v)
                        if not new:
                            break
                    self._per_pass.update(new)
            self.values[node] = value
        else:
            # A loop body runs more than once: an earlier pass's fact must not outlive a later "unknown".
            self.values.pop(node, None)
        return value

    def _eval_children(self, node: ast.AST, env: Env):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child, env)
            elif isinstance(child, ast.comprehension):
                self.eval(child.iter, env)
        return None

    def _lookup(self, name: str, env: Env):
        if name in env.vars:
            return env.vars[name]
        owner = env.scope.owner_of(name)
        if owner is None or owner is env.scope:
            return None
        if owner.kind is ScopeKind.MODULE and self.module_env is not None and self._in_function:
            # A module-level name read inside a function: only a name bound once is certain.
            if len(owner.bindings.get(name, ())) == 1:
                return self._read("env", name)
        return None

    def _name(self, node: ast.Name, env: Env):
        if isinstance(node.ctx, ast.Load):
            return self._lookup(node.id, env)
        return None

    def _constant(self, node: ast.Constant, env: Env):
        return ops.constant(node.value)

    def _sequence(self, node, env: Env):
        kind = "list" if isinstance(node, ast.List) else "tuple"
        items, known = [], True
        for e in node.elts:
            if isinstance(e, ast.Starred):  # `(q, *kv.chunk(2, dim=-1))`: a spread of known items is those items
                spread = self.eval(e.value, env)
                if isinstance(spread, SeqValue) and spread.items is not None and spread.kind != "iterator":
                    items.extend(spread.items)
                else:
                    known = False
            else:
                items.append(self.eval(e, env))
        if not known:
            return SeqValue(kind)
        return SeqValue(kind, tuple(items))

    def _attribute(self, node: ast.Attribute, env: Env):
        qualname = env.scope.qualname(node)
        if qualname is not None:
            return ops.qualified_constant(qualname)
        receiver = self.eval(node.value, env)
        if isinstance(receiver, InstanceValue):
            narrowed = env.vars.get(_narrowed_key(node)) if isinstance(node.value, ast.Name) else None
            if narrowed is not None:
                return narrowed
            if receiver.bindings is None and receiver.class_name == env.self_class:
                attributes = env.vars.get("<self>") or {}  # set by this very method so far
                if node.attr in attributes:
                    return attributes[node.attr]
            value = self.instance_attribute(receiver, node.attr)
            return value if value is not None else self._property(receiver, node, env)
        return ops.attribute(self, node, receiver)

    def _property(self, instance: InstanceValue, node: ast.Attribute, env: Env):
        """``self.abs_pos_emb.weight`` where the class defines ``@property def weight(self): return
        self.linear.weight``: the getter's body run for this instance, as a method called with nothing."""
        info = self.classes.get(instance.class_name)
        getter = info.methods.get(node.attr) if info is not None else None
        if getter is None or not _is_property(getter, self.index.scope_of_node[getter]):
            return None
        self._read("code", f"{instance.class_name}.{node.attr}")
        return self._specialize(getter, self.index.scope_of_node[getter], instance.class_name, instance,
                                ops.Call(node, [], {}, False, env), getter=True)

    # -- instances of this file's classes ----------------------------------------------------------------
    def instance_attribute(self, instance: InstanceValue, name: str):
        """``instance.name``: what the class's ``__init__`` set, read through the instance's arguments."""
        info = self.classes.get(instance.class_name)
        if info is None:
            return None
        if info.dataclass_fields is not None:  # a @dataclass: its fields are its arguments
            bound = dict(instance.bindings or ())
            return bound.get(name) if instance.bindings is not None else None
        if instance.class_name == self._unit_class:
            attributes = info.attrs  # set by this very unit
        else:
            attributes = self._read("attributes", instance.class_name)
        value = attributes.get(name) if attributes is not None else None
        if value is None or instance.bindings is None:
            return value
        passed = self._passed_on(value, instance, info)
        if passed is not None:
            return passed
        if isinstance(value, ModuleValue):  # layers: built again with the instance's settings, which tell more
            built = self._built_attributes(info, instance)
            if built is not None and built.get(name) is not None:
                return built[name]
        return self._through(value, instance)

    def _passed_on(self, value, instance: InstanceValue, info: ClassInfo):
        """``self.fn = fn`` (or ``self.n = config.n``): the attribute is the argument itself, whatever it is (a
        layer, a user module, a size)."""
        if not (isinstance(value, SymbolicValue) and isinstance(value.dim, Sym) and len(value.dim.symbols) == 1):
            return None
        name = next(iter(value.dim.symbols))
        base, _, rest = name.partition(".")
        if value.dim != Sym.var(name) or "#" in name or base not in info.init_params:
            return None
        arg = dict(instance.bindings).get(base)
        for attr in rest.split(".") if rest else ():
            arg = self._attribute_of(arg, attr)
        return arg

    def _through(self, value, instance: InstanceValue):
        """A class-level fact about ``instance`` in the caller's terms: the ``__init__`` parameters' symbols (and
        ``config.n_embd`` read from a parameter) replaced by the instance's arguments; sizes nobody can know get
        symbols of their own, one per instance."""
        info = self.classes[instance.class_name]
        bound = dict(instance.bindings)

        def replace(name: str):
            base, _, rest = name.partition(".")
            if "#" in name or base not in info.init_params:
                return self._fresh_for(instance, name) if "#" in name else None
            arg = bound.get(base)
            for attr in rest.split(".") if rest else ():
                arg = self._attribute_of(arg, attr)
            dim = ops.int_of(arg)
            return dim if dim is not None else self._fresh_for(instance, name)

        return map_dims(value, lambda d: dims.rename(d, replace))

    def _attribute_of(self, value, name: str):
        if isinstance(value, InstanceValue):
            return self.instance_attribute(value, name)
        if isinstance(value, SymbolicValue) and isinstance(value.dim, Sym) and len(value.dim.symbols) == 1:
            return SymbolicValue(Sym.var(f"{next(iter(value.dim.symbols))}.{name}"), self._read("int field", name))
        return None

    def _fresh_for(self, instance: InstanceValue, name: str) -> Sym:
        return _stable_fresh(name, (id(instance.token), instance.bindings))

    def _instance(self, name: str, call) -> InstanceValue:
        """``Name(args)`` of a class of this file: an instance, with its arguments by ``__init__`` parameter."""
        info = self.classes[name]
        self._read("signature", name)  # how arguments bind depends on __init__ (or the dataclass fields)
        bindings = _bind_arguments(info.init, call, self) if info.init is not None else \
            (() if not call.args and not call.kwargs else None)
        if info.dataclass_fields is not None:
            bindings = _bind_fields(info.dataclass_fields, call, self)
        if not self._specializing:
            self._note_construction(name, bindings)
            if bindings is None:  # arguments that bind to nothing known (an inherited __init__, `*args`)
                for held in sorted(_classes_in([*call.args, *call.kwargs.values()]) & self.classes.keys()):
                    self._note_escape(held)
        return InstanceValue(name, bindings if bindings is not None else (), call.node)

    def _note_construction(self, name: str, bindings) -> None:
        info = self.classes[name]
        if self._pass_log is not None:
            self._pass_log.append(("new", name, False, bindings, None, self._in_main_guard))
        recorded = False
        if bindings is None or self._in_main_guard:
            info.constructed_unseen = True
        elif len(info.constructions) <= _MAX_CALL_SITES:
            info.constructions.append(bindings)
            recorded = True
        self._note_wrapped(name, bindings, recorded)
        if self._calls is not None:
            self._calls.append((f"new:{name}", False, bindings, {}))

    def _wrapper_param(self, wrapper: Optional[str], slot) -> Optional[str]:
        """The parameter of the wrapper class ``wrapper``'s ``__init__`` that an argument at ``slot`` (a position
        or a keyword) binds, when the class only ever calls it (``wrappers.wrapper_attribute``)."""
        info = self.classes.get(wrapper) if wrapper is not None else None
        if info is None or info.init is None or slot is None:
            return None
        args = info.init.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)][1:]
        if isinstance(slot, int):
            param = positional[slot] if slot < len(positional) else None
        else:
            param = slot if slot in positional[len(args.posonlyargs) - 1 if args.posonlyargs else 0:] or \
                slot in {a.arg for a in args.kwonlyargs} else None
        return param if param is not None and self._wrapper_attr(wrapper, param) is not None else None

    def _wrapper_attr(self, wrapper: str, param: str) -> Optional[str]:
        node = self.classes[wrapper].node
        if wrapper in self._subclassed or any(isinstance(b, ast.Name) and b.id in self.classes for b in node.bases):
            return None  # (a subclass's methods, or a base's, could use the attribute too)
        key = (node, param)
        if key not in self._wrapper_attrs:
            self._wrapper_attrs[key] = wrappers.wrapper_attribute(node, param)
        return self._wrapper_attrs[key]

    def _note_wrapped(self, name: str, bindings, recorded: bool) -> None:
        """The modules of this file that a construction of ``name`` was given: those a wrapper only calls get its
        calls as their call sites (``_call_wrapped``); any other escapes, and its methods take no facts from calls."""
        info = self.classes[name]
        for param, value in bindings or ():
            held = _classes_in([value]) & self.classes.keys()
            if not held:
                continue
            clean = recorded and not info.constructed_unseen and self._wrapper_attr(name, param) is not None \
                and not (self._in_function and any(m.analysed for m in info.method_infos.values()))
            for held_name in held:
                if clean:
                    self.classes[held_name].wrapped_by.add((name, param))
                else:
                    for method in self.classes[held_name].method_infos.values():
                        method.opaque = True

    def _note_escape(self, name: str) -> None:
        """An instance of ``name`` went where the analysis does not follow: its methods take no facts from calls."""
        for method in self.classes[name].method_infos.values():
            method.opaque = True
        if self._pass_log is not None:
            self._pass_log.append(("escape", name, False, None, None, self._in_main_guard))
        if self._calls is not None:
            self._calls.append((f"escape:{name}", False, None, {}))

    def _passed_as_is(self, wrapper: str, param: str) -> bool:
        """The wrapper's attribute is its argument as it was passed (what ``_call_wrapped`` and ``_passed_on`` follow),
        not a value its ``__init__`` made of it."""
        value = self.classes[wrapper].attrs.get(self._wrapper_attr(wrapper, param))
        return isinstance(value, SymbolicValue) and value.dim == Sym.var(param)

    def _wrapped_values(self, wrapper: str, param: str):
        """What every construction of ``wrapper`` passed as ``param``; None when some are not seen."""
        info = self.classes.get(wrapper)
        if info is None or info.constructed_unseen or not info.constructions \
                or len(info.constructions) > _MAX_CALL_SITES:
            return None
        values = tuple(dict(bindings).get(param) for bindings in info.constructions)
        return None if any(v is None for v in values) else values

    def _call_wrapped(self, instance: InstanceValue, name: str, attribute, call):
        """``self.fn(x)`` in a method of a wrapper, for every instance (``self`` is none in particular): each module
        its constructions passed as ``fn`` called with these arguments (which notes the call site), in the callee's
        terms; the value what the calls agree on, in this method's terms (sizes from elsewhere made fresh)."""
        if not (isinstance(attribute, SymbolicValue) and isinstance(attribute.dim, Sym)
                and len(attribute.dim.symbols) == 1):
            return None
        param = next(iter(attribute.dim.symbols))
        info = self.classes[instance.class_name]
        if attribute.dim != Sym.var(param) or param not in info.init_params \
                or self._wrapper_attr(instance.class_name, param) != name:
            return None
        values = self._read("wrapped", f"{instance.class_name}.{param}")
        if values is None:
            return None
        distinct = []
        for value in values:
            if not any(_same(value, seen) for seen in distinct):
                distinct.append(value)
        args, kwargs = self._into_frame(call, InstanceValue(instance.class_name, ()), info)
        inner = ops.Call(call.node, args, kwargs, call.starred, call.env)
        tag = "@" + (self._unit_tag or "<module>")

        def back(symbol: str):
            if symbol.endswith(tag):
                return Sym.var(symbol[:-len(tag)])
            return None if "#" in symbol else _stable_fresh(symbol, (id(call.node), "wrapped"))
        results = [map_dims(ops.call_value(self, value, inner), lambda d: dims.rename(d, back)) for value in distinct]
        result = results[0]
        for other in results[1:]:
            result = join(result, other)
        if isinstance(result, TensorValue) and result.shape is None and len(results) > 1:
            result = ops._same_rank(call, results, result)
        return result

    def call_instance(self, instance: InstanceValue, call, method: str = "forward"):
        """``instance(x)`` (its ``forward``) or ``instance.method(x)``: the method analysed with these arguments."""
        info = self.classes.get(instance.class_name)
        node = info.methods.get(method) if info is not None else None
        if node is None or not info.is_module and method == "forward":
            return None
        method_info = info.method_infos.get(method)
        if method_info is not None and not self._specializing and (self._units_pending or self._in_function):
            args, kwargs = self._into_frame(call, instance, info)
            self._note_method_call(method_info, call.starred, args, kwargs)
        self._read("code", f"{instance.class_name}.{method}")
        return self._specialize(node, self.index.scope_of_node[node], instance.class_name, instance, call)

    def _into_frame(self, call, instance: InstanceValue, info: ClassInfo):
        """A call's arguments in the terms of the callee's own analysis: a size the instance was built with is the
        callee's parameter of that name; the caller's other symbols get the caller's tag (shown the same), so that
        they never meet a symbol of the callee's that has the same name."""
        mapping = {}
        for name, value in instance.bindings or ():
            dim = ops.int_of(value)
            if isinstance(dim, Sym) and len(dim.symbols) == 1 and dim == Sym.var(next(iter(dim.symbols))):
                mapping.setdefault(next(iter(dim.symbols)), Sym.var(name))
        tag = self._unit_tag or "<module>"

        def replace(name: str):
            base, dot, rest = name.partition(".")
            if base in mapping:  # the instance's own size, or read from its config: `config.n_embd`
                return mapping[base] if not dot else Sym.var(f"{next(iter(mapping[base].symbols))}.{rest}")
            if "#" in name or "@" in name:
                return None
            return Sym.var(f"{name}@{tag}")

        def into(value):
            return map_dims(value, lambda d: dims.rename(d, replace))
        return [into(a) for a in call.args], {k: into(v) for k, v in call.kwargs.items()}

    def _specialize(self, node, scope: Scope, class_name, self_value, call, getter: bool = False):
        """The value of one call: the callee's body run with the arguments' facts (the callee's own names stay
        inside; nothing is recorded for hover), memoised, bounded, never recursive. ``getter``: a property's
        (whose one decorator ``_is_property`` has checked)."""
        if call.starred or node in self._active or len(self._active) >= _MAX_CALL_DEPTH \
                or not (getter or _specializable(node, scope)):
            return None
        if self._trial is not None:
            return self._trial_call(node, scope, class_name, self_value, call)
        try:
            key = (node, self_value, tuple(call.args), tuple(sorted(call.kwargs.items())), self.grad_enabled,
                   self.default_float)
            hash(key)
        except TypeError:
            return None
        if key in self._specialized:
            return self._per_call(self._specialized[key], call)
        if self._specializations >= _MAX_SPECIALIZATIONS:
            return None
        self._specializations += 1
        grad = self.grad_enabled
        self._active.append(node)
        try:
            with self._specialization():
                env = self._function_env(node, scope, class_name, self.default_float,
                                         [(list(call.args), dict(call.kwargs))], self_value=self_value)
                if grad is not True and self.grad_enabled is True:
                    self.grad_enabled = grad  # the caller's torch.no_grad() holds inside
                result = self._exec_function_body(node, env)
        finally:
            self._active.pop()
        self._specialized[key] = result
        return self._per_call(result, call)

    def _trial_call(self, node, scope: Scope, class_name, self_value, call):
        """During a rank trial, a call of a module of this file with the tried tensor: its forward runs (one level
        deep, nothing kept), so an op there that certainly raises on a path every call of it takes, on a path every
        call of the trial takes, rules the rank out (``self.attn(self.norm(x))`` where the attention unpacks
        ``B, N, C = x.shape``)."""
        if self._maybe_depth or self._trial_calls >= 1 or not any(
                isinstance(a, TensorValue) and a.shape is not None for a in (*call.args, *call.kwargs.values())):
            return None
        self._trial_calls += 1
        saved_returns = self._returns
        self._active.append(node)
        grad = self.grad_enabled
        try:
            with self._specialization():
                env = self._function_env(node, scope, class_name, self.default_float,
                                         [(list(call.args), dict(call.kwargs))], self_value=self_value)
                if grad is not True and self.grad_enabled is True:
                    self.grad_enabled = grad
                return self._exec_function_body(node, env)
        finally:
            self._active.pop()
            self._returns = saved_returns
            self._trial_calls -= 1

    def _per_call(self, result, call):
        """A size the callee made up (``x[x > 0]``) differs between calls: each call site gets its own symbols."""
        if result is None:
            return None
        given = set()
        for value in (*call.args, *call.kwargs.values()):
            map_dims(value, lambda d: given.update(d.symbols) or d if isinstance(d, Sym) else d)
        made: dict = {}

        def fresh(name: str):
            if "#" not in name or name in given:
                return None
            return made.setdefault(name, _stable_fresh(name, id(call.node)))
        return map_dims(result, lambda d: dims.rename(d, fresh))

    def _subscript(self, node: ast.Subscript, env: Env):
        receiver = self.eval(node.value, env)
        index = self.eval(node.slice, env)
        return ops.subscript(self, node, receiver, index, env)

    def _slice(self, node: ast.Slice, env: Env):
        for part in (node.lower, node.upper, node.step):
            self.eval(part, env)
        return None

    def _bin_op(self, node: ast.BinOp, env: Env):
        # A left-deep chain (`x + x + ...`, thousands long in generated code) is evaluated in a loop, each inner
        # operation's value kept as `eval` keeps it: Python parses chains far deeper than its recursion limit.
        spine = []
        while node.left.__class__ is ast.BinOp:
            spine.append(node)
            node = node.left
        value = ops.binary(self, node, node.op, self.eval(node.left, env), self.eval(node.right, env))
        for outer in reversed(spine):
            if value is not None:
                self.values[node] = value
            else:
                self.values.pop(node, None)
            node = outer
            value = ops.binary(self, node, node.op, value, self.eval(node.right, env))
        return value

    def _unary_op(self, node: ast.UnaryOp, env: Env):
        operand = self.eval(node.operand, env)
        return ops.unary(self, node, operand)

    def _compare(self, node: ast.Compare, env: Env):
        values = [self.eval(node.left, env)] + [self.eval(c, env) for c in node.comparators]
        return ops.compare(self, node, values)

    def _bool_op(self, node: ast.BoolOp, env: Env):
        operands = [self.eval(node.values[0], env)]
        with self._on_some_paths():
            for value in node.values[1:]:
                operands.append(self.eval(value, env))
        return _decided_bool_op(isinstance(node.op, ast.And), operands)

    def _if_exp(self, node: ast.IfExp, env: Env):
        """``a if test else b``: each branch with what its test tells (``x if exists(ctx) else ...``); a test the
        facts decide (``exists(None)``) takes its branch only."""
        test = self.eval(node.test, env)
        if isinstance(test, ScalarValue) and test.kind == "bool" and isinstance(test.value, bool) \
                and (self._trial is None or not self._asks_none(node.test, env)):  # (as in `_if`)
            return self.eval(node.body if test.value else node.orelse, env)
        body, orelse = env.copy(), env.copy()
        self._narrow(node.test, body, True)
        self._narrow(node.test, orelse, False)
        value, body_raises = self._branch(lambda: self.eval(node.body, body))
        other, else_raises = self._branch(lambda: self.eval(node.orelse, orelse))
        if body_raises and else_raises:
            self.certainly_raises()
        return other if body_raises else value if else_raises else \
            _branches_joined(value, other, id(node), minted=self._per_pass if self._loop_depth else None)

    def _named_expr(self, node: ast.NamedExpr, env: Env):
        value = self.eval(node.value, env)
        self._bind(node.target, value, env)
        return value

    def _comprehension(self, node, env: Env):
        if node is self._forced:  # `q, k, v = (rearrange(t, ...) for t in qkv)`: unpacking runs every item
            unpacked = self._generator_unpacked(node, env)
            if unpacked is not None:
                return unpacked
            return self._comprehension_items(node, env)
        with self._on_some_paths():
            return self._comprehension_items(node, env)

    def _generator_unpacked(self, node, env: Env):
        """``q, k, v = (rearrange(t, 'b n (h d) -> b h n d', h=h) for t in qkv)``: one ``for`` over a name, no
        ``if``: the element made of each of qkv's items (3 of them where the line runs on, when not known)."""
        generator = node.generators[0] if isinstance(node, ast.GeneratorExp) and len(node.generators) == 1 else None
        if generator is None or generator.ifs or generator.is_async or not isinstance(generator.target, ast.Name) \
                or self._forced_count is None:
            return None
        iterable = self.eval(generator.iter, env)
        unknown = not isinstance(iterable, SeqValue) or iterable.items is None
        if not unknown and (iterable.kind not in ("tuple", "list") or len(iterable.items) != self._forced_count):
            return None
        items = (None,) * self._forced_count if unknown else iterable.items
        scope = self.index.scope_of_node.get(node, env.scope)
        return SeqValue("tuple", tuple(self._each_item(node.elt, scope, generator.target.id, items, env, True,
                                                       unknown)))

    def _comprehension_items(self, node, env: Env):
        inner = env.copy()
        inner.scope = self.index.scope_of_node.get(node, env.scope)
        for i, generator in enumerate(node.generators):
            # The first iterable is evaluated in the enclosing scope, as Python (and the index) do.
            iterable = self.eval(generator.iter, env if i == 0 else inner)
            self._bind(generator.target, ops.iteration_item(self, generator.iter, iterable, inner), inner)
            for condition in generator.ifs:
                self.eval(condition, inner)
        if isinstance(node, ast.DictComp):
            self.eval(node.key, inner)
            self.eval(node.value, inner)
            return None
        element = self.eval(node.elt, inner)
        new = _symbol_names(element)
        if new:
            # A symbol nothing in scope has (a called function's two returns of different sizes): the size of that
            # item's call only, not one size for every item (``torch.cat([pick(x, c) for c in cs], 1)``)
            for v in inner.vars.values():
                new -= _symbol_names(v)
                if not new:
                    break
            if new:
                element = _without_sizes(element, new)
        if isinstance(node, ast.ListComp):
            length = None
            if len(node.generators) == 1 and not node.generators[0].ifs:
                length = ops.iteration_length(self, node.generators[0].iter, self.values.get(node.generators[0].iter))
            return SeqValue("list", element=element, length=length)
        return None

    def _dict(self, node: ast.Dict, env: Env):
        values = [self.eval(v, env) for v in node.values]
        keys = [self.eval(k, env) if k is not None else None for k in node.keys]
        if all(isinstance(k, ScalarValue) and isinstance(k.value, str) for k in keys):
            return MappingValue(tuple((k.value, v) for k, v in zip(keys, values)))
        return None

    def _lambda(self, node: ast.Lambda, env: Env):
        """A lambda is a value that can be called: it captures the enclosing names its body reads (only names
        bound once, whose value cannot change before it is called; others are unknown inside)."""
        params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        free = {n.id for n in ast.walk(node.body) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - params
        captured = tuple(sorted((name, self._lookup(name, env)) for name in free
                                if name in env.vars and self._stable(name, env)))
        try:
            hash(captured)
        except TypeError:
            return None
        return LambdaValue(node, captured)

    def call_lambda(self, function: LambdaValue, call):
        """``self.mlpf(x)`` of ``self.mlpf = lambda x: ...``: its body's value for these arguments."""
        node = function.node
        args = node.args
        if call.starred or call.kwargs or args.vararg or args.kwarg or args.kwonlyargs or args.defaults \
                or len(call.args) != len(args.posonlyargs) + len(args.args) or node in self._active:
            return None
        scope = self.index.scope_of_node.get(node)
        if scope is None:
            return None
        names = [a.arg for a in (*args.posonlyargs, *args.args)]
        env = Env(scope, {**dict(function.captured), **dict(zip(names, call.args))})
        saved, loop_depth = self.values, self._loop_depth
        self.values, self._loop_depth = {}, 0
        self._specializing += 1
        self._active.append(node)
        try:
            with self._on_some_paths():
                return self.eval(node.body, env)
        finally:
            self._active.pop()
            self._specializing -= 1
            self.values, self._loop_depth = saved, loop_depth

    def _call(self, node: ast.Call, env: Env):
        func = node.func
        args = [self.eval(a.value if isinstance(a, ast.Starred) else a, env) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords if k.arg is not None}
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        per_site = None
        for k in node.keywords:
            if k.arg is None:
                spread = self.eval(k.value, env)
                if isinstance(spread, MappingValue) and not (kwargs.keys() & dict(spread.items).keys()):
                    kwargs.update(spread.items)  # `**kwargs` whose keys are known: they are the keywords
                elif isinstance(spread, SiteKeywordsValue) and per_site is None and not any(
                        kwargs.keys() & dict(o.items).keys() for o in spread.options):
                    per_site = spread.options
                else:
                    starred = True
        if per_site is not None and not starred:
            return self._call_per_site(node, args, kwargs, per_site, env)
        return self._dispatch_call(node, ops.Call(node, args, kwargs, starred, env), env)

    def _call_per_site(self, node: ast.Call, args: list, kwargs: dict, options: tuple, env: Env):
        """``self.fn(x, **kwargs)`` where each call site passed other keywords: the call made with each (so each
        noted as a call site of its own); what they agree on, as for one of several modules (``ops.call_value``)."""
        runs = [self._branch(lambda option=option: self._dispatch_call(
            node, ops.Call(node, args, {**kwargs, **dict(option.items)}, False, env), env)) for option in options]
        if all(raised for _, raised in runs):
            self.certainly_raises()
            return None
        results = [result for result, raised in runs if not raised]
        result = results[0]
        for other in results[1:]:
            result = join(result, other)
        if isinstance(result, TensorValue) and result.shape is None and len(results) > 1:
            result = ops._same_rank(ops.Call(node, args, kwargs, False, env), results, result)
        return result

    def _dispatch_call(self, node: ast.Call, call, env: Env):
        func = node.func
        qualname = env.scope.qualname(func)
        if qualname == "functools.partial":
            return _partial_layer(node, call, env)
        if qualname is not None:
            call = _spliced(call, node)
            self._shape_by_pattern(qualname, None, call, env)
            return ops.call_qualified(self, qualname, call)
        if isinstance(func, ast.Attribute):
            receiver = self.eval(func.value, env)
            if isinstance(receiver, InstanceValue):
                return self._instance_call(receiver, func, call, env)
            if isinstance(receiver, ModuleValue) and func.attr in _LIST_MUTATORS and receiver.kind in _CONTAINERS:
                self._grow_container(func.value, receiver, func.attr, call, env)
                return None
            if isinstance(receiver, TensorValue):
                call = _spliced(call, node)
            result = ops.call_method(self, func.attr, receiver, call)
            if isinstance(func.value, ast.Name) and func.attr in ops.INPLACE_SHAPE_METHODS:
                self._forget_shapes(env, func.value.id, result)
            if isinstance(receiver, SeqValue) and func.attr in _LIST_MUTATORS:
                self._forget_list_items(env)
                added = self._added_item(func.attr, call)
                if added is not None and isinstance(func.value, ast.Name):
                    # What every item of the list now is: the items before (none, for a new list) and this one.
                    each = added if receiver.items == () else join(receiver.each, added)
                    env.vars[func.value.id] = SeqValue("list", element=each)
            elif isinstance(receiver, ModuleValue) and func.attr in ops.MODULE_CONVERSIONS:
                self._converted_in_place(func.value, result if isinstance(result, ModuleValue) else None, env)
            elif result is None:
                self._forget_passed_lists(call, env)
            return result
        if isinstance(func, ast.Name):
            result = self._call_name(func.id, call, env)
            if result is None and not (env.scope.owner_of(func.id) is None and func.id in _PURE_BUILTINS):
                self._forget_passed_lists(call, env)
            return result
        callee = self.eval(func, env)
        return ops.call_value(self, callee, call)

    def _converted_in_place(self, target: ast.expr, result, env: Env) -> None:
        """``model.double()``, ``self.fc.double()`` convert the layer in place: later reads see the new parameters.
        A layer reached deeper (``self.blocks[0].double()``, ``model.fc.double()``) changes what holds it too, which
        is forgotten (the outermost name or attribute of ``self``)."""
        if isinstance(target, ast.Name) or self._is_own_attribute(target, env):
            self._bind(target, result, env)
            return
        outer = target
        while isinstance(outer, (ast.Attribute, ast.Subscript)) and not isinstance(outer.value, ast.Name):
            outer = outer.value
        if isinstance(outer, (ast.Attribute, ast.Subscript)) and isinstance(outer.value, ast.Name):
            holder = outer if self._is_own_attribute(outer, env) else outer.value
            self._bind(holder, None, env)

    def _is_own_attribute(self, node: ast.expr, env: Env) -> bool:
        """``self.name``, read in a method of the class being analysed."""
        if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
            return False
        receiver = env.vars.get(node.value.id)
        return isinstance(receiver, InstanceValue) and receiver.bindings is None \
            and receiver.class_name == env.self_class

    def _instance_call(self, instance: InstanceValue, func: ast.Attribute, call, env: Env):
        """``self.fc1(x)``, ``self.attn(x)``, ``self.helper(x)``, ``self.register_buffer("mask", m)``."""
        name = func.attr
        if name in ("register_buffer", "register_parameter") and call.args and instance.bindings is None:
            key = call.args[0]
            if isinstance(key, ScalarValue) and isinstance(key.value, str) and len(call.args) >= 2:
                value = call.args[1]
                if name == "register_parameter" and isinstance(value, TensorValue):
                    value = value.with_(requires_grad=True, is_leaf=True)
                attributes = dict(env.vars.get("<self>") or {})
                attributes[key.value] = value
                env.vars["<self>"] = attributes
            return None
        attribute = self.instance_attribute(instance, name) if name not in self._method_names(instance) else None
        if attribute is not None and instance.bindings is None and instance.class_name == env.self_class \
                and not self._specializing and isinstance(attribute, SymbolicValue):
            return self._call_wrapped(instance, name, attribute, call)
        if attribute is not None:
            self.values[func] = attribute
            self._shape_by_pattern(None, attribute, call, env)
            return ops.call_value(self, attribute, call)
        if name in ("to", "cuda", "cpu", "train", "eval", "float", "double", "half", "requires_grad_") \
                and self._is_module_class(instance.class_name):
            return instance  # a module converts itself in place and returns itself
        return self.call_instance(instance, call, name)

    def _method_names(self, instance: InstanceValue) -> dict:
        info = self.classes.get(instance.class_name)
        return info.methods if info is not None else {}

    def _grow_container(self, target: ast.expr, container: ModuleValue, method: str, call, env: Env) -> None:
        """``self.layers.append(Block(...))`` (in a loop): the container now also holds that sub-module."""
        added = call.args[0] if method in ("append", "extend", "insert") and call.args else None
        if method == "insert":
            added = call.args[1] if len(call.args) > 1 else None
        if method == "extend":
            added = added.each if isinstance(added, (SeqValue, ModuleValue)) else None
        if container.kind == "ParameterList" and added is not None:
            added = ops_nn.as_parameter(added)  # (a tensor appended is made a Parameter)
        index = call.args[0] if method == "insert" and call.args else None
        position = index.value if isinstance(index, ScalarValue) and type(index.value) is int else None
        if added is None or container.children is None or method == "insert" and not (
                position is not None and 0 <= position <= len(container.children)):
            grown = ModuleValue(container.kind, container.params, container.config, None, (),
                                join(container.each, added) if container.children != () else added)
        elif method == "insert":  # `insert(0, stem)`: in its place (it was put last)
            children = container.children
            grown = ModuleValue(container.kind, container.params, container.config,
                                children[:position] + (added,) + children[position:])
        else:
            grown = ModuleValue(container.kind, container.params, container.config, container.children + (added,))
        if method not in ("append", "extend", "insert"):
            grown = ModuleValue(container.kind, container.params, container.config, None)
        self._bind(target, grown, env)

    def _map(self, call, env: Env):
        """``map(lambda t: rearrange(t, ...), qkv)``, ``map(torch.abs, deltas)``: the function applied to each item
        of a sequence of known items (what ``q, k, v = map(...)`` unpacks). Inside the lambda, hover shows what
        holds for every item."""
        if call.starred or len(call.args) != 2 or call.kwargs:
            return None
        function, items = call.node.args[0], call.args[1]
        one_argument = isinstance(function, ast.Lambda) and len(function.args.args) == 1 \
            and not function.args.defaults \
            and not (function.args.vararg or function.args.kwarg or function.args.kwonlyargs)
        unknown_items = not isinstance(items, SeqValue) or items.items is None
        if unknown_items and one_argument and call.node is self._forced and self._forced_count is not None:
            # `q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=h), qkv)` with `qkv` not known:
            # where the line runs on, qkv had 3 items, each what the lambda makes of an item not known.
            items = SeqValue("tuple", (None,) * self._forced_count)
        elif unknown_items:
            return None
        results = []
        if one_argument:
            scope = self.index.scope_of_node.get(function, env.scope)
            results = self._each_item(function.body, scope, function.args.args[0].arg, items.items, env,
                                      call.node is self._forced, unknown_items)
        elif isinstance(function, ast.Name) and env.scope.owner_of(function.id) is self.index.module_scope \
                and function.id in self.functions:
            # `map(l2norm, (q, k))` of a function of this module: called once per item, as `l2norm(q)` would be
            for item in items.items:
                results.append(self._call_name(function.id, ops.Call(call.node, [item], {}, False, env), env))
        else:
            qualname = env.scope.qualname(function)
            if qualname is None:
                return None
            for item in items.items:
                results.append(ops.call_qualified(self, qualname, ops.Call(call.node, [item], {}, False, env)))
        return SeqValue("tuple", tuple(results))

    def _each_item(self, body: ast.expr, scope, name: str, items: tuple, env: Env, forced: bool,
                   unknown: bool) -> list:
        """``body`` evaluated with ``name`` bound to each item in turn (a lambda mapped, a generator's element):
        what each gives. Errors count only where an unpacking runs every item (``forced``); items not known
        (``unknown``) name their axes with fresh symbols, as each item has sizes of its own. Hover inside shows
        what holds for every item."""
        results, per_item = [], []
        for item in items:
            saved, self.values = self.values, {}
            inner = Env(scope, {**env.vars, name: item}, env.self_class)
            saved_axes, self._item_axes = self._item_axes, unknown
            try:
                if forced:
                    results.append(self.eval(body, inner))
                else:
                    with self._on_some_paths():
                        results.append(self.eval(body, inner))
            finally:
                self._item_axes = saved_axes
                per_item.append(self.values)
                self.values = saved
        for node in set().union(*per_item) if per_item else ():  # what holds for every item
            value = per_item[0].get(node)
            for other in per_item[1:]:
                value = join(value, other.get(node))
            if value is not None:
                self.values[node] = value
        return results

    @staticmethod
    def _added_item(method: str, call):
        """What ``lst.append(x)``, ``lst.insert(0, x)`` or ``lst.extend(xs)`` (of alike items) adds: an item
        (None when not known, or for a method that adds none)."""
        if call.starred or call.kwargs:
            return None
        if method == "append" and len(call.args) == 1:
            return call.args[0]
        if method == "insert" and len(call.args) == 2:
            return call.args[1]
        if method == "extend" and len(call.args) == 1 and isinstance(call.args[0], SeqValue):
            return call.args[0].each
        return None

    def _first_parameter_of_a_module(self, call, env: Env) -> bool:
        """``next(m.parameters())`` (or ``buffers()``), ``m`` a layer or a module of this file."""
        node = call.node
        if len(node.args) != 1 or node.keywords or call.starred:
            return False
        inner = node.args[0]
        if not isinstance(inner, ast.Call) or inner.args or inner.keywords \
                or not isinstance(inner.func, ast.Attribute) or inner.func.attr not in ("parameters", "buffers"):
            return False
        receiver = self.eval(inner.func.value, env)
        return isinstance(receiver, ModuleValue) or isinstance(receiver, InstanceValue) \
            and self._is_module_class(receiver.class_name)

    def _forget_list_items(self, env: Env) -> None:
        """A list changed in place (``rows.append(t)``): any name may alias it, so forget every list's items."""
        vars = env.vars
        for key in _names_holding(vars, SeqValue):
            value = vars[key]
            if value.kind == "list" and value.items is not None:
                vars[key] = SeqValue("list")

    def _forget_passed_lists(self, call, env: Env) -> None:
        """An unknown function may change a list it is given."""
        if any(isinstance(v, SeqValue) and v.kind == "list" for v in (*call.args, *call.kwargs.values())):
            self._forget_list_items(env)

    def _call_name(self, name: str, call, env: Env):
        owner = env.scope.owner_of(name)
        if owner is None and name == "map":
            return self._map(call, env)
        if owner is None and name == "next" and self._first_parameter_of_a_module(call, env):
            # `next(self.parameters()).device` (NaViT's `device` property): one of the module's parameters, a
            # tensor of which nothing else is known (a module without any raises StopIteration: no call returns).
            return TensorValue()
        if owner is None:
            return ops.call_builtin(self, name, call)
        if owner is self.index.module_scope:
            if name in self.functions:
                info = self.functions[name]
                if not self._specializing:
                    self._note_call(info, call.starred, list(call.args), dict(call.kwargs))
                if not self._in_function and self._units_pending:
                    return None  # the module's first pass: functions are analysed after it
                self._read("code", name)
                return self._specialize(info.node, info.scope, None, None, call)
            kind = self._read("class", name)
            if kind is not None:
                return self._instance(name, call) if kind in (True, "dataclass", "plain") else None
        callee = self._lookup(name, env)
        if callee is not None:
            self.values[call.node.func] = callee
        return ops.call_value(self, callee, call)

    def _forget_shapes(self, env: Env, name: str, result) -> None:
        """An in-place shape change (``x.unsqueeze_(0)``) reaches every alias of ``x``: forget all shapes."""
        vars = env.vars
        for key in _names_holding(vars, TensorValue):
            vars[key] = vars[key].with_(shape=None, strides=None)
        receiver = env.vars.get(name)
        if isinstance(result, TensorValue):
            env.vars[name] = result
        elif isinstance(receiver, TensorValue):
            env.vars[name] = receiver.with_(shape=None, strides=None)


Inference._STATEMENTS = {
    ast.Assign: Inference._assign, ast.AnnAssign: Inference._ann_assign, ast.AugAssign: Inference._aug_assign,
    ast.Expr: Inference._expr_stmt, ast.Return: Inference._return, ast.If: Inference._if,
    ast.For: Inference._loop, ast.AsyncFor: Inference._loop, ast.While: Inference._loop,
    ast.With: Inference._with, ast.AsyncWith: Inference._with, ast.Try: Inference._try,
    ast.FunctionDef: Inference._function_def, ast.AsyncFunctionDef: Inference._function_def,
    ast.ClassDef: Inference._class_def, ast.Delete: Inference._delete, ast.Global: Inference._global,
    ast.Nonlocal: Inference._global, ast.Import: Inference._import, ast.ImportFrom: Inference._import,
    ast.Match: Inference._match,
}
if hasattr(ast, "TryStar"):
    Inference._STATEMENTS[ast.TryStar] = Inference._try

_EXPRESSIONS: dict[type, Callable] = {
    ast.Name: Inference._name, ast.Constant: Inference._constant, ast.List: Inference._sequence,
    ast.Tuple: Inference._sequence, ast.Attribute: Inference._attribute, ast.Subscript: Inference._subscript,
    ast.Slice: Inference._slice, ast.BinOp: Inference._bin_op, ast.UnaryOp: Inference._unary_op,
    ast.Compare: Inference._compare, ast.BoolOp: Inference._bool_op, ast.IfExp: Inference._if_exp,
    ast.NamedExpr: Inference._named_expr, ast.ListComp: Inference._comprehension,
    ast.SetComp: Inference._comprehension, ast.GeneratorExp: Inference._comprehension,
    ast.DictComp: Inference._comprehension, ast.Lambda: Inference._lambda, ast.Call: Inference._call,
    ast.Dict: Inference._dict,
}


# -- syntactic helpers ----------------------------------------------------------------------------
def _always_leaves(body: list) -> bool:
    """The block never falls through (it returns, raises, breaks or continues on every path)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return True
    if isinstance(last, ast.If):
        return _always_leaves(last.body) and _always_leaves(last.orelse)
    return False


def _may_fall_off_end(body: list) -> bool:
    return not _always_leaves(body) and not (body and isinstance(body[-1], ast.Raise))


def _names_assigned(body: Iterable[ast.AST]) -> set[str]:
    names = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
    names.add("<self>")
    return names


# Statements with no statement inside (so no `return`).
_SIMPLE_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass, ast.Assert, ast.Delete,
                      ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)
_COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _same(a, b) -> bool:
    """Equal, and equal in every detail shown: 0.0 == -0.0, but hover tells them apart. The very same object, or a
    tuple of the very same objects (a unit's recorded read of a function: (analysed, summary)), is decided without
    comparing or showing it: checking every unit's reads compared and showed whole summaries on each edit."""
    return _identical(a, b) or a == b and repr(a) == repr(b)


def _identical(a, b) -> bool:
    """The very same object, or tuples, lists, dicts (keys in the same order) and instances of the very same objects,
    all the way down: equal and shown alike, decided without comparing or showing them (a unit's call sites and
    its ``self`` are new containers on each analysis around the very same facts: repr was a tenth of an edit)."""
    if a is b:
        return True
    cls = a.__class__
    if cls is not b.__class__:
        return False
    if cls is tuple or cls is list:
        return len(a) == len(b) and all(map(_identical, a, b))
    if cls is dict:
        return len(a) == len(b) and all(map(is_, a, b)) and all(map(_identical, a.values(), b.values()))
    if cls is InstanceValue:
        return a.class_name is b.class_name and a.token is b.token and _identical(a.bindings, b.bindings)
    return False


def _changed_names(old: dict, new: dict) -> set:
    """The names whose module-level bindings differ between two ``_bindings_signature``s."""
    return {name for name in old.keys() | new.keys() if old.get(name) != new.get(name)}


def _bindings_signature(module: Scope) -> dict:
    """What each module-level name is bound to, by kind: units are reused only while this holds."""
    return {name: tuple((b.kind, b.qualname, type(b.node)) for b in bindings)
            for name, bindings in module.bindings.items()}


def _top_level(scope: Scope):
    """The node of the top-level statement (function, class) a scope lies in; the module for the module."""
    while scope.parent is not None and scope.parent.parent is not None:
        scope = scope.parent
    return scope.node


def _loop_symbol(key, position: int, exit: bool = False) -> Sym:
    return Sym.var(f"n#{abs(hash((key, position, exit))) % 10 ** 12}")


def _widened(a, b, key, made: Optional[set] = None):
    """``join`` at a loop head, with a tensor's changing sizes (same rank) as the loop's own symbols (one per
    pass: see _leave_loop); sizes that do not change stay."""
    joined = join(a, b)
    if isinstance(joined, TensorValue) and joined.shape is None and isinstance(a, TensorValue) \
            and isinstance(b, TensorValue) and a.shape is not None and b.shape is not None \
            and len(a.shape) == len(b.shape):
        if made is not None:
            made.add(key[-1])
        return joined.with_(shape=tuple(x if x == y else _loop_symbol(key, i) for i, (x, y) in
                                        enumerate(zip(a.shape, b.shape))))
    return joined


def _decided_bool(value) -> Optional[bool]:
    """The truth of a test the facts decide (a bool constant), else None."""
    if isinstance(value, ScalarValue) and value.kind == "bool" and isinstance(value.value, bool):
        return value.value
    return None


def _decided_bool_op(is_and: bool, operands: list):
    """``a and b`` / ``a or b``: decided by the first operand that stops it (a False bool for ``and``, a True one for
    ``or``) when every operand before it is a decided bool, whatever the operands after it are (Python never
    evaluates them: ``x.ndim == 2 and not self.flag`` is False for a 3-d x); else by the last one, when it is a bool.
    An undecided bool before that: an undecided bool if every operand is a bool, else None (a value that is no bool
    would be the result)."""
    for operand in operands[:-1]:
        truth = _decided_bool(operand)
        if truth is None:
            break
        if truth is not is_and:
            return operand
    else:
        last = operands[-1]
        return last if isinstance(last, ScalarValue) and last.kind == "bool" else None
    if all(isinstance(v, ScalarValue) and v.kind == "bool" for v in operands):
        return ScalarValue("bool")
    return None


def _branches_joined(a, b, key, minted: Optional[set] = None):
    """``join`` of two branches (an if-expression's, an ``if``'s, a function's returns; ``key`` says which): tensors
    of one rank keep it, each differing size a symbol of the branch point's own (the size of whichever ran); a
    module on one side and None on the other, either (``PEG(dim) if is_first else None``). ``minted``, when given,
    gets the symbols' names (a branch in a loop: one size per pass, forgotten at the loop head)."""
    joined = join(a, b)
    if joined is None:
        return module_or_none(a, b)
    if isinstance(joined, TensorValue) and joined.shape is None and isinstance(a, TensorValue) \
            and isinstance(b, TensorValue) and a.shape is not None and b.shape is not None \
            and len(a.shape) == len(b.shape):
        shape = tuple(x if x == y else Sym.var(f"n#{abs(hash((key, i))) % 10 ** 12}")
                      for i, (x, y) in enumerate(zip(a.shape, b.shape)))
        if minted is not None:
            minted.update(f"n#{abs(hash((key, i))) % 10 ** 12}" for i, (x, y) in enumerate(zip(a.shape, b.shape))
                          if x != y)
        return joined.with_(shape=shape)
    return joined


def _symbol_names(value) -> set:
    """The names of the symbols any size of ``value`` mentions."""
    names: set = set()
    if isinstance(value, dict):  # (`<self>`: the attributes)
        for v in value.values():
            names |= _symbol_names(v)
        return names

    def note(d):
        if isinstance(d, Sym):
            names.update(d.symbols)
        return d
    map_dims(value, note)
    return names


def _without_sizes(value, names: set):
    """``value`` with every size that mentions one of ``names`` forgotten (a tensor's shape, a list's length)."""
    if isinstance(value, dict):  # (`<self>`: the attributes)
        return {k: _without_sizes(v, names) for k, v in value.items()}
    mentioned = []
    map_dims(value, lambda d: mentioned.append(d) if isinstance(d, Sym) and d.symbols & names else d)
    if not mentioned:
        return value
    if isinstance(value, TensorValue):
        return value.with_(shape=None, strides=None)
    if isinstance(value, SeqValue):
        return SeqValue(value.kind, None if value.items is None else
                        tuple(_without_sizes(i, names) for i in value.items),
                        _without_sizes(value.element, names), None, value.fields)
    return None


def _leave_loop(loop, env: "Env", made: set) -> None:
    """After the loop, its per-pass sizes are the sizes of the last pass (or of before the loop): symbols of their
    own, unrelated to the ones inside. Only the names in ``made`` were given loop symbols: building the map for
    every name in scope made module-level loops cost the module's size each (quadratic in a script)."""
    head = {}
    for name in made:
        for position in range(8):
            head[next(iter(_loop_symbol((id(loop), name), position).symbols))] = _loop_symbol((id(loop), name),
                                                                                        position, exit=True)
    if not head:
        return
    vars = env.vars
    for name in _names_holding(vars, TensorValue):
        value = vars[name]
        if value.shape is not None:
            vars[name] = map_dims(value, lambda d: dims.rename(d, head.get))


def _rank_only(value, key):
    """What a demo's argument says of every call: a tensor's rank (its sizes symbols of their own), else nothing."""
    if not isinstance(value, TensorValue) or value.shape is None:
        return None
    return TensorValue(shape=tuple(Sym.var(f"n#{abs(hash((key, i))) % 10 ** 12}") for i in range(len(value.shape))))


def _stable_fresh(name: str, owner) -> Sym:
    """A fresh symbol for ``name`` of ``owner`` (an instance, a call site): the same one every time it is asked
    for, in this analysis and the next (whose reused units still hold it), and unrelated to every other."""
    stem = dims.display_name(name.split("#")[0]) or "n"
    return Sym.var(f"{stem}#{abs(hash((name, owner))) % 10 ** 12}")


def _is_main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides) and \
        any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides)


def _registered(init) -> set:
    """The names ``__init__`` registers: ``self.register_buffer("mask", m)``, ``self.register_parameter(...)``."""
    names = set()
    for node in _own_nodes(init):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("register_buffer", "register_parameter") \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            names.add(node.args[0].value)
    return names


def _classes_in(values) -> set:
    """The names of this file's classes whose instances ``values`` hold (in containers too)."""
    found = set()
    for value in values:
        if isinstance(value, InstanceValue):
            found.add(value.class_name)
        elif isinstance(value, ModuleValue):
            found |= _classes_in([*(value.children or ()), value.element])
        elif isinstance(value, SeqValue):
            found |= _classes_in([*(value.items or ()), value.element])
    return found


def _narrowed_key(attribute: ast.Attribute) -> str:
    """Where a guard's narrowing of ``self.pos`` lives in the env (not a name: no binding can clash with it)."""
    return f"{attribute.value.id}.{attribute.attr}"


def _none_test(test) -> Optional[tuple]:
    """``(name, op)`` of ``name is None`` / ``name is not None``; None for any other test."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None \
            and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        return test.left.id, test.ops[0]
    return None


def _unpacked_shape(target: ast.expr, value: ast.expr, alias=None) -> Optional[Tuple[str, list]]:
    """``(x, [B, T, C])`` for ``B, T, C = x.size()`` / ``x.shape``, and for the size unpacked among other values,
    ``b, n, _, h = *x.shape, self.heads`` (the targets that take the size's items); None for anything else.
    ``alias(name)``: the size a name stands for (``*shape`` after ``shape = x.shape``), or None."""
    if not isinstance(target, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in target.elts):
        return None
    owner = _unpacked_shape_owner(value)
    if owner is not None:
        return owner, list(target.elts)
    if not isinstance(value, (ast.Tuple, ast.List)):
        return None
    stars = [i for i, e in enumerate(value.elts) if isinstance(e, ast.Starred)]
    if len(stars) != 1:
        return None
    at, after = stars[0], len(value.elts) - stars[0] - 1
    starred = value.elts[at].value
    if isinstance(starred, ast.Name) and alias is not None:
        starred = alias(starred.id) or starred
    owner = _unpacked_shape_owner(starred)
    if owner is None or len(target.elts) < at + after:
        return None
    return owner, list(target.elts[at:len(target.elts) - after])


def _unpacked_shape_owner(value: ast.expr) -> Optional[str]:
    """``x`` of ``x.size()`` / ``x.shape`` (what ``B, T, C = ...`` unpacks), when ``x`` is a plain name."""
    if isinstance(value, ast.Call) and not value.args and not value.keywords \
            and isinstance(value.func, ast.Attribute) and value.func.attr == "size":
        value = value.func.value
    elif isinstance(value, ast.Attribute) and value.attr == "shape":
        value = value.value
    else:
        return None
    return value.id if isinstance(value, ast.Name) else None


def _bind_arguments(init, call, inf) -> Optional[tuple]:
    """A class's ``__init__`` arguments by parameter name (defaults filled in), or None when they do not fit
    (PyTorch's classes raise a TypeError then) or cannot be told (a ``*layers`` of unknown items that does not
    all go to ``*args``). ``*args`` is bound under ``"*args"`` (no keyword can take that name): a tuple."""
    args = init.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)][1:]
    given = _spread_positional(call, len(positional), args.vararg is not None)
    if given is None:
        return None
    given, rest = given
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    if len(given) > len(positional) and args.vararg is None:
        return None
    bound = dict(zip(positional, given))
    if args.vararg is not None:
        extra = tuple(given[len(positional):])
        bound["*" + args.vararg.arg] = SeqValue("tuple", extra) if rest is None else _joined_tuple(extra, rest)
    names = set(positional) | {a.arg for a in args.kwonlyargs}
    for name, value in call.kwargs.items():
        if name in bound or (name not in names and args.kwarg is None):
            return None
        bound[name] = value
    for name in names - bound.keys():
        if name in defaults:
            bound[name] = _constant_default(defaults[name])
        else:
            return None  # a required argument missing: the call raises
    return tuple(sorted((n, v) for n, v in bound.items() if n in names or n.startswith("*")))


def _joined_tuple(items: tuple, rest: SeqValue) -> SeqValue:
    """``(*items, *rest)`` where ``rest``'s items are not known one by one: what every item is, and the length when
    there are no others."""
    element = rest.each
    for item in items:
        element = join(element, item)
    return SeqValue("tuple", None, element=element, length=rest.length if not items else None)


def _spread_positional(call, named: int, vararg: bool) -> Optional[tuple]:
    """A call's positional arguments with each ``*items`` of known items spread out, and the last ``*items`` of
    unknown items when all of it goes to ``*args`` (``Parallel(*[block() for _ in range(n)])``): (values, that
    sequence or None); None when they cannot be told, or a ``**mapping`` was not spread (its keys unknown)."""
    nodes = call.node.args
    if call.starred and any(k.arg is None for k in call.node.keywords):
        return None  # (with a `*items` too, whether the mapping was spread cannot be told)
    given: list = []
    for i, (node, value) in enumerate(zip(nodes, call.args)):
        if not isinstance(node, ast.Starred):
            given.append(value)
        elif isinstance(value, SeqValue) and value.items is not None and value.kind != "iterator":
            given.extend(value.items)
        elif vararg and i == len(nodes) - 1 and len(given) >= named and isinstance(value, SeqValue) \
                and value.kind != "iterator":
            return given, value
        else:
            return None
    return given, None


def _constant_default(node: ast.expr):
    """A parameter's default as a value, when it is a literal (anything else may depend on the module's state)."""
    if isinstance(node, ast.Constant):
        return ops.constant(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) in (int, float):
        return ops.constant(-node.operand.value)
    return None


def _dataclass_fields(node: ast.ClassDef, module_scope: Scope) -> Optional[tuple]:
    """A ``@dataclass`` config class's fields and their defaults, in order (None: not a plain dataclass)."""
    if not any(module_scope.qualname(d.func if isinstance(d, ast.Call) else d) == "dataclasses.dataclass"
               for d in node.decorator_list):
        return None
    fields = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            fields.append((stmt.target.id, stmt.value))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in ("__init__", "__post_init__"):
            return None  # its own initialisation: the fields are not simply the arguments
    return tuple(fields)


def _bind_fields(fields: tuple, call, inf) -> Optional[tuple]:
    """A dataclass's field values for this construction: the arguments, else the literal defaults."""
    if call.starred or len(call.args) > len(fields):
        return None
    names = [name for name, _ in fields]
    bound = dict(zip(names, call.args))
    for name, value in call.kwargs.items():
        if name in bound or name not in names:
            return None
        bound[name] = value
    for name, default in fields:
        if name not in bound:
            bound[name] = _constant_default(default) if default is not None else None
    return tuple(bound.items())


# Calls whose positional arguments must be ints (PyTorch raises otherwise): a name used there is an int.
_INT_ARGUMENTS = {"torch.nn.Linear": 2, "torch.nn.Embedding": 2, "torch.nn.Conv1d": 2, "torch.nn.Conv2d": 2,
                  "torch.nn.Conv3d": 2, "torch.nn.ConvTranspose1d": 2, "torch.nn.ConvTranspose2d": 2,
                  "torch.nn.ConvTranspose3d": 2, "torch.nn.BatchNorm1d": 1, "torch.nn.BatchNorm2d": 1,
                  "torch.nn.BatchNorm3d": 1, "torch.nn.GroupNorm": 2, "torch.nn.MultiheadAttention": 2,
                  "torch.nn.LSTM": 2, "torch.nn.GRU": 2, "torch.nn.RNN": 2, "torch.nn.Bilinear": 3}
_INT_SIZE_METHODS = frozenset({"view", "reshape", "expand", "repeat", "new_zeros", "new_ones", "new_empty"})
_INT_SIZE_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.randn", "torch.rand"})
_SIZE_TUPLE_FACTORIES = _INT_SIZE_FACTORIES | {"torch.full"}


def _int_uses(index: ModuleIndex, cache: dict) -> tuple:
    """Where names are used as ints only (``nn.Linear(dim, hidden)``, ``x.view(B, T, n_head, -1)``, ``range(n)``):
    per function, those names; for the whole file, the attribute names so used (``config.n_embd``). Such a name
    is an int wherever it holds one value, so `torch.zeros(n_embd)` is a 1-d tensor, not a shape by name. Also,
    read in the same walk, the module-level names called to build another call's argument (a module built that
    way escapes the call graph). ``cache``: each top-level statement's share, kept between analyses (a reused
    statement is the same node)."""
    names: dict = {}
    attributes: set = set()
    built: set = set()
    for stmt, start, end in index.top_level:
        found = cache.get(stmt)
        if found is None:
            found = cache[stmt] = _int_uses_in(index.nodes[start:end])
        for function, used in found[0].items():
            if function.__class__ is ast.Module:  # (the tree it was found in: a reused statement's is an older one)
                function = index.module_scope.node
            names.setdefault(function, set()).update(used)
        attributes |= found[1]
        built |= found[2]
    return names, frozenset(attributes), frozenset(built)


def _int_uses_in(nodes) -> tuple:
    names: dict = {}
    attributes: set = set()
    built: set = set()
    for node, scope in nodes:
        if node.__class__ is not ast.Call:
            continue
        func = node.func
        count, qualname = 0, None
        if isinstance(func, ast.Name) and func.id == "range" and scope.owner_of("range") is None:
            count = len(node.args)
        elif isinstance(func, ast.Attribute) and func.attr in _INT_SIZE_METHODS:
            count = len(node.args) if len(node.args) >= 2 else 0
        else:
            qualname = scope.qualname(func)
            count = _INT_ARGUMENTS.get(qualname, 0) or (len(node.args) if qualname in _INT_SIZE_FACTORIES
                                                         and len(node.args) >= 2 else 0)
        sized = list(node.args[:count])
        if node.args and isinstance(node.args[0], (ast.Tuple, ast.List)) and (
                isinstance(func, ast.Attribute) and func.attr in _INT_SIZE_METHODS
                or qualname in _SIZE_TUPLE_FACTORIES):
            sized += node.args[0].elts  # `torch.full((dim,), 0.1)`, `x.view((B, -1))`: each a size
        for arg in sized:
            for part in _size_leaves(arg):  # `3 * config.n_embd`, `dim_head * heads`: the sizes in it
                if isinstance(part, ast.Name):
                    names.setdefault(_function_node(scope), set()).add(part.id)
                else:
                    attributes.add(part.attr)
        callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if callee not in _CONTAINERS:  # `PreNorm(dim, Attention(...))`; a Sequential only holds its modules
            # Each as (its class, the callee's name, the argument's position or keyword): it may go to a wrapper.
            wrapper = func.id if isinstance(func, ast.Name) else None
            starred = next((i for i, a in enumerate(node.args) if isinstance(a, ast.Starred)), len(node.args))
            slots = [(a, i if i < starred else None) for i, a in enumerate(node.args)]
            for arg, slot in (*slots, *((k.value, k.arg) for k in node.keywords)):
                inner = arg.value if isinstance(arg, ast.Starred) else arg
                for item in inner.elts if isinstance(inner, (ast.List, ast.Tuple)) else (inner,):
                    if isinstance(item, ast.Call) and isinstance(item.func, ast.Name):
                        owner = scope.owner_of(item.func.id)
                        if owner is not None and owner.parent is None:
                            built.add((item.func.id, wrapper if item is arg else None, slot))
    return names, attributes, built


def _size_leaves(node: ast.expr) -> list:
    """The names and attributes an int expression is made of (through + - * // and unary minus)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        return _size_leaves(node.left) + _size_leaves(node.right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _size_leaves(node.operand)
    return [node] if isinstance(node, (ast.Name, ast.Attribute)) else []


def _function_node(scope: Scope):
    while scope.parent is not None and isinstance(scope.node, _COMPREHENSION_NODES):
        scope = scope.parent
    return scope.node


def _annotated_int(node: ast.ClassDef, name: str) -> bool:
    return any(isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name
               and isinstance(stmt.annotation, ast.Name) and stmt.annotation.id == "int" for stmt in node.body)


def _specializable(node, scope: Scope) -> bool:
    """A def whose call can be analysed by running its body: no generator, no decorator that may change it."""
    if isinstance(node, ast.AsyncFunctionDef):
        return False
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.id if isinstance(target, ast.Name) and scope.parent is not None \
            and scope.parent.owner_of(target.id) is None else (scope.parent or scope).qualname(target)
        if name not in _PLAIN_DECORATORS:
            return False
    return not _is_generator(node)


def _partial_layer(node: ast.Call, call, env: Env) -> Optional[PartialValue]:
    """``partial(nn.Linear, bias = False)``: a layer class or a function of torch with keywords only (positional
    arguments would shift the call's, which ops read by position); anything else is not followed."""
    if call.starred or len(node.args) != 1 or any(k.arg is None for k in node.keywords):
        return None
    layer = env.scope.qualname(node.args[0])
    if layer is not None and layer.startswith("torch.") and layer.rsplit(".", 1)[1][:1].islower() \
            and not layer.endswith("_") and not layer.startswith(("torch.nn.init.", "torch.optim.", "torch.utils.")):
        # `partial(torch.arange, device = device)`: a function of torch, called with these keywords added (an
        # unknown value stays an unknown keyword, as in a direct call).
        return PartialValue(layer, tuple(call.kwargs.items()))
    if layer is None or not layer.startswith("torch.nn.") or layer.count(".") != 2 \
            or layer.rsplit(".", 1)[1] not in LAYERS:
        return None
    if any(value is None for value in call.kwargs.values()):
        return None  # (a keyword whose value is unknown would be dropped: the layer made without it)
    return PartialValue(layer, tuple(call.kwargs.items()))


def _is_property(node, scope: Scope) -> bool:
    """``@property`` (the builtin, the only decorator) on a plain def of ``self`` alone: reading the attribute runs
    it. (A setter of the same name is the def the class keeps, and is not one.)"""
    if not isinstance(node, ast.FunctionDef) or len(node.decorator_list) != 1 or _is_generator(node):
        return False
    decorator, args = node.decorator_list[0], node.args
    return isinstance(decorator, ast.Name) and decorator.id == "property" and scope.parent is not None \
        and scope.parent.owner_of("property") is None and len(args.posonlyargs) + len(args.args) == 1 \
        and not args.vararg and not args.kwonlyargs and not args.kwarg


_NOT_PLAIN_METHODS = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__new__",
                                "__call__", "__init_subclass__", "__class_getitem__", "__get__", "__set__",
                                "__set_name__", "__slots__", "__dict__"})


def _is_plain_class(node: ast.ClassDef, module_scope: Scope) -> bool:
    """``class Agent:`` (or ``(object)``) with no metaclass, no decorator, no ``__slots__`` and no method that
    changes how instances are made, called or read (``__getattr__``, ``__setattr__``, ``__new__``, ``__call__``...):
    its instances are modelled as a module's are, without ``forward``."""
    if node.decorator_list or node.keywords:
        return False
    for base in node.bases:
        if not (isinstance(base, ast.Name) and base.id == "object" and module_scope.owner_of("object") is None):
            return False
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name in _NOT_PLAIN_METHODS:
            return False
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(n, ast.Name) and n.id in _NOT_PLAIN_METHODS for t in targets for n in ast.walk(t)):
            return False
    return True


def _contents_forgotten(value):
    """An attribute's value as every method sees it: a list's items or a dict's entries may change after
    ``__init__`` (``policy.rewards.append(r)`` outside the class, ``del self.rewards[:]`` in another method, or
    through an alias), so a list is a list of items not known, and a dict is not known; a tuple keeps its items,
    each seen so in turn."""
    if isinstance(value, SeqValue) and value.kind == "list":
        return SeqValue("list")
    if isinstance(value, MappingValue):
        return None
    if isinstance(value, SeqValue) and value.items is not None:
        items = tuple(_contents_forgotten(i) for i in value.items)
        return value if items == value.items else SeqValue(value.kind, items, fields=value.fields)
    if isinstance(value, SeqValue) and value.element is not None:
        element = _contents_forgotten(value.element)
        return value if element == value.element else SeqValue(value.kind, element=element, length=value.length,
                                                                fields=value.fields)
    return value


def _placed_anywhere(value):
    """A module's tensor or layer as its methods see it: ``model.to(device)`` / ``.cuda()``, here or by an importer,
    may have moved it since ``__init__`` (the parameters and buffers of its layers with it): its device is not known."""
    if isinstance(value, TensorValue):
        return value if value.device is None else value.with_(device=None)
    if isinstance(value, ModuleValue):
        return with_fields(value, params=tuple((n, _placed_anywhere(p)) for n, p in value.params),
                       children=None if value.children is None else tuple(map(_placed_anywhere, value.children)),
                       element=_placed_anywhere(value.element))
    if isinstance(value, SeqValue) and value.items is not None:
        return with_fields(value, items=tuple(map(_placed_anywhere, value.items)))
    if isinstance(value, EitherValue):
        return EitherValue(tuple(map(_placed_anywhere, value.options)))
    return value


def _is_generator(node) -> bool:
    """A def with a yield of its own. Kept on the node: a def reused by the incremental parse is the same code, and
    every call of it asks again."""
    found = node.__dict__.get("_tw_generator")
    if found is None:
        found = node._tw_generator = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(node))
    return found


def _dumped(node) -> str:
    """``ast.dump(node)``, kept on the node (a class's signature is read again by every unit that builds one)."""
    found = node.__dict__.get("_tw_dump")
    if found is None:
        found = node._tw_dump = ast.dump(node)
    return found


def _checks_rank(module, depth: int = 0) -> bool:
    """A layer whose call raises for all input ranks but one or two (or a container holding one)."""
    if not isinstance(module, ModuleValue) or depth > 4:
        return False
    if module.kind in _CONTAINERS:
        return any(_checks_rank(m, depth + 1) for m in (*(module.children or ()), module.element))
    spec = LAYERS.get(module.kind)
    return ops_einops.is_einops_layer(module) or spec is not None and spec.ranks is not None \
        or module.kind.startswith(("Conv", "MaxPool", "AvgPool", "AdaptiveAvgPool", "AdaptiveMaxPool", "LPPool"))


def _may_return(stmt: ast.stmt) -> bool:
    """A compound statement with a ``return`` somewhere in it (not in a nested def or class)."""
    stack = [stmt]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Return):
            return True
        stack.extend(c for c in ast.iter_child_nodes(current) if not isinstance(c, (
            ast.expr, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    return False


_own_nodes = wrappers.own_nodes  # the nodes of a def's body, without those of nested defs, classes and lambdas


_NOT_A_GRAD_MODE = object()
_GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                       "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})


def _grad_mode(expr: ast.expr, scope: Scope, inf=None):
    """The grad mode a context manager or decorator sets: False, True, None (unknown), or not one."""
    call = expr if isinstance(expr, ast.Call) else None
    qualname = scope.qualname(call.func if call else expr)
    if qualname in _GRAD_OFF:
        if qualname.endswith("inference_mode") and call is not None and call.args:
            flag = call.args[0]
            return not flag.value if isinstance(flag, ast.Constant) and isinstance(flag.value, bool) else None
        return False
    if qualname == "torch.enable_grad":
        return True
    if qualname == "torch.set_grad_enabled" and call is not None and call.args:
        flag = call.args[0]
        return flag.value if isinstance(flag, ast.Constant) and isinstance(flag.value, bool) else None
    return _NOT_A_GRAD_MODE


def _is_static(node) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


def _mentions_symbols(bindings) -> bool:
    """Some argument is unknown, known only by name, or has a size known only by name."""
    found = []

    def spot(dim):
        if isinstance(dim, Sym):
            found.append(dim)
        return dim
    for _, value in bindings:
        if value is None or isinstance(value, (SymbolicValue, EitherValue)):
            return True
        map_dims(value, spot)
        if isinstance(value, ScalarValue) and (value.value is None and value.kind != "none" or isinstance(value.value, Sym)):
            return True
        if isinstance(value, InstanceValue) and (value.bindings is None or _mentions_symbols(value.bindings)):
            return True
    return bool(found)


def _mentions_parameters(value, node) -> bool:
    """The value has a dimension named after one of the function's parameters."""
    params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    symbols = _symbols_in(value)
    return bool(params & symbols) or any("#" in s for s in symbols)


def _symbols_in(value) -> set:
    if isinstance(value, Sym):
        return set(value.symbols)
    if isinstance(value, TensorValue) or isinstance(value, NdarrayValue):
        return set().union(*(_symbols_in(d) for d in (*(value.shape or ()), *(getattr(value, "strides", None) or ()))))
    if isinstance(value, ScalarValue):
        return _symbols_in(value.value)
    if isinstance(value, SeqValue) and value.items:
        return set().union(*(_symbols_in(i) for i in value.items))
    return set()


def _spliced(call, node: ast.Call):
    """``torch.zeros(n, *x.shape)``, ``x.view(B, *rest)``: a starred argument of known items is those items, as Python
    passes them (only for torch's functions and tensor methods, which never read the call's nodes by position)."""
    if not call.starred or any(k.arg is None for k in node.keywords):
        return call
    args = []
    for value, arg in zip(call.args, node.args):
        if not isinstance(arg, ast.Starred):
            args.append(value)
        elif isinstance(value, SeqValue) and value.items is not None and len(value.items) <= 64:
            args.extend(value.items)
        else:
            return call
    return ops.Call(call.node, args, call.kwargs, False, call.env)
