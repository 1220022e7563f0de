"""Scopes and name bindings of one module, built in a single pass over ``ast``.

This replaces libcst's ScopeProvider/QualifiedNameProvider on the keystroke path
(they run at ~800 lines/s; this pass is part of a 20k+ lines/s analysis).

Name resolution is deliberately conservative: a name resolves to an import only
when *every* binding of it in the scope that owns it is that same import.
``import torch as T`` makes ``T`` mean ``torch``; ``torch = make()`` anywhere in a
function makes ``torch`` unknown in that function; names that are not bound at
all (``Tensor`` after ``from torch import *``) are unknown.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from operator import attrgetter, is_, methodcaller
from typing import Iterator


class BindingKind(enum.Enum):
    IMPORT = "import"  # qualname says what
    ASSIGN = "assign"  # `name = value`: value is the expression
    OTHER = "other"  # parameters, loop targets, unpacking, augmented assignment, del...


@dataclass(frozen=True)
class Binding:
    kind: BindingKind
    node: ast.AST
    qualname: str | None = None
    value: ast.expr | None = None


class ScopeKind(enum.Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"  # def, lambda and comprehensions


@dataclass(eq=False)
class Scope:
    kind: ScopeKind
    parent: Scope | None
    node: ast.AST
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    nonlocal_names: set[str] = field(default_factory=set)
    qualnames: dict = field(default_factory=dict)  # module scope only: expression node -> qualified name
    root: "Scope | None" = None
    _imported: "dict | None" = None  # qualified name -> the names here bound only by importing it
    _import_memo: "dict | None" = None  # name -> import_of(name) for the names this scope owns

    @property
    def module(self) -> Scope:
        if self.root is None:
            scope = self
            while scope.parent is not None:
                scope = scope.parent
            self.root = scope
        return self.root

    def owner_of(self, name: str) -> Scope | None:
        """The scope whose binding of ``name`` is visible here (Python's LEGB rule)."""
        if name in self.global_names:
            return self.module if name in self.module.bindings else None
        if name in self.bindings and name not in self.nonlocal_names:
            return self
        scope = self.parent
        while scope is not None:
            # Class bodies are not enclosing scopes for the functions inside them.
            if scope.kind is not ScopeKind.CLASS and name in scope.bindings:
                return scope
            scope = scope.parent
        return None

    def bindings_of(self, name: str) -> list[Binding]:
        owner = self.owner_of(name)
        return owner.bindings[name] if owner is not None else []

    def import_of(self, name: str) -> str | None:
        """Qualified name ``name`` imports, when every binding agrees. Remembered by the owning scope (asked once
        the index is built, when bindings no longer change): a long file imports ``torch`` hundreds of times, and
        every qualified name read them all."""
        owner = self.owner_of(name)
        if owner is None:
            return None
        memo = owner._import_memo
        if memo is None:
            memo = owner._import_memo = {}
        elif name in memo:
            return memo[name]
        bindings = owner.bindings[name]
        first = bindings[0].qualname if bindings else None
        if first is None or any(b.kind is not BindingKind.IMPORT or b.qualname != first for b in bindings):
            first = None
        memo[name] = first
        return first

    def qualname(self, expr: ast.expr) -> str | None:
        """``T.cuda.FloatTensor`` -> ``torch.cuda.FloatTensor`` under ``import torch as T``."""
        cache = self.module.qualnames
        if expr in cache:
            return cache[expr]
        result = cache[expr] = self._qualname(expr)
        return result

    def _qualname(self, expr: ast.expr) -> str | None:
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        base = self.import_of(expr.id)
        if base is None:
            return None
        parts.append(base)
        return ".".join(reversed(parts))

    def single_value(self, name: str) -> tuple[ast.expr, Scope] | None:
        """The expression a name is bound to, when it is bound exactly once by ``name = value``."""
        owner = self.owner_of(name)
        if owner is None:
            return None
        bindings = owner.bindings[name]
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN:
            return None
        return bindings[0].value, owner

    def aliases_of(self, qualname: str) -> Iterator[str]:
        """Names visible here that mean ``qualname`` (``T`` for torch under ``import torch as T``)."""
        seen: set[str] = set()
        scope: Scope | None = self
        while scope is not None:
            for name in scope._imports().get(qualname, ()):
                if name not in seen:
                    seen.add(name)
                    if self.import_of(name) == qualname:  # not shadowed in between
                        yield name
            scope = scope.parent

    def _imports(self) -> dict:
        if self._imported is None:
            self._imported = {}
            for name, bindings in self.bindings.items():
                first = bindings[0].qualname
                if first is not None and all(b.kind is BindingKind.IMPORT and b.qualname == first for b in bindings):
                    self._imported.setdefault(first, []).append(name)
        return self._imported


class ModuleIndex:
    """Every scope of a module, and the nodes rules ask for, each with its scope.

    Put together from one :class:`_Part` per top-level statement. ``previous``, the index of the same document's
    last analysis, lends the parts of the statements the incremental parse reused (the very same nodes) and its
    module scope, whose bindings are made anew from the parts: only the statements an edit touched are walked
    again (a 200k-line file took 1.4 s per edit to index anew). ``previous`` is left with this index's module
    bindings, as the reused statements are left with this text's line numbers."""

    def __init__(self, tree: ast.Module, wanted: tuple[type[ast.AST], ...] = (ast.Call,),
                 previous: "ModuleIndex | None" = None):
        reuse = previous is not None and previous.wanted == wanted
        lent = previous.parts if reuse else {}
        self.module_scope = module = previous.module_scope if reuse else Scope(ScopeKind.MODULE, None, tree)
        old_tree, module.node = module.node, tree
        self.wanted = wanted
        wanted_types = frozenset(wanted)
        self.parts: dict[ast.stmt, _Part] = {stmt: lent.get(stmt) or _Part(stmt, module, wanted_types)
                                              for stmt in tree.body}
        # What changed: the parts of statements the edit touched, in and out. The tables that do not keep an
        # order are the last index's, patched with those; the others are laid out again in statement order.
        added = [part for stmt, part in self.parts.items() if lent.get(stmt) is not part]
        dropped = [part for stmt, part in lent.items() if self.parts.get(stmt) is not part]
        self.scope_of_node: dict[ast.AST, Scope] = _patched(previous.scope_of_node if reuse else {tree: module},
                                                            dropped, added, "scopes")
        self.scope_of_node.pop(old_tree, None)
        self.scope_of_node[tree] = module
        self.method_called_on: dict[ast.Call, str] = _patched(  # `f(x).float()`: the inner call -> "float"
            previous.method_called_on if reuse else {}, dropped, added, "method_called_on")
        self.name_loads: dict[str, int] = _counted(  # loads of a name anywhere, other than as a call's callee
            previous.name_loads if reuse else {}, dropped, added, "name_loads")
        self.callee_names: dict[str | None, int] = _counted(  # calls by the callee's last name
            previous.callee_names if reuse else {}, dropped, added, "callee_names")
        self.name_stores: dict[str, int] = _counted(  # stores of a name (as a name, not `x[i] =`) anywhere
            previous.name_stores if reuse else {}, dropped, added, "name_stores")
        # The parts an edit brought in and took out (every part, when nothing was lent).
        self.added, self.dropped = added, dropped
        self.lent = reuse  # the parts of reused statements are the last index's
        self.nodes: list[tuple[ast.AST, Scope]] = []
        self.top_level: list[tuple[ast.stmt, int, int]] = []  # each top-level statement, its slice of ``nodes``
        self.calls_by_name: dict[str, list] = {}  # `f(...)` calls by callee name, with their scope
        self.attribute_stores: list[tuple[Scope, str, str]] = []  # `base.attr = ...`: (scope, base, attr)
        self._memos: list | None = None  # each part's memo, in statement order (``per_statement``)
        self._lay_out(previous if reuse else None, dropped, added)

    def per_statement(self, key: str, compute, again=()) -> list:
        """``compute(stmt)`` for each top-level statement, in order, remembered with its part under ``key``: worked
        out again only for a statement the edit touched, or one in ``again``."""
        parts = self.parts
        if again is parts:  # (worked out again everywhere)
            for stmt, part in parts.items():
                part.memo[key] = compute(stmt)
        else:
            for stmt in again:
                part = parts.get(stmt)
                if part is not None:
                    part.memo[key] = compute(stmt)
        # The rest gathered at C speed: a loop over the parts of a 200k-line file cost ~10 ms per key and edit.
        memos = self._memos
        if memos is None:
            memos = self._memos = list(map(_MEMO, parts.values()))
        found = list(map(methodcaller("get", key, _UNKNOWN), memos))
        missing = list(compress(count(), map(is_, found, repeat(_UNKNOWN))))  # statements the edit touched
        if missing:
            statements = list(parts)
            for i in missing:
                found[i] = memos[i][key] = compute(statements[i])
        return found

    def _lay_out(self, previous: "ModuleIndex | None", dropped: list, added: list) -> None:
        """The tables in the module's order, in one pass over the statements: ``nodes`` (a run of reused
        statements copied from the last index's at once) and ``top_level``; the module's bindings (names in
        order of first binding); the calls by name (the names the edit touched laid out again, the others the
        last index's lists); the stores."""
        module = self.module_scope
        module.bindings, module.global_names = {}, set()
        module.qualnames, module._imported, module._import_memo = {}, None, None  # they read the bindings
        old_nodes = previous.nodes if previous is not None else []
        old_slices = {stmt: start for stmt, start, _ in previous.top_level} if previous is not None else {}
        touched = {name for part in dropped + added for name in part.calls_by_name}
        calls = self.calls_by_name
        if previous is not None:
            calls.update((name, found) for name, found in previous.calls_by_name.items() if name not in touched)
        nodes, top_level, bindings, stores = self.nodes, self.top_level, module.bindings, self.attribute_stores
        run_start = run_end = -1  # the run of the last index's nodes not copied yet
        offset = 0
        for stmt, part in self.parts.items():
            count = len(part.nodes)
            start = old_slices.get(stmt, -1)  # a statement of the last index: its part is lent
            if start >= 0 and start == run_end:
                run_end += count
            else:
                if run_end > run_start:
                    nodes.extend(old_nodes[run_start:run_end])
                if start >= 0:
                    run_start, run_end = start, start + count
                else:
                    run_start = run_end = -1
                    nodes.extend(part.nodes)
            top_level.append((stmt, offset, offset + count))
            offset += count
            for name, found in part.bindings.items():
                bindings.setdefault(name, []).extend(found)
            if part.global_names:
                module.global_names |= part.global_names
            if part.attribute_stores:
                stores.extend(part.attribute_stores)
            if touched and not touched.isdisjoint(part.calls_by_name):
                for name, found in part.calls_by_name.items():
                    if name in touched:
                        calls.setdefault(name, []).extend(found)
        if run_end > run_start:
            nodes.extend(old_nodes[run_start:run_end])


_MEMO = attrgetter("memo")
_UNKNOWN = object()  # (no value under a key of a part's memo)


def _patched(old: dict, dropped: list, added: list, table: str) -> dict:
    """``old`` less the entries of the parts ``dropped``, plus those of the parts ``added``."""
    new = dict(old)
    for part in dropped:
        for key, _ in _entries(getattr(part, table)):
            new.pop(key, None)
    for part in added:
        new.update(getattr(part, table))
    return new


def _entries(table):
    return table.items() if isinstance(table, dict) else table


def _counted(old: dict, dropped: list, added: list, table: str) -> dict:
    """Counts: ``old`` less those of the parts ``dropped``, plus those of the parts ``added`` (no zeros)."""
    new = dict(old)
    for part in dropped:
        for name, count in getattr(part, table).items():
            left = new[name] - count
            if left:
                new[name] = left
            else:
                del new[name]
    for part in added:
        for name, count in getattr(part, table).items():
            new[name] = new.get(name, 0) + count
    return new


class _Part:
    """What one top-level statement adds to a module's index: its nodes, the scopes it opens, the bindings it
    makes in the module scope, its name loads, calls and stores. Nothing in it depends on the other statements,
    so it holds for as long as the statement is reused."""

    def __init__(self, stmt: ast.stmt, module: Scope, wanted_types: frozenset):
        self._wanted_types = wanted_types
        self.nodes: list[tuple[ast.AST, Scope]] = []
        self.scopes: list[tuple[ast.AST, Scope]] = []
        self.name_loads: dict[str, int] = {}
        self.name_stores: dict[str, int] = {}
        self.calls_by_name: dict[str, list] = {}
        self.attribute_stores: list[tuple[Scope, str, str]] = []
        self.method_called_on: dict[ast.Call, str] = {}
        self.callee_names: dict[str | None, int] = {}  # calls by the callee's last name (None: neither a name
        # nor an attribute)
        self._mentioned: dict[Scope, set] = {}  # while walked: the names each scope's code mentions
        self.unit = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        self.memo: dict = {}  # what rules derive from the statement alone, kept with it (``Context.per_statement``)
        # While the statement is walked, the module scope collects the bindings it makes there, and only those.
        kept = module.bindings, module.global_names
        module.bindings, module.global_names = self.bindings, self.global_names = {}, set()
        try:
            self._visit(stmt, module)
            # The names its code mentions that mean something outside it: bound in the module, or nowhere here.
            self.names = frozenset(name for scope, names in self._mentioned.items() for name in names
                                   if _escapes(scope, name))
        finally:
            module.bindings, module.global_names = kept
        del self._mentioned
        self.imports = any(b.kind is BindingKind.IMPORT for found in self.bindings.values() for b in found)

    def _mention(self, scope: Scope, name: str) -> None:
        names = self._mentioned.get(scope)
        if names is None:
            names = self._mentioned[scope] = set()
        names.add(name)

    # -- bindings -----------------------------------------------------------------
    def _bind(self, scope: Scope, name: str, binding: Binding) -> None:
        if name in scope.global_names:
            scope = scope.module
        scope.bindings.setdefault(name, []).append(binding)

    def _bind_target(self, scope: Scope, target: ast.expr, node: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            kind = BindingKind.ASSIGN if value is not None else BindingKind.OTHER
            self._bind(scope, target.id, Binding(kind, node, value=value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind_target(scope, elt, node, None)
        elif isinstance(target, ast.Starred):
            self._bind_target(scope, target.value, node, None)
        # Attribute and Subscript targets bind no name.

    # -- walking ------------------------------------------------------------------
    def _visit_body(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self._visit(stmt, scope)

    def _visit_all(self, nodes, scope: Scope) -> None:
        for node in nodes:
            if node is not None:
                self._visit(node, scope)

    def _new_scope(self, kind: ScopeKind, parent: Scope, node: ast.AST) -> Scope:
        scope = Scope(kind, parent, node)
        self.scopes.append((node, scope))
        return scope

    def _visit_arguments(self, args: ast.arguments, outer: Scope, inner: Scope, annotations: bool) -> None:
        self._visit_all(args.defaults, outer)
        self._visit_all(args.kw_defaults, outer)
        for arg in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
            if arg is None:
                continue
            if annotations and arg.annotation is not None:
                self._visit(arg.annotation, outer)
            self._bind(inner, arg.arg, Binding(BindingKind.OTHER, arg))

    def _visit(self, node: ast.AST, scope: Scope) -> None:
        # The hottest loop of the analysis: one dict lookup per node type, children read
        # straight from the fields that can hold nodes (ast.iter_child_nodes is 3x slower).
        node_type = type(node)
        if node_type in self._wanted_types:
            self.nodes.append((node, scope))
        special = _SPECIAL.get(node_type)
        if special is not None:
            special(self, node, scope)
            return
        fields = _CHILD_FIELDS.get(node_type)
        if fields is None:
            fields = _CHILD_FIELDS[node_type] = _child_fields(node_type)
        visit = self._visit
        for name in fields:
            child = getattr(node, name)
            if child is None:
                continue
            if child.__class__ is list:
                for item in child:
                    if item is not None and not isinstance(item, str):
                        visit(item, scope)
            else:
                visit(child, scope)

    def _visit_BinOp(self, node: ast.BinOp, scope: Scope) -> None:
        # A left-deep chain (`x + x + ...`: Python parses thousands of operands, far past its recursion limit) is
        # walked down its left side in a loop; the order of the nodes is that of the recursive walk.
        spine = [node]
        left = node.left
        wanted = ast.BinOp in self._wanted_types
        while left.__class__ is ast.BinOp:
            if wanted:
                self.nodes.append((left, scope))
            spine.append(left)
            left = left.left
        self._visit(left, scope)
        for part in reversed(spine):
            self._visit(part.right, scope)

    def _visit_Name(self, node: ast.Name, scope: Scope) -> None:
        self._mention(scope, node.id)
        if node.ctx.__class__ is ast.Load:
            self.name_loads[node.id] = self.name_loads.get(node.id, 0) + 1
        elif node.ctx.__class__ is ast.Store:
            self.name_stores[node.id] = self.name_stores.get(node.id, 0) + 1

    def _visit_Attribute(self, node: ast.Attribute, scope: Scope) -> None:
        value = node.value
        if node.ctx.__class__ is ast.Store:  # (a base other than a name, `self.attn.scale = ...`: "")
            self.attribute_stores.append((scope, value.id if value.__class__ is ast.Name else "", node.attr))
        self._visit(value, scope)

    def _visit_Call(self, node: ast.Call, scope: Scope) -> None:
        func = node.func
        callee = func.id if func.__class__ is ast.Name else func.attr if func.__class__ is ast.Attribute else None
        self.callee_names[callee] = self.callee_names.get(callee, 0) + 1
        if func.__class__ is ast.Name:
            self._mention(scope, func.id)
            self.calls_by_name.setdefault(func.id, []).append((node, scope))
        else:
            if func.__class__ is ast.Attribute and func.value.__class__ is ast.Call:
                self.method_called_on[func.value] = func.attr
            self._visit(func, scope)
        for arg in node.args:
            self._visit(arg, scope)
        for kw in node.keywords:
            self._visit(kw.value, scope)

    def _visit_Import(self, node: ast.Import, scope: Scope) -> None:
        for alias in node.names:
            if alias.asname:
                self._bind(scope, alias.asname, Binding(BindingKind.IMPORT, node, alias.name))
            else:
                top = alias.name.split(".")[0]
                self._bind(scope, top, Binding(BindingKind.IMPORT, node, top))

    def _visit_ImportFrom(self, node: ast.ImportFrom, scope: Scope) -> None:
        for alias in node.names:
            if alias.name == "*":
                continue  # names it brings are unknowable: they stay unresolved
            name = alias.asname or alias.name
            if node.level or not node.module:
                self._bind(scope, name, Binding(BindingKind.OTHER, node))
            else:
                self._bind(scope, name, Binding(BindingKind.IMPORT, node, f"{node.module}.{alias.name}"))

    def _visit_FunctionDef(self, node, scope: Scope) -> None:
        self._visit_all(node.decorator_list, scope)
        if node.returns is not None:
            self._visit(node.returns, scope)
        self._bind(scope, node.name, Binding(BindingKind.OTHER, node))
        inner = self._new_scope(ScopeKind.FUNCTION, scope, node)
        self._visit_arguments(node.args, scope, inner, annotations=True)
        self._visit_body(node.body, inner)

    _visit_AsyncFunctionDef = _visit_FunctionDef

    def _visit_Lambda(self, node: ast.Lambda, scope: Scope) -> None:
        inner = self._new_scope(ScopeKind.FUNCTION, scope, node)
        self._visit_arguments(node.args, scope, inner, annotations=False)
        self._visit(node.body, inner)

    def _visit_ClassDef(self, node: ast.ClassDef, scope: Scope) -> None:
        self._visit_all(node.decorator_list, scope)
        self._visit_all(node.bases, scope)
        self._visit_all(node.keywords, scope)
        self._bind(scope, node.name, Binding(BindingKind.OTHER, node))
        inner = self._new_scope(ScopeKind.CLASS, scope, node)
        self._visit_body(node.body, inner)

    def _visit_comprehension_scope(self, node, scope: Scope) -> None:
        inner = self._new_scope(ScopeKind.FUNCTION, scope, node)
        for i, gen in enumerate(node.generators):
            # The first iterable is evaluated in the enclosing scope.
            self._visit(gen.iter, scope if i == 0 else inner)
            self._bind_target(inner, gen.target, gen, None)
            self._visit(gen.target, inner)
            self._visit_all(gen.ifs, inner)
        for part in ("elt", "key", "value"):
            child = getattr(node, part, None)
            if child is not None:
                self._visit(child, inner)

    _visit_ListComp = _visit_SetComp = _visit_GeneratorExp = _visit_DictComp = _visit_comprehension_scope

    def _visit_Assign(self, node: ast.Assign, scope: Scope) -> None:
        self._visit(node.value, scope)
        for target in node.targets:
            value = node.value if len(node.targets) == 1 else None
            self._bind_target(scope, target, node, value)
            self._visit(target, scope)

    def _visit_AnnAssign(self, node: ast.AnnAssign, scope: Scope) -> None:
        self._visit_all((node.annotation, node.value), scope)
        if node.value is not None:
            self._bind_target(scope, node.target, node, node.value)
        self._visit(node.target, scope)

    def _visit_AugAssign(self, node: ast.AugAssign, scope: Scope) -> None:
        self._visit(node.value, scope)
        self._bind_target(scope, node.target, node, None)
        self._visit(node.target, scope)

    def _visit_NamedExpr(self, node: ast.NamedExpr, scope: Scope) -> None:
        self._visit(node.value, scope)
        target_scope = scope
        # PEP 572: a walrus in a comprehension binds in the enclosing function.
        while target_scope.parent is not None and isinstance(target_scope.node, _COMPREHENSIONS):
            target_scope = target_scope.parent
        self._bind_target(target_scope, node.target, node, None)
        self._mention(target_scope, node.target.id)
        self.name_stores[node.target.id] = self.name_stores.get(node.target.id, 0) + 1

    def _visit_For(self, node, scope: Scope) -> None:
        self._visit(node.iter, scope)
        self._bind_target(scope, node.target, node, None)
        self._visit(node.target, scope)
        self._visit_body(node.body, scope)
        self._visit_body(node.orelse, scope)

    _visit_AsyncFor = _visit_For

    def _visit_withitem(self, node: ast.withitem, scope: Scope) -> None:
        self._visit(node.context_expr, scope)
        if node.optional_vars is not None:
            self._bind_target(scope, node.optional_vars, node, None)
            self._visit(node.optional_vars, scope)

    def _visit_ExceptHandler(self, node: ast.ExceptHandler, scope: Scope) -> None:
        if node.type is not None:
            self._visit(node.type, scope)
        if node.name:
            self._bind(scope, node.name, Binding(BindingKind.OTHER, node))
        self._visit_body(node.body, scope)

    def _visit_Delete(self, node: ast.Delete, scope: Scope) -> None:
        for target in node.targets:
            self._bind_target(scope, target, node, None)
            self._visit(target, scope)

    def _visit_Global(self, node: ast.Global, scope: Scope) -> None:
        # Python rejects a use before the declaration, so names bound later in the scope go to the module;
        # bindings made before it (code that would not compile) move there too.
        for name in node.names:
            self._mention(scope, name)
            scope.global_names.add(name)
            earlier = scope.bindings.pop(name, None) if scope.parent is not None else None
            if earlier:
                scope.module.bindings.setdefault(name, []).extend(earlier)

    def _visit_Nonlocal(self, node: ast.Nonlocal, scope: Scope) -> None:
        scope.nonlocal_names.update(node.names)

    def _visit_MatchAs(self, node, scope: Scope) -> None:
        if node.pattern is not None:
            self._visit(node.pattern, scope)
        if node.name:
            self._bind(scope, node.name, Binding(BindingKind.OTHER, node))

    def _visit_MatchStar(self, node, scope: Scope) -> None:
        if node.name:
            self._bind(scope, node.name, Binding(BindingKind.OTHER, node))

    def _visit_MatchMapping(self, node, scope: Scope) -> None:
        self._visit_all(node.keys, scope)
        self._visit_all(node.patterns, scope)
        if node.rest:
            self._bind(scope, node.rest, Binding(BindingKind.OTHER, node))


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _escapes(scope: Scope, name: str) -> bool:
    """``name`` mentioned in ``scope`` means what the module (or nothing) binds, not a def or class around it."""
    owner = scope.owner_of(name)
    return owner is None or owner.kind is ScopeKind.MODULE
_NOT_CHILDREN = frozenset({"ctx", "op", "type_comment", "kind", "name", "id", "attr", "arg", "module", "names",
                           "asname", "level", "is_async", "conversion", "simple", "value_str"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = tuple(f for f in node_type._fields if f not in _NOT_CHILDREN)
    if node_type is ast.Constant:
        return ()
    return fields


_SPECIAL = {cls: fn for cls, fn in (
    (getattr(ast, name[len("_visit_"):], None), fn) for name, fn in vars(_Part).items()
    if name.startswith("_visit_") and name not in ("_visit_body", "_visit_all", "_visit_arguments",
                                                   "_visit_comprehension_scope"))
    if cls is not None}
for _cls in _COMPREHENSIONS:
    _SPECIAL[_cls] = _Part._visit_comprehension_scope
