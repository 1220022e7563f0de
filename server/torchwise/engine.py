"""Text in, findings out: the one entry point the CLI and the language server share."""

from __future__ import annotations

import ast
import builtins
import gc
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain, compress, count, repeat
from operator import is_not, ne
from typing import Sequence

from torchwise.analysis.infer import Inference
from torchwise.analysis.values import ScalarValue
from torchwise.analysis.scopes import BindingKind, ModuleIndex
from torchwise.config import RuleConfig
from torchwise import incremental
from torchwise.findings import Finding, Fix, Position, Span
from torchwise.rules import ALL_RULES
from torchwise.rules.base import Context, Reach, Rule
from torchwise.source import ParseError, SourceFile
from torchwise.suppress import find_suppressions


@dataclass
class Analysis:
    source: SourceFile
    findings: list[Finding] = field(default_factory=list)
    facts: Inference | None = None  # what every expression is: hover reads it
    checked: frozenset = frozenset()  # the codes of the rules that ran
    flagged: set = field(default_factory=set)  # (code, node): where a rule found something, suppressed or not
    plans: dict = field(default_factory=dict)  # top-level def or class -> its _Plan, for the next analysis
    outside: dict = field(default_factory=dict)  # rule code -> what Rule.outside said, for the next analysis

    @property
    def parse_error(self) -> ParseError | None:
        return self.source.parse_error


# What a file gets whose code Python parses but the analysis cannot walk: `analyze` raises RecursionError.
TOO_DEEP = "cannot analyse: the code is nested too deeply (Python's recursion limit); the file was skipped"


def analyze(text: str, path: str = "<string>", config: RuleConfig = RuleConfig(),
            rules: Sequence[Rule] = ALL_RULES, previous: Analysis | None = None) -> Analysis:
    """Findings for ``text``. ``previous``, the same document's last analysis, lets unchanged code skip
    parsing, unchanged functions skip inference, and local rules skip unchanged functions."""
    # No cyclic garbage collection while analysing: a parse and an analysis make millions of objects that
    # live on, and each full collection walks all of them (a 100k-line file: ast.parse 1.7 s -> 5.8 s, and
    # 11 s with the previous tree alive). What little cyclic garbage an analysis leaves is collected after.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _analyze(text, path, config, rules, previous)
    finally:
        if enabled:
            gc.enable()


def _analyze(text: str, path: str, config: RuleConfig, rules: Sequence[Rule], previous: Analysis | None) -> Analysis:
    source = SourceFile(text, path, previous.source if previous is not None else None)
    analysis = Analysis(source)
    tree = source.tree
    if tree is None:
        return analysis
    suppressions = find_suppressions(source.lines)
    if suppressions.whole_file:
        return analysis
    active = [rule for rule in rules if config.enabled(rule.code)]
    if not active:
        return analysis
    dispatch = _Dispatch(active)
    index = ModuleIndex(tree, wanted=dispatch.node_types,
                        previous=previous.facts.index if previous is not None and previous.facts is not None else None)
    facts = Inference(index, previous.facts if previous is not None else None).run()
    ctx = Context(source, index, facts)
    analysis.facts, analysis.checked = facts, frozenset(rule.code for rule in active)
    nodes = index.nodes
    same_rules = previous is not None and previous.checked == analysis.checked
    plans = previous.plans if same_rules else {}
    reach = _Reach(ctx, active, previous if same_rules else None)
    analysis.outside = reach.outside
    alone = dispatch.alone_at_module_level
    for stmt, start, end in index.top_level:
        unit = isinstance(stmt, _UNITS)
        last = plans.get(stmt)
        plan = last if last is not None and reach.holds(stmt, unit) else None
        again, found_then, keep_only = frozenset(), None, None
        if plan is not None:  # a reused statement: the same nodes, so the same (offset, rule) pairs
            again = reach.rules_for(stmt)
            if not unit and stmt in reach.stale:  # (a module-level statement holds only where stale is known)
                again = again | alone
            if not (again or plan.always or plan.fired):  # nothing to ask (most statements of a long file)
                analysis.plans[stmt] = plan
                continue
            work = plan.always + plan.fired
            if again:  # rules whose reach changed: asked again about the statement's code
                done = {pair[:2] for pair in work}
                work += [pair for pair in _all_pairs(stmt, nodes, start, end, dispatch)
                         if pair[3] and pair[2] in again and pair[:2] not in done]
            work.sort(key=_pair_order)
            found_then = plan.found
        else:
            work = _all_pairs(stmt, nodes, start, end, dispatch)
            if last is not None and not unit and alone and reach.kept_alone(stmt):
                # Module-level code changed elsewhere: the rules that read only this statement find what they found
                # (a 1,000-cell notebook's cell edit asked them again about every statement of every cell).
                found_before = {pair[:2] for pair in last.fired}
                work = [pair for pair in work if pair[2] not in alone or pair[:2] in found_before]
                found_then, keep_only = last.found, alone
        always, fired, kept = [], [], {}
        # What a rule found on a reused statement last time, where nothing it reads changed (the rules asked again
        # aside; in module-level code that changed elsewhere, those that read only the statement), is found again,
        # moved with the statement: running the rules that fired again was most of the rules' share of an edit.
        for pair in work:
            offset, _, rule, in_body = pair
            node, scope = nodes[start + offset]
            entry = found_then.get(pair[:2]) if found_then is not None and rule not in again and (
                keep_only is None or rule in keep_only) else None
            if entry is not None:
                results = _found_again(entry, stmt, rule, node, scope, ctx)
            else:
                results = list(rule.check(node, scope, ctx))
                entry = _entry(results, stmt) if results and rule.findings_kept else None
            found = bool(results)
            for finding in results:
                analysis.flagged.add((rule.code, node))
                if suppressions.suppresses(finding.code, finding.span.start.line):
                    continue
                finding.severity = config.severity_of(finding.code, finding.severity) or finding.severity
                analysis.findings.append(finding)
            if in_body and (rule.reach is not None or rule.local and (unit or rule in alone)):
                if found:
                    fired.append(pair)
                    if entry is not None:
                        kept[pair[:2]] = entry
            else:
                always.append(pair)
        analysis.plans[stmt] = _Plan(plan.always if plan is not None else always, fired, kept)
    analysis.findings = one_per_site(analysis.findings)
    analysis.findings.sort(key=lambda f: (f.span.start, f.code))
    ctx.memo.clear()  # the rules' caches hold the context (a cycle): without them it goes with the analysis
    return analysis


# One finding per site. Rules that can describe the same call, most specific first: a thrown-away result
# beats a sync per element, which beats create-then-move, a hard-coded CUDA device, and last the generic
# `.cuda()` hint; an element count that cannot match beats a view that needs a copy. Two findings of a
# group are one site when one's range holds the other's (each rule underlines the call's method name and
# arguments, or the literal inside them). The winner speaks alone: its message, severity and fixes.
SITE_GROUPS: tuple[tuple[str, ...], ...] = (
    ("TW306", "TW203", "TW202", "TW205", "TW201"),
    ("TW503", "TW301", "TW306"),
)


def one_per_site(findings: list[Finding]) -> list[Finding]:
    """``findings`` less those a more specific finding at the same site speaks for."""
    grouped = [f for f in findings if any(f.code in group for group in SITE_GROUPS)]
    if len(grouped) < 2:
        return findings
    dropped: set[int] = set()
    for winner in sorted(grouped, key=_rank):
        if id(winner) in dropped:
            continue
        for other in grouped:
            if other is not winner and id(other) not in dropped and _outranks(winner, other) \
                    and _same_site(winner, other):
                dropped.add(id(other))
    return [f for f in findings if id(f) not in dropped]


def _rank(finding: Finding) -> int:
    return min(group.index(finding.code) for group in SITE_GROUPS if finding.code in group)


def _outranks(winner: Finding, other: Finding) -> bool:
    return any(winner.code in group and other.code in group and group.index(winner.code) < group.index(other.code)
               for group in SITE_GROUPS)


def _same_site(a: Finding, b: Finding) -> bool:
    if a.cell != b.cell:
        return False
    return _holds(a.span, b.span) or _holds(b.span, a.span)


def _holds(outer, inner) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class _Plan:
    """Which rules run on a top-level def or class again while its analysis is reused: walking every node of a
    200k-line file to skip local rules one by one cost a second per edit. ``always``: the pairs of rules that
    read anywhere beyond the unit, or of nodes outside its body (decorators, bases); ``fired``: the local rules,
    and those with a reach, that found something on its body last time (their messages and fixes come from the
    new text). Each pair is (the node's offset in the statement's slice of ``ModuleIndex.nodes``, the rule's
    place among that node's rules, the rule, whether the node lies in the body). Never changed: read only."""

    always: list
    fired: list
    found: dict = field(default_factory=dict)  # (offset, place) of a fired pair -> its _entry, where one was kept


def _entry(findings: list, stmt: ast.stmt):
    """What a rule found on a node of the top-level statement ``stmt``, to be found again while nothing it reads changes:
    the statement's line then, and each finding's code, message, severity, span and fixes' titles. None (run the
    rule again next time) when a finding lies outside the statement: it would not move with it."""
    first, last = incremental.first_line(stmt) - 1, stmt.end_lineno - 1
    if any(f.cell is not None or f.span.start.line < first or f.span.end.line > last for f in findings):
        return None
    return stmt.lineno, tuple((f.code, f.message, f.severity, f.span, tuple((x.title, x.preferred) for x in f.fixes))
                              for f in findings)


def _found_again(entry: tuple, stmt: ast.stmt, rule: Rule, node: ast.AST, scope, ctx: Context) -> list:
    """New findings from a kept entry, moved by as many lines as the statement moved (a reused statement's text is
    the same, so columns stay). The fixes are built from the current analysis when asked for: the rule runs then."""
    line, records = entry
    delta = stmt.lineno - line
    found = []
    for code, message, severity, span, fixes in records:
        if delta:
            span = Span(Position(span.start.line + delta, span.start.col), Position(span.end.line + delta, span.end.col))
        found.append(Finding(code, message, severity, span, [
            Fix(title, _rebuild(rule, node, scope, ctx, code, span, k), preferred) for k, (title, preferred)
            in enumerate(fixes)]))
    return found


def _rebuild(rule: Rule, node: ast.AST, scope, ctx: Context, code: str, span: Span, k: int):
    def build():
        for finding in rule.check(node, scope, ctx):
            if finding.code == code and finding.span == span and k < len(finding.fixes):
                return finding.fixes[k].edits
        return ()
    return build


class _Reach:
    """Where, beyond a top-level def or class whose code and facts did not change, an edit may have changed what a
    rule with a ``reach`` reads: the units to ask such rules again about.

    A name's meaning may have changed when a statement the edit touched binds it in the module (a def, a class,
    an assignment, a ``global``), or a unit analysed again tells the file other facts by it; then so may the
    names bound by a reused module-level statement that mentions one of those, if its own facts changed, and
    so on. A unit that mentions one is asked again (NAMES). For CODE (rules that read the code of the defs and
    classes a name leads to), the names a module-level statement the edit touched mentions, and the functions
    analysed again, count too, and every reused statement that mentions a changed name passes on the names it
    binds. An edit to an import, to a name Python has built in, or to what makes a class an nn.Module reaches
    everywhere."""

    def __init__(self, ctx: Context, rules: Sequence[Rule], previous: Analysis | None):
        self.reaching = frozenset(rule for rule in rules if rule.reach is not None)
        self.coding = frozenset(rule for rule in self.reaching if rule.reach is Reach.CODE)
        self.stale: set | None = None  # the statements that mention a changed name; None: all of them
        self.stale_code: set | None = None  # the same for CODE
        self.facts, self.previous_facts = ctx.facts, previous.facts if previous is not None else None
        self._changed: set | None = None
        if previous is not None and ctx.index.lent:
            self._find(ctx, previous)
        # Module-level code the edit left as it was: a module-level statement with the same facts keeps its plan.
        self.module_code_kept = self.stale is not None and all(
            part.unit for part in ctx.index.added + ctx.index.dropped)
        ctx.stale = self.stale
        self.outside = {rule.code: rule.outside(ctx) for rule in self.reaching}
        old = previous.outside if previous is not None else {}
        self.everywhere = frozenset(rule for rule in self.reaching if self.stale is None or rule.code not in old
                                    or old[rule.code] != self.outside[rule.code])

    def holds(self, stmt: ast.stmt, unit: bool) -> bool:
        """Whether the last analysis's plan for ``stmt`` holds: a def or class whose analysis was reused (the same
        nodes, the same facts), or a module-level statement with the same facts in unchanged module-level code
        (its local rules still run: they may read the module's code around it)."""
        if self.previous_facts is None:
            return False
        if unit:
            return stmt in self.facts.reused
        return self.module_code_kept and stmt not in self._changed_at_module_level()

    def kept_alone(self, stmt: ast.stmt) -> bool:
        """Whether a module-level statement of the last analysis, in module-level code that changed elsewhere, is
        the same to a rule that reads only it: the same node (the caller's), the same facts, and no name it
        mentions may mean something else."""
        return self.previous_facts is not None and self.stale is not None and stmt not in self.stale \
            and stmt not in self._changed_at_module_level()

    def _changed_at_module_level(self) -> set:
        """The module-level statements whose facts differ from the last analysis's (``_facts_changed`` of each),
        found for all of them at once, at C speed: one by one, they were 90 ms of a 200k-line file's edit."""
        if self._changed is None:
            index = self.facts.index
            self._changed = _facts_changed_among([stmt for stmt, _, _ in index.top_level
                                                  if not isinstance(stmt, _UNITS)], self.facts, self.previous_facts)
        return self._changed

    def rules_for(self, stmt: ast.stmt) -> frozenset:
        """The rules with a reach to ask again about the code of ``stmt``, a reused statement."""
        if self.stale is None or stmt in self.stale:
            return self.reaching
        if stmt in self.stale_code:
            return self.coding | self.everywhere
        return self.everywhere

    def _find(self, ctx: Context, previous: Analysis) -> None:
        index, facts = ctx.index, ctx.facts
        changed: set = set()  # names whose meaning may have changed
        mentioned: set = set()  # names module-level code the edit touched mentions
        for part in index.added + index.dropped:
            if part.imports:
                return
            changed.update(part.bindings)
            if not part.unit:
                mentioned |= part.names
        if not changed.isdisjoint(_BUILTINS) or _modules(facts) != _modules(previous.facts):
            return
        added = {id(part) for part in index.added}
        pending, again = [], set()
        for stmt, part in index.parts.items():
            if id(part) in added:
                continue
            if part.unit and stmt not in facts.reused:
                if isinstance(stmt, ast.FunctionDef):  # its facts, read where a loop's body calls it
                    again.update(part.bindings)
                if not _same(_exposed(facts, stmt), _exposed(previous.facts, stmt)):
                    changed.update(part.bindings)  # analysed again, to other facts
            pending.append((stmt, part))
        classes = frozenset(stmt.name for stmt in index.parts if isinstance(stmt, ast.ClassDef))

        def new_facts(stmt, part, names) -> bool:  # a module-level statement whose facts changed
            return not part.unit and _facts_changed(stmt, facts, previous.facts)

        def new_code(stmt, part, names) -> bool:  # ...or a def or class, or one that builds a changed class
            return part.unit or not names.isdisjoint(classes) or new_facts(stmt, part, names)

        self.stale = _mentioning(pending, changed, new_facts)
        # (A mention matters for what a name is assigned: not for a name only imported, or bound nowhere.)
        bindings = index.module_scope.bindings
        mentioned = {name for name in mentioned
                     if any(binding.kind is not BindingKind.IMPORT for binding in bindings.get(name, ()))}
        self.stale_code = _mentioning(pending, changed | mentioned | again, new_code)


def _mentioning(statements: list, changed: set, passes_on) -> set:
    """The statements that mention a name of ``changed``, which grows by the names bound by those that
    ``passes_on(stmt, part, the changed names they mention)`` says may now mean something else, until none is
    new."""
    changed = set(changed)
    found = set()
    grown = True
    while grown:
        grown, rest = False, []
        for stmt, part in statements:
            names = part.names & changed
            if not names:
                rest.append((stmt, part))
                continue
            found.add(stmt)
            if not changed.issuperset(part.bindings) and passes_on(stmt, part, names):
                changed.update(part.bindings)
                grown = True
        statements = rest
    return found


def _facts_changed(stmt: ast.stmt, facts: Inference, previous: Inference | None) -> bool:
    """Whether a reused module-level statement's facts differ from the last analysis's (what its names are bound
    to is then the same to a rule: the same code, the same facts). Its nodes are listed once, kept with it."""
    if previous is None:
        return True
    nodes, statements = _statement_nodes(stmt, facts.index.parts[stmt].memo)
    if _some_fact_differs(nodes, facts.values, previous.values):
        return True
    off_now, off_then = facts.grad_not_on, previous.grad_not_on
    return any((node in off_now) != (node in off_then) for node in statements)


def _facts_changed_among(stmts: list, facts: Inference, previous: Inference) -> set:
    """``{stmt for stmt in stmts if _facts_changed(stmt, facts, previous)}``, the nodes of all of them compared in one
    sweep: only the nodes whose facts are not the very same objects, or whose grad state differs, are looked at."""
    parts = facts.index.parts
    lists = [_statement_nodes(stmt, parts[stmt].memo) for stmt in stmts]
    nodes = list(chain.from_iterable(found[0] for found in lists))
    owners = list(chain.from_iterable(repeat(stmt, len(found[0])) for stmt, found in zip(stmts, lists)))
    now, then = list(map(facts.values.get, nodes)), list(map(previous.values.get, nodes))
    changed = {owners[i] for i in compress(count(), map(is_not, now, then)) if not _equal_fact(now[i], then[i])}
    inner = list(chain.from_iterable(found[1] for found in lists))
    inner_owners = list(chain.from_iterable(repeat(stmt, len(found[1])) for stmt, found in zip(stmts, lists)))
    off_now, off_then = facts.grad_not_on, previous.grad_not_on
    changed.update(inner_owners[i] for i in compress(count(), map(ne, map(off_now.__contains__, inner),
                                                                      map(off_then.__contains__, inner))))
    return changed


def _statement_nodes(stmt: ast.stmt, memo: dict) -> tuple:
    """A top-level statement's nodes, and those of them that are statements, listed once, kept with it."""
    found = memo.get("engine.nodes")
    if found is None:  # (its statements: only statements run with grad off or on)
        nodes = list(ast.walk(stmt))
        found = memo["engine.nodes"] = (nodes, [node for node in nodes if isinstance(node, ast.stmt)])
    return found


def _some_fact_differs(nodes: list, now: dict, then: dict) -> bool:
    """Whether a node's fact differs between ``now`` and ``then``. The very same objects are skipped at C speed (a
    reused unit's facts are), and only the rest compared by value."""
    a_facts, b_facts = list(map(now.get, nodes)), list(map(then.get, nodes))
    return any(not _equal_fact(a, b) for a, b in compress(zip(a_facts, b_facts), map(is_not, a_facts, b_facts)))


def _equal_fact(a, b) -> bool:
    """Two facts the same to a rule: equal, of one type (module-level code is analysed again on every edit, so
    its facts are equal, not the same objects; a number's repr tells 0.0 from -0.0, which == does not)."""
    return a.__class__ is b.__class__ and a == b and (a.__class__ is not ScalarValue or repr(a) == repr(b))


_BUILTINS = frozenset(vars(builtins))


def _exposed(facts: Inference | None, stmt: ast.stmt):
    """What the analysis of a top-level def or class tells the rest of the file by its name: a function's summary,
    what makes a class's instances (the attributes its ``__init__`` sets)."""
    if facts is None:
        return None
    if isinstance(stmt, ast.ClassDef):
        info = facts.classes.get(stmt.name)
        return None if info is None or info.node is not stmt else (info.is_module, info.attrs)
    info = facts.functions.get(stmt.name)
    return None if info is None or info.node is not stmt else (info.analysed, info.summary)


def _same(a, b) -> bool:
    """Equal, and shown alike (0.0 == -0.0)."""
    return a is b or (a == b and repr(a) == repr(b))


def _modules(facts: Inference | None) -> dict:
    """Which classes of the file are nn.Modules (rules ask about instances by their class's name)."""
    return {name: info.is_module for name, info in facts.classes.items()} if facts is not None else {}


def _pair_order(pair: tuple) -> tuple:
    return pair[0], pair[1]


def _all_pairs(stmt: ast.stmt, nodes: list, start: int, end: int, dispatch: "_Dispatch") -> list:
    """Every (offset, place, rule, in body) pair of a top-level statement, in node order then rule order. Of a
    def or class, the nodes of its body are in its body (not its decorators and bases); of a module-level
    statement, all are."""
    body = getattr(stmt, "body", None) if isinstance(stmt, _UNITS) else None
    first = (body[0].lineno, body[0].col_offset) if body else None
    pairs = []
    for i in range(start, end):
        node, scope = nodes[i]
        in_body = (node.lineno, node.col_offset) >= first if first is not None else body is None
        for k, rule in enumerate(dispatch.rules_for(node, scope)):
            pairs.append((i - start, k, rule, in_body))
    return pairs


class _Dispatch:
    """Which rules to ask about a node: by its type, and for a call by the callee's name (most nodes are
    calls, and most rules care about a few callee names)."""

    def __init__(self, rules: Sequence[Rule]):
        self.by_type: dict[type[ast.AST], list[Rule]] = defaultdict(list)
        for rule in rules:
            for node_type in rule.node_types:
                self.by_type[node_type].append(rule)
        calls = self.by_type.get(ast.Call, [])
        self.any_call = [rule for rule in calls if rule.call_names is None]
        self.by_call_name: dict[str, list[Rule]] = defaultdict(list)
        for rule in calls:
            for name in rule.call_names or ():
                self.by_call_name[name].append(rule)
        self._by_names: dict[tuple, list[Rule]] = {}
        self.node_types = tuple({ast.Call, *self.by_type})  # the inference reads the calls too
        # The local rules that read nothing of module-level code but the statement holding the node.
        self.alone_at_module_level = frozenset(rule for rule in rules
                                               if rule.local and not rule.reads_around_at_module_level)

    def rules_for(self, node: ast.AST, scope) -> list[Rule]:
        if type(node) is not ast.Call:
            return self.by_type.get(type(node), ())
        func = node.func
        if type(func) is ast.Attribute:  # `x.view(...)` is always `view`
            names = (func.attr,)
        elif type(func) is ast.Name:  # a bare name may be an alias: `T` under `from torch import tensor as T`
            qualname = scope.qualname(func)
            names = (func.id, qualname.rsplit(".", 1)[-1] if qualname is not None else func.id)
        else:
            return self.by_type[ast.Call]
        rules = self._by_names.get(names)
        if rules is None:
            rules = self._by_names[names] = self.any_call + [
                rule for name in dict.fromkeys(names) for rule in self.by_call_name.get(name, ())]
        return rules
