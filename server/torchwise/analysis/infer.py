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
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from torchwise.analysis import ops
from torchwise.analysis.dims import Sym
from torchwise.analysis.dtypes import DType
from torchwise.analysis.scopes import ModuleIndex, Scope, ScopeKind
from torchwise.analysis.values import (
    InstanceValue, ModuleValue, NdarrayValue, ScalarValue, SeqValue, TensorValue, join,
)

_LIST_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                            "__setitem__", "__delitem__"})
_PURE_BUILTINS = frozenset({"len", "range", "print", "int", "float", "bool", "str", "isinstance", "enumerate", "zip",
                            "sum", "max", "min", "abs", "round", "sorted", "list", "tuple", "repr", "type"})
_DEFAULT_SETTERS = frozenset({"set_default_dtype", "set_default_tensor_type", "set_default_device"})
_LOOP_PASSES = 3  # a loop body is re-run until its facts are stable, at most this often
_MAX_CALL_SITES = 64


@dataclass
class FunctionInfo:
    node: ast.FunctionDef
    scope: Scope
    call_sites: list = field(default_factory=list)  # [(positional values, keyword values)]
    opaque: bool = False  # used other than by a direct call: its parameters are unknowable
    summary: object = None  # the value it returns, when every return agrees
    analysed: bool = False


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
    attrs: dict = field(default_factory=dict)  # self.<name> facts set once, in __init__


class Env:
    """Names to values in one scope, flow-sensitive."""

    __slots__ = ("scope", "vars", "self_class")

    def __init__(self, scope: Scope, vars: Optional[dict] = None, self_class: Optional[str] = None):
        self.scope = scope
        self.vars = vars if vars is not None else {}
        self.self_class = self_class

    def copy(self) -> "Env":
        return Env(self.scope, dict(self.vars), self.self_class)

    def joined(self, other: "Env") -> "Env":
        keys = self.vars.keys() | other.vars.keys()
        merged = {k: join(self.vars.get(k), other.vars.get(k)) for k in keys if k != "<self>"}
        mine, theirs = self.vars.get("<self>") or {}, other.vars.get("<self>") or {}
        if mine or theirs:  # self.<attr> facts: joined attribute by attribute
            merged["<self>"] = {k: join(mine.get(k), theirs.get(k)) for k in mine.keys() | theirs.keys()}
        return Env(self.scope, merged, self.self_class)


class Inference:
    def __init__(self, index: ModuleIndex, previous: "Inference | None" = None):
        """``previous``: the last inference of the same document, whose units may be reused."""
        self.index = index
        self.values: dict[ast.AST, object] = {}
        self.functions: dict[str, FunctionInfo] = {}
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
        self._bindings = _bindings_signature(index.module_scope)
        # Units of the previous analysis; none when module-level names mean something else now.
        self._previous_units = previous._units if previous is not None and previous._bindings == self._bindings \
            else {}
        self._units: dict = {}  # unit node -> _UnitRecord
        self._reads: Optional[list] = None  # while a unit runs: what it reads from outside itself
        self._calls: Optional[list] = None
        self._unit_class: Optional[str] = None  # the class being analysed as a unit
        self.reused: set = set()  # units whose previous analysis was reused: their facts are the same objects

    # -- driver ---------------------------------------------------------------------------
    def run(self) -> "Inference":
        tree = self.index.module_scope.node
        self._collect_definitions(tree)
        self._scan_global_defaults()
        self.module_env = Env(self.index.module_scope)
        self._exec_block(tree.body, self.module_env)
        module_end = self.module_env
        self._in_function = True
        float_default = self.default_float if not self._default_changed_anywhere else None
        # Each unit sets the defaults it starts from; what holds after the module's code must not depend on
        # which unit ran last (nor on whether it was reused).
        module_defaults = (self.default_float, self.default_float_why, self.default_device, self.grad_enabled)
        for info in self.classes.values():
            self._unit(info, float_default, None)
        for info in self.functions.values():
            self._unit(info, float_default, self._call_sites_for(info))
        self._previous_units = {}  # what was not reused is garbage now
        self.default_float, self.default_float_why, self.default_device, self.grad_enabled = module_defaults
        self._in_function = False
        if any(f.summary is not None for f in self.functions.values()):
            # Module code that calls this file's functions gets their summaries on a second pass.
            self._reset_defaults()
            self.module_env = Env(self.index.module_scope)
            self._exec_block(tree.body, self.module_env)
        else:
            self.module_env = module_end
        return self

    def _scan_global_defaults(self) -> None:
        """``torch.set_default_dtype``/``set_default_device`` change what factories make.

        At module level they are followed in order; anywhere else (a function may run at any
        time) they make the default unknown everywhere.
        """
        for node, scope in self.index.nodes:
            if node.__class__ is not ast.Call:
                continue
            func = node.func
            if func.__class__ is ast.Attribute and func.attr not in _DEFAULT_SETTERS:
                continue  # the common case, decided without resolving the name
            qualname = scope.qualname(func)
            if qualname in ("torch.set_default_dtype", "torch.set_default_tensor_type"):
                self._default_changed_anywhere = True
                if scope is not self.index.module_scope:
                    self._default_changed_in_function = True
            elif qualname == "torch.set_default_device":
                self._device_changed = True
        self._reset_defaults()

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

    # -- definitions ----------------------------------------------------------------------
    def _collect_definitions(self, tree: ast.Module) -> None:
        module_scope = self.index.module_scope
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if len(module_scope.bindings.get(stmt.name, ())) == 1:
                    self.functions[stmt.name] = FunctionInfo(stmt, self.index.scope_of_node[stmt])
            elif isinstance(stmt, ast.ClassDef) and len(module_scope.bindings.get(stmt.name, ())) == 1:
                is_module = any(module_scope.qualname(base) in ops.MODULE_BASES for base in stmt.bases)
                self.classes[stmt.name] = ClassInfo(stmt, self.index.scope_of_node[stmt], is_module)
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

    # -- units --------------------------------------------------------------------------
    def _unit(self, info, float_default, sites) -> None:
        """Analyse a top-level class or function, or reuse its previous analysis when that still holds."""
        inputs = (float_default, self._device_changed, sites)
        record = self._previous_units.get(info.node)
        if record is not None and _same(record.inputs, inputs) and all(
                _same(self._external(kind, key), answer) for kind, key, answer in record.reads):
            self.reused.add(info.node)
            for name, starred, args, kwargs in record.calls:  # (analysing it made these calls itself)
                self._note_call(self.functions[name], starred, args, kwargs)
        else:
            record = self._record_unit(info, float_default, sites, inputs)
        self._units[info.node] = record
        self.values.update(record.values)
        self.grad_not_on |= record.grad_not_on
        if isinstance(info, ClassInfo):
            info.attrs = record.result
        else:
            info.summary, info.analysed = record.result, True

    def _record_unit(self, info, float_default, sites, inputs) -> _UnitRecord:
        values, grad_not_on = self.values, self.grad_not_on
        self.values, self.grad_not_on, self._reads, self._calls = {}, set(), [], []
        self._unit_class = info.node.name if isinstance(info, ClassInfo) else None
        try:
            if isinstance(info, ClassInfo):
                self._analyse_class(info, float_default)
                result = info.attrs
            else:
                self._analyse_function(info, float_default, sites)
                result = info.summary
            return _UnitRecord(inputs, self._reads, self.values, self.grad_not_on, self._calls, result)
        finally:
            self.values, self.grad_not_on = values, grad_not_on
            self._reads = self._calls = self._unit_class = None

    def _external(self, kind: str, key: str):
        """What a unit learns from outside itself; recorded while a unit runs."""
        if kind == "env":  # a module-level name bound once
            return self.module_env.vars.get(key)
        if kind == "function":
            info = self.functions.get(key)
            return None if info is None else (info.analysed, info.summary if info.analysed else None)
        if kind == "class":  # an nn.Module subclass or not
            info = self.classes.get(key)
            return None if info is None else info.is_module
        if kind == "attributes":  # what `__init__` sets on its instances
            info = self.classes.get(key)
            return None if info is None else info.attrs
        raise ValueError(kind)

    def _read(self, kind: str, key: str):
        answer = self._external(kind, key)
        if self._reads is not None:
            self._reads.append((kind, key, answer))
        return answer

    def _note_call(self, info: FunctionInfo, starred: bool, args: list, kwargs: dict) -> None:
        """A direct call of one of this file's functions: its arguments may become its parameters' facts."""
        if starred:
            info.opaque = True
        elif len(info.call_sites) <= _MAX_CALL_SITES:
            info.call_sites.append((args, kwargs))
        if self._calls is not None:
            self._calls.append((info.node.name, starred, args, kwargs))

    def _call_sites_for(self, info: FunctionInfo):
        """The call sites a function's parameters are read from; None when some are unseen or unknowable."""
        if info.opaque or not info.call_sites or len(info.call_sites) > _MAX_CALL_SITES:
            return None
        # A copy: the module's second pass adds its calls again later, and the record must not change.
        return None if self._has_unseen_call_sites(info) else list(info.call_sites)

    def _analyse_class(self, info: ClassInfo, float_default) -> None:
        methods = [s for s in info.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        init = next((m for m in methods if m.name == "__init__"), None)
        elsewhere = {attr for node, counts in self._stores_within.get(info.node, ()) if node is not init
                     for attr in counts}
        uses_setattr = info.node in self._setattr_within
        if init is not None:
            env = self._function_env(init, self.index.scope_of_node[init], info.node.name, float_default, None)
            self._exec_block(init.body, env)
            counts = self._self_stores.get(init, (None, {}))[1]
            if not uses_setattr:
                info.attrs = {name: value for name, value in (env.vars.get("<self>") or {}).items()
                              if counts.get(name) == 1 and name not in elsewhere}
        for method in methods:
            if method is init:
                continue
            env = self._function_env(method, self.index.scope_of_node[method], info.node.name, float_default, None)
            self._exec_function_body(method, env)

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
            # a method of a top-level class (analysed before the functions), not a nested def
            return len(chain) == 2 and top.node.name in self.classes
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
            result = join(result, value)
        return result

    def _function_env(self, node, scope: Scope, class_name, float_default, sites) -> Env:
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
                env.vars[arg.arg] = InstanceValue(class_name)
                continue
            env.vars[arg.arg] = self._parameter_value(arg, default, env, sites, i - (class_name is not None), arg.arg)
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            env.vars[arg.arg] = self._parameter_value(arg, default, env, sites, None, arg.arg)
        for star in (args.vararg, args.kwarg):
            if star is not None:
                env.vars[star.arg] = None
        return env

    def _parameter_value(self, arg: ast.arg, default, env: Env, sites, position, name):
        if arg.annotation is not None:
            # Annotations are evaluated where the function is defined (as the index resolves them).
            value = ops.from_annotation(self, arg.annotation, env.scope.parent or env.scope, name)
            if value is not None:
                return value
        if sites:
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
                result = join(result, value)
            return result
        return None

    # -- statements ----------------------------------------------------------------------
    def _exec_block(self, body: Iterable[ast.stmt], env: Env) -> None:
        for stmt in body:
            if self.grad_enabled is not True:
                self.grad_not_on.add(stmt)
            handler = self._STATEMENTS.get(type(stmt))
            if handler is not None:
                handler(self, stmt, env)
            else:
                for child in ast.iter_child_nodes(stmt):
                    if isinstance(child, ast.expr):
                        self.eval(child, env)
            if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
                return

    def _assign(self, stmt: ast.Assign, env: Env) -> None:
        value = self.eval(stmt.value, env)
        for target in stmt.targets:
            self._bind(target, value, env)

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
            env.vars[target.id] = value
            if value is not None:
                self.values[target] = value
            else:
                self.values.pop(target, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = ops.unpack(self, value, len(target.elts)) if not any(
                isinstance(e, ast.Starred) for e in target.elts) else None
            for i, elt in enumerate(target.elts):
                self._bind(elt.value if isinstance(elt, ast.Starred) else elt,
                           items[i] if items is not None else None, env)
        elif isinstance(target, ast.Attribute):
            receiver = self.eval(target.value, env)
            if isinstance(receiver, InstanceValue) and isinstance(target.value, ast.Name):
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
        self.eval(stmt.test, env)
        if isinstance(stmt.test, ast.Constant) and isinstance(stmt.test.value, bool):
            # `if True:` / `if False:` take one branch only (the other is dead code).
            self._exec_block(stmt.body if stmt.test.value else stmt.orelse, env)
            return
        body, orelse = env.copy(), env.copy()
        self._exec_block(stmt.body, body)
        self._exec_block(stmt.orelse, orelse)
        ends_body, ends_else = _always_leaves(stmt.body), _always_leaves(stmt.orelse)
        if ends_body and not ends_else:
            merged = orelse
        elif ends_else and not ends_body:
            merged = body
        else:
            merged = body.joined(orelse)
        env.vars = merged.vars

    def _loop(self, stmt, env: Env) -> None:
        is_for = isinstance(stmt, (ast.For, ast.AsyncFor))
        if is_for:
            iterable = self.eval(stmt.iter, env)
        else:
            self.eval(stmt.test, env)
        state = env.copy()
        for _ in range(_LOOP_PASSES):
            body = state.copy()
            if is_for:
                self._bind(stmt.target, ops.iteration_item(self, stmt.iter, iterable, body), body)
            self._exec_block(stmt.body, body)
            if not is_for:
                self.eval(stmt.test, body)
            widened = state.joined(body)
            if widened.vars == state.vars:
                break
            state = widened
        else:
            # Not stable: forget everything the loop assigns, then record values once more.
            for name in _names_assigned(stmt.body) | (_names_assigned([stmt]) if is_for else set()):
                state.vars[name] = None
            body = state.copy()
            if is_for:
                self._bind(stmt.target, ops.iteration_item(self, stmt.iter, iterable, body), body)
            self._exec_block(stmt.body, body)
        self._exec_block(stmt.orelse, state)
        # The loop may run zero times: what holds after it is the join with what held before.
        env.vars = state.vars

    def _with(self, stmt, env: Env) -> None:
        saved = self.grad_enabled
        for item in stmt.items:
            self.eval(item.context_expr, env)
            mode = _grad_mode(item.context_expr, env.scope, self)
            if mode is not _NOT_A_GRAD_MODE:
                self.grad_enabled = mode
            if item.optional_vars is not None:
                self._bind(item.optional_vars, None, env)
        self._exec_block(stmt.body, env)
        self.grad_enabled = saved

    def _try(self, stmt, env: Env) -> None:
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
        items = tuple(self.eval(e, env) for e in node.elts)
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return SeqValue("list" if isinstance(node, ast.List) else "tuple")
        return SeqValue("list" if isinstance(node, ast.List) else "tuple", items)

    def _attribute(self, node: ast.Attribute, env: Env):
        qualname = env.scope.qualname(node)
        if qualname is not None:
            return ops.qualified_constant(qualname)
        receiver = self.eval(node.value, env)
        if isinstance(receiver, InstanceValue):
            attributes = env.vars.get("<self>") or {}
            if node.value.__class__ is ast.Name and node.attr in attributes:
                return attributes[node.attr]
            if receiver.class_name == self._unit_class:
                return self.classes[receiver.class_name].attrs.get(node.attr)  # set by this very unit
            attributes = self._read("attributes", receiver.class_name)
            return attributes.get(node.attr) if attributes is not None else None
        return ops.attribute(self, node, receiver)

    def _subscript(self, node: ast.Subscript, env: Env):
        receiver = self.eval(node.value, env)
        index = self.eval(node.slice, env)
        return ops.subscript(self, node, receiver, index, env)

    def _slice(self, node: ast.Slice, env: Env):
        for part in (node.lower, node.upper, node.step):
            self.eval(part, env)
        return None

    def _bin_op(self, node: ast.BinOp, env: Env):
        left = self.eval(node.left, env)
        right = self.eval(node.right, env)
        return ops.binary(self, node, node.op, left, right)

    def _unary_op(self, node: ast.UnaryOp, env: Env):
        operand = self.eval(node.operand, env)
        return ops.unary(self, node, operand)

    def _compare(self, node: ast.Compare, env: Env):
        values = [self.eval(node.left, env)] + [self.eval(c, env) for c in node.comparators]
        return ops.compare(self, node, values)

    def _bool_op(self, node: ast.BoolOp, env: Env):
        for value in node.values:
            self.eval(value, env)
        return None

    def _if_exp(self, node: ast.IfExp, env: Env):
        self.eval(node.test, env)
        return join(self.eval(node.body, env), self.eval(node.orelse, env))

    def _named_expr(self, node: ast.NamedExpr, env: Env):
        value = self.eval(node.value, env)
        self._bind(node.target, value, env)
        return value

    def _comprehension(self, node, env: Env):
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
        if isinstance(node, ast.ListComp):
            return ops.list_of_unknown_length(element)
        return None

    def _lambda(self, node: ast.Lambda, env: Env):
        return None

    def _call(self, node: ast.Call, env: Env):
        func = node.func
        args = [self.eval(a.value if isinstance(a, ast.Starred) else a, env) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords if k.arg is not None}
        for k in node.keywords:
            if k.arg is None:
                self.eval(k.value, env)
        starred = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        call = ops.Call(node, args, kwargs, starred, env)
        qualname = env.scope.qualname(func)
        if qualname is not None:
            return ops.call_qualified(self, qualname, call)
        if isinstance(func, ast.Attribute):
            receiver = self.eval(func.value, env)
            result = ops.call_method(self, func.attr, receiver, call)
            if isinstance(func.value, ast.Name) and func.attr in ops.INPLACE_SHAPE_METHODS:
                self._forget_shapes(env, func.value.id, result)
            if isinstance(receiver, SeqValue) and func.attr in _LIST_MUTATORS:
                self._forget_list_items(env)
            elif isinstance(receiver, ModuleValue) and isinstance(result, ModuleValue) \
                    and func.attr in ops.MODULE_CONVERSIONS and isinstance(func.value, ast.Name):
                # `model.double()` converts the module in place: later reads see the new parameters.
                self._bind(func.value, result, env)
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

    def _forget_list_items(self, env: Env) -> None:
        """A list changed in place (``rows.append(t)``): any name may alias it, so forget every list's items."""
        for key, value in list(env.vars.items()):
            if isinstance(value, SeqValue) and value.kind == "list" and value.items is not None:
                env.vars[key] = SeqValue("list")

    def _forget_passed_lists(self, call, env: Env) -> None:
        """An unknown function may change a list it is given."""
        if any(isinstance(v, SeqValue) and v.kind == "list" for v in (*call.args, *call.kwargs.values())):
            self._forget_list_items(env)

    def _call_name(self, name: str, call, env: Env):
        owner = env.scope.owner_of(name)
        if owner is None:
            return ops.call_builtin(self, name, call)
        if owner is self.index.module_scope:
            known = self._read("function", name)
            if known is not None:
                self._note_call(self.functions[name], call.starred, list(call.args), dict(call.kwargs))
                return known[1]
            is_module = self._read("class", name)
            if is_module is not None:
                return InstanceValue(name) if is_module else None
        callee = self._lookup(name, env)
        if callee is not None:
            self.values[call.node.func] = callee
        return ops.call_value(self, callee, call)

    def _forget_shapes(self, env: Env, name: str, result) -> None:
        """An in-place shape change (``x.unsqueeze_(0)``) reaches every alias of ``x``: forget all shapes."""
        for key, value in list(env.vars.items()):
            if isinstance(value, TensorValue):
                env.vars[key] = value.with_(shape=None, strides=None)
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


_COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _same(a, b) -> bool:
    """Equal, and equal in every detail shown: 0.0 == -0.0, but hover tells them apart."""
    return a == b and (a is b or repr(a) == repr(b))


def _bindings_signature(module: Scope) -> dict:
    """What each module-level name is bound to, by kind: units are reused only while this holds."""
    return {name: tuple((b.kind, b.qualname, type(b.node)) for b in bindings)
            for name, bindings in module.bindings.items()}


def _top_level(scope: Scope):
    """The node of the top-level statement (function, class) a scope lies in; the module for the module."""
    while scope.parent is not None and scope.parent.parent is not None:
        scope = scope.parent
    return scope.node


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
