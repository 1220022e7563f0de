"""A pass over the module's own code, reusing what each top-level statement did in the same pass of the last
analysis (issue 13, "Scale").

The module's code runs twice on every analysis (before the units, and after them with their summaries), in full:
on a 200,000-line file that was about half of an edit inside one function. A statement of module code is a
function of the state it starts from (the module's names, the defaults, the call sites noted so far, the
memoised calls, the fresh-symbol counter) and of what it reads from beyond the module's code (the recorded reads
of ``Inference._read``: the code of the defs it runs, classes' kinds, signatures and attributes). So, while every
statement before it did exactly what it did last time (the state is *in sync*), a statement that is the very same
node and whose reads all give the same answers again does exactly what it did last time. Such a statement, when it
was costly, is not run: what it did is replayed (the names it bound, the facts of its nodes, the statements it ran
with grad off, the call sites and constructions it noted, the calls it memoised, the defaults, the counters).

A statement that has to run again (its reads changed, or its node is new) ends the sync, unless what it did can be
seen to be the same as last time (a costly statement: every effect compared; a def or class with a plain head: it
binds its name, and its decorators and bases only read). From there on, every statement runs. Before the first
statement, the inputs common to every statement must be the last analysis's (``_signature``), else nothing is
reused. ``tests/test_incremental_modpass.py`` compares the result with a fresh analysis after random edits.
"""

from __future__ import annotations

import ast
import time
from itertools import compress, count, islice
from operator import is_not
from typing import Optional

from torchwise.analysis import dims

REUSE = True  # (False: every statement runs, as before; for measuring)
RECORD_AFTER_S = 0.0001  # a statement that took longer than this last time keeps what it did, for a replay
# (0.1 ms: a module-level `if` or `try` joins every name of the module, 0.2-0.5 ms at 50k lines, more as the file grows)
# The language server sets this: a first analysis (a document opened) records what module-level compound statements
# did, so that the first edit after opening replays them as later edits do (a 200k-line file's module-level loops
# and ifs took ~11 s of that edit, run again because nothing was recorded). Off for one-shot analyses (the CLI),
# which no edit follows.
RECORD_ON_OPEN = False
_COMPOUND = tuple(getattr(ast, name) for name in ("For", "AsyncFor", "While", "If", "With", "AsyncWith", "Try",
                                                   "TryStar", "Match") if hasattr(ast, name))
_LEAVES = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_PLAIN_HEAD = (ast.Name, ast.Attribute, ast.Constant, ast.Load)
_MISSING = object()
_UNTOUCHED = object()  # a node's fact while a recorded statement runs: not set by it (yet)


class _Effects:
    __slots__ = ("env_set", "env_removed", "values", "popped", "grad_off", "notes", "after", "specialized", "built")

    def same(self, other: "_Effects") -> bool:
        """Whether the two leave the state alike (the facts of the statement's own nodes aside)."""
        from torchwise.analysis.infer import _same

        return (self.env_set.keys() == other.env_set.keys() and list(self.env_set) == list(other.env_set)
                and all(_same(v, other.env_set[k]) for k, v in self.env_set.items())
                and self.env_removed == other.env_removed and _same(self.notes, other.notes)
                and _same(self.after, other.after)
                and _same_items(self.specialized, other.specialized) and _same_items(self.built, other.built))


def _same_items(a: list, b: list) -> bool:
    from torchwise.analysis.infer import _same

    return len(a) == len(b) and all(ka is kb or ka == kb for (ka, _), (kb, _) in zip(a, b)) \
        and all(_same(va, vb) for (_, va), (_, vb) in zip(a, b))


class _Record:
    __slots__ = ("stmt", "reads", "took", "effects")

    def __init__(self, stmt, reads, took, effects):
        self.stmt, self.reads, self.took, self.effects = stmt, reads, took, effects


def _fresh_position() -> int:
    position = next(dims._fresh_ids)
    dims._fresh_ids = count(position)
    return position


def _signature(inf) -> tuple:
    """What every statement of a pass may read that no recorded read covers."""
    module_node = inf.index.module_scope.node
    return (inf._default_changed_anywhere, inf._default_changed_in_function, inf._device_changed,
            inf.default_float, inf.default_float_why, inf.default_device, inf.grad_enabled, inf._specializations,
            inf._units_pending, inf.int_fields, frozenset(inf._int_names.get(module_node, ())),
            tuple((name, info.opaque, len(info.call_sites)) for name, info in inf.functions.items()),
            tuple((name, info.is_module, info.constructed_unseen, info.dataclass_fields is not None,
                   len(info.constructions), tuple((m, mi.opaque, len(mi.call_sites), mi.analysed)
                                                  for m, mi in info.method_infos.items()))
                  for name, info in inf.classes.items()))


def _plain_head(stmt) -> bool:
    """A def or class whose decorators and bases only read (names, attributes): running it binds its name."""
    if isinstance(stmt, ast.ClassDef):
        if stmt.keywords:
            return False
        parts = [*stmt.decorator_list, *stmt.bases]
    else:
        parts = stmt.decorator_list
    return all(isinstance(node, _PLAIN_HEAD) for part in parts for node in ast.walk(part))


def _same_head(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b) or a.name != b.name or not (_plain_head(a) and _plain_head(b)):
        return False
    heads = (lambda s: [*s.decorator_list, *getattr(s, "bases", ())])
    return all(ast.dump(x) == ast.dump(y) for x, y in zip(heads(a), heads(b))) and len(heads(a)) == len(heads(b))


def run(inf, body: list, env, tag: str) -> None:
    """``inf._exec_block(body, env)`` for the module's body, in the pass ``tag``, reusing the last analysis's."""
    from torchwise.analysis.infer import _same

    signature = _signature(inf)
    previous = inf._previous_passes.get(tag)
    if not REUSE:
        previous = None
    old = previous[1] if previous is not None and previous[0] == signature and not inf._changed else None
    # (A module-level name bound otherwise, as typing at module level does, on and on in a notebook: nothing is
    # reused, and recording what costly statements did costs more than it would save next time.)
    took_before = {r.stmt: r.took for r in previous[1]} if previous is not None and not inf._changed else {}
    opening = RECORD_ON_OPEN and REUSE and previous is None and not inf._changed
    in_sync = old is not None
    records = []
    statements = inf._STATEMENTS
    prev = None
    try:
        for i, stmt in enumerate(body):
            last = old[i] if in_sync and i < len(old) else None
            in_sync = last is not None
            if inf.grad_enabled is not True:
                inf.grad_not_on.add(stmt)
            inf._previous_statement, before = prev, prev
            prev = stmt
            if in_sync and last.stmt is stmt and last.effects is not None and all(
                    _same(inf._external(kind, key), answer) for kind, key, answer in last.reads):
                _replay(inf, env, last.effects)
                records.append(last)
            else:
                record = not isinstance(stmt, _UNITS) and (took_before.get(stmt, 0.0) > RECORD_AFTER_S
                                                           or opening and isinstance(stmt, _COMPOUND))
                new = _run(inf, env, stmt, statements, record, before)
                records.append(new)
                if in_sync:
                    if last.stmt is stmt:
                        in_sync = _same_reads(new.reads, last.reads) or (
                            new.effects is not None and last.effects is not None and new.effects.same(last.effects))
                    else:
                        in_sync = isinstance(stmt, _UNITS) and _same_head(stmt, last.stmt) \
                            and _same_reads(new.reads, last.reads)
            if isinstance(stmt, _LEAVES):
                break
    finally:
        inf._reads = None
        inf._pass_log = None
    inf._passes[tag] = (signature, records)


def _same_reads(a: list, b: list) -> bool:
    from torchwise.analysis.infer import _same

    return len(a) == len(b) and all(ka == kb and na == nb and _same(x, y) for (ka, na, x), (kb, nb, y) in zip(a, b))


def _nodes(stmt, before) -> tuple:
    """The nodes whose facts running ``stmt`` may set (its own, and the target of an assignment right above it, which
    an unpacking may name: ``_named_where_assigned``), and the statements under it (run with grad off, or not)."""
    nodes = [node for node in ast.walk(stmt) if isinstance(node, (ast.expr, ast.stmt))]  # (facts' keys)
    statements = [node for node in nodes if isinstance(node, ast.stmt) and node is not stmt]
    above = before.targets[0] if isinstance(before, ast.Assign) and len(before.targets) == 1 else None
    return nodes, statements, above


def _run(inf, env, stmt, statements, record: bool, before_stmt) -> _Record:
    """Run one statement of module code, recording its reads (and, when ``record``, what it did)."""
    inf._reads = reads = []
    if record:
        nodes, inner, above = _nodes(stmt, before_stmt)
        # Each node's fact is set aside for the run: what is then still the mark was left as it was, what is gone
        # the run removed, anything else the run set (even to the very same object).
        values = inf.values
        kept = {node: values[node] for node in nodes if node in values}
        values.update(dict.fromkeys(nodes, _UNTOUCHED))
        above_before = values.get(above, _MISSING) if above is not None else _MISSING
        grad_before = [node in inf.grad_not_on for node in inner]
        before = dict(env.vars)
        inf._pass_log = []
        specialized, built = len(inf._specialized), len(inf._built)
    start = time.perf_counter()
    try:
        handler = statements.get(type(stmt))
        if handler is not None:
            handler(inf, stmt, env)
        else:
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.expr):
                    inf.eval(child, env)
    finally:
        took = time.perf_counter() - start
        inf._reads = None
        if record:
            after = list(map(values.get, nodes, _repeat_missing(nodes)))
            set_now = {node: value for node, value in zip(nodes, after)
                       if value is not _UNTOUCHED and value is not _MISSING}
            popped = tuple(node for node, value in zip(nodes, after) if value is _MISSING)
            for node, value in zip(nodes, after):  # the marks go: a fact left alone is back
                if value is _UNTOUCHED:
                    if node in kept:
                        values[node] = kept[node]
                    else:
                        del values[node]
    effects = None
    if record:
        effects = _effects(inf, env, before, specialized, built)
        if effects is not None:
            if above is not None:  # (set only where it had no fact: `_named_where_assigned`)
                now = values.get(above, _MISSING)
                if now is not above_before:
                    if now is _MISSING:
                        popped += (above,)
                    else:
                        set_now[above] = now
            effects.values, effects.popped = set_now, popped
            effects.grad_off = tuple(node for node, was in zip(inner, grad_before)
                                     if not was and node in inf.grad_not_on)
        inf._pass_log = None
    return _Record(stmt, reads, took, effects)


def _effects(inf, env, before: dict, specialized: int, built: int) -> Optional[_Effects]:
    after = env.vars
    removed = before.keys() - after.keys()
    added = [k for k in after if k not in before] if len(after) + len(removed) != len(before) else []
    changed = list(compress(after, map(is_not, after.values(), map(before.get, after, _repeat_missing(after)))))
    # Replayed as an update: the names must stay in the order a run leaves them.
    kept = [k for k in before if k not in removed] if removed else list(before)
    if list(after) != kept + added:
        return None
    effects = _Effects()
    effects.env_set = {k: after[k] for k in changed}
    effects.env_removed = frozenset(removed)
    effects.notes = list(inf._pass_log)
    effects.after = (inf.default_float, inf.default_float_why, inf.default_device, inf.grad_enabled,
                     inf._specializations, _fresh_position())
    effects.specialized = _last_items(inf._specialized, specialized)
    effects.built = _last_items(inf._built, built)
    return effects


def _repeat_missing(d: dict):
    from itertools import repeat

    return repeat(_MISSING, len(d))


def _last_items(d: dict, size_before: int) -> list:
    new = len(d) - size_before
    return list(islice(reversed(d.items()), new))[::-1] if new > 0 else []


def _replay(inf, env, effects: _Effects) -> None:
    env.vars.update(effects.env_set)
    for name in effects.env_removed:
        env.vars.pop(name, None)
    values = inf.values
    for key in effects.popped:
        values.pop(key, None)
    values.update(effects.values)
    inf.grad_not_on.update(effects.grad_off)
    for note in effects.notes:
        inf._replay_note(note)
    (inf.default_float, inf.default_float_why, inf.default_device, inf.grad_enabled, inf._specializations,
     position) = effects.after
    dims._fresh_ids = count(position)
    inf._specialized.update(effects.specialized)
    inf._built.update(effects.built)
