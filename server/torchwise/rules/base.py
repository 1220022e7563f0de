"""The rule framework: a rule is one small class that carries its own docs and examples.

Like Fixit's rules, the examples are both the tests (tests/test_rule_examples.py
runs every one) and the documentation (``torchwise rules CODE`` prints them).
"""

from __future__ import annotations

import ast
import bisect
import enum
from dataclasses import dataclass
from typing import ClassVar, Iterator, Sequence

from torchwise.analysis.infer import Inference
from torchwise.analysis.scopes import ModuleIndex, Scope
from torchwise.analysis.values import SymbolicValue
from torchwise.findings import Edit, Finding, Fix, Severity
from torchwise.source import SourceFile


class Reach(enum.Enum):
    NAMES = "names"
    CODE = "code"


@dataclass(frozen=True)
class Valid:
    """Code on which the rule must stay silent."""

    code: str


@dataclass(frozen=True)
class Invalid:
    """Code on which the rule must fire; ``fixed`` is the text after its first fix (None: no fix)."""

    code: str
    fixed: str | None = None


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class Context:
    """What a rule may ask about the module being checked."""

    def __init__(self, source: SourceFile, index: ModuleIndex, facts: Inference):
        self.source = source
        self.index = index
        self.facts = facts
        self.memo: dict = {}  # per-analysis caches of the rules, keyed by a name each rule module picks
        self._starts: list | None = None  # the first line of each top-level statement (decorators included)
        self._positions: list | None = None  # the same, as (line, column)
        self._owners: dict = {}  # the maps (``_maps``) of a statement not in the index, for this analysis
        # The top-level statements that mention a name whose meaning may have changed since the last analysis
        # (None: any may); the engine fills it in before the rules run.
        self.stale: "set | None" = None

    def per_statement(self, key: str, compute, resolved: bool = False) -> list:
        """``compute(stmt)`` for each top-level statement, kept with the statement for the next analyses: what a
        rule derives from one statement's code alone. ``resolved``: it also reads what names mean (qualified
        names), so it is worked out again where one of the statement's names may mean something else now."""
        again = () if not resolved else self.index.parts if self.stale is None else self.stale
        return self.index.per_statement(key, compute, again)

    def statement_of(self, node: ast.AST):
        """The innermost statement holding ``node`` (a statement is its own). O(1) amortized: the top-level
        statement is found by bisection, and its subtree's parent map is built once, on first use (a walk
        down from the module per call is quadratic on a long file; a map of the whole module costs the
        file's size even when two loops ask)."""
        body = self.tree.body
        line = getattr(node, "lineno", None)
        if line is None:
            candidates = body  # a node without a position (an operator, `comprehension`): search them all
        else:
            if self._starts is None:
                self._starts = [min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
                                for stmt in body]
            i = bisect.bisect_right(self._starts, line) - 1
            candidates = body[i:i + 1] if i >= 0 else []
        for top in candidates:
            found = self._maps(top)[0].get(node)
            if found is not None:
                return found
        return None

    def _maps(self, top: ast.stmt) -> tuple:
        """(node -> innermost statement, statement -> the statement whose block holds it) for the subtree of the
        top-level statement ``top``, kept with it for the next analyses (the same nodes while it is reused): a rule
        that fired in a class asks again on every edit (each `torch.load` of a 200k-line file's classes mapped its
        class anew, 60 ms an edit). The maps hold only what an analysis asked about at once anyway."""
        part = self.index.parts.get(top)
        memo, key = (part.memo, "base.maps") if part is not None else (self._owners, top)
        found = memo.get(key)
        if found is None:
            owners, enclosing = {}, {top: None}
            stack: list = [(top, top)]
            while stack:
                current, statement = stack.pop()
                owners[current] = statement
                for child in ast.iter_child_nodes(current):
                    if isinstance(child, ast.stmt):
                        enclosing[child] = statement
                        stack.append((child, child))
                    else:
                        stack.append((child, statement))
            found = memo[key] = (owners, enclosing)
        return found

    def top_level_of(self, node: ast.AST):
        """The top-level statement holding ``node``, a node with a position (by bisection on positions: two
        statements may share a line, `a = f(); b = g()`)."""
        body = self.tree.body
        if self._positions is None:
            self._positions = [min([(stmt.lineno, stmt.col_offset)] + [(d.lineno, d.col_offset)
                                                                       for d in getattr(stmt, "decorator_list", ())])
                               for stmt in body]
        i = bisect.bisect_right(self._positions, (node.lineno, node.col_offset)) - 1
        return body[i] if i >= 0 else None

    def statements_around(self, node: ast.AST) -> list:
        """The statements whose blocks hold ``node`` in the code of the def, class or module it lies in (not
        ``node`` itself, not that def or class), outermost first: a walk up, not a search of the scope."""
        statement = self.statement_of(node)
        if statement is None:
            return []
        enclosing = self._maps(self.top_level_of(statement))[1]
        found = []
        current = statement if statement is not node else enclosing.get(statement)
        while current is not None and not isinstance(current, _DEFINITIONS):
            found.append(current)
            current = enclosing.get(current)
        found.reverse()
        return found

    def value(self, node: ast.AST):
        """What the analysis knows ``node`` evaluates to (None: unknown). A value known only by its name (a
        parameter, ``config.n_embd``) is unknown here: it only sizes tensors inside the analysis."""
        value = self.facts.values.get(node)
        return None if isinstance(value, SymbolicValue) else value

    @property
    def tree(self) -> ast.Module:
        return self.index.module_scope.node  # type: ignore[return-value]


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, e.g. "legacy-constructor-with-size"
    severity: ClassVar[Severity]
    summary: ClassVar[str]  # what it does, one sentence
    why: ClassVar[str]  # why it matters
    fix_summary: ClassVar[str] = ""  # what the quick fix does ("" when there is none)
    node_types: ClassVar[tuple[type[ast.AST], ...]] = (ast.Call,)
    runtime_error: ClassVar[bool] = False  # PyTorch raises on the invalid examples (checked with real torch)
    # For Call nodes: the callee's last name (`view` in `x.view(...)`, `tensor` in `torch.tensor(...)`) a rule
    # can fire on; the engine does not even ask it about other calls. None: every call.
    call_names: ClassVar[frozenset | None] = None
    # True when whether it fires on a node depends only on the code and the facts of the top-level function
    # or class holding the node (no module-wide search, no other statement's code). Such a rule is not asked
    # again about a function whose code and facts did not change, where it found nothing last time (where it
    # did find something, it runs again: messages and fixes are rebuilt for the new text).
    # tests/test_incremental_analysis.py checks the result equals a fresh analysis.
    local: ClassVar[bool] = False
    # For a local rule, at module level: True when whether it fires on a node of module-level code also reads the
    # module's other statements or the text around them (comments, cell markers). Otherwise (the rule reads the
    # node's top-level statement, its facts and what its names are bound to), it is not asked again about a
    # module-level statement whose code and facts did not change, while no name it mentions may mean something
    # else, where it found nothing last time. tests/test_incremental_module_rules.py checks it.
    reads_around_at_module_level: ClassVar[bool] = False
    # For a rule that is not local, how far beyond the unit holding a node it reads, when it reads a bounded
    # part of the file: the engine then asks it again about a unit whose code and facts did not change only
    # when something in that reach changed. NAMES: what the names of the unit's code are bound to in the module
    # (module-level statements, other defs and classes, and what their names are bound to in turn); CODE: that,
    # every mention of those names in module-level code, and the facts of the functions it calls; with
    # ``outside``, what it reads of the whole file besides. None: anywhere (asked everywhere, every time).
    # tests/test_incremental_scale.py checks the result equals a fresh analysis.
    reach: ClassVar["Reach | None"] = None
    # For a local rule or one with a reach: True when what it finds on a def or class (messages, spans) reads
    # nothing outside it but what the engine's reuse already covers, so that, while the def or class and what the
    # rule reads are unchanged, its findings are found again, moved with it, without running it (the fixes are
    # built by running it when asked for). False for a message that names a place elsewhere in the file.
    # tests/test_incremental_kept_findings.py checks the result equals a fresh analysis.
    findings_kept: ClassVar[bool] = True
    valid: ClassVar[Sequence[Valid]] = ()
    invalid: ClassVar[Sequence[Invalid]] = ()

    def check(self, node: ast.AST, scope: Scope, ctx: Context) -> Iterator[Finding]:
        raise NotImplementedError

    def outside(self, ctx: Context) -> object:
        """For a rule with a ``reach``: what it reads of the whole file beyond that reach (whether the file trains,
        which functions clear gradients), as a value to compare with the last analysis's."""
        return None

    def finding(self, ctx: Context, node: ast.AST, message: str, fixes: Sequence[Fix] = (),
                severity: Severity | None = None) -> Finding:
        return Finding(self.code, message, severity or self.severity, ctx.source.span(node), list(fixes))


__all__ = ["Context", "Edit", "Finding", "Fix", "Invalid", "Reach", "Rule", "Severity", "Valid"]
