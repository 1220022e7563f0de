"""Which statements a loop fix replaces, their text before and after, and the names they use.

A TW4xx fix replaces one or more consecutive statements of one block (the loop, perhaps with
the accumulator it fills and the ``torch.stack`` after it), or an expression inside one
statement (``sum(t)`` -> ``t.sum(0)``). The *region* is those whole statements: the loop code is
their original text, the vectorized code the same text with the fix's edits applied. An edit that
only inserts import statements elsewhere (``import torch.nn.functional as F``) is kept apart.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from dataclasses import dataclass, field
from typing import Optional, Sequence

from torchwise.findings import Edit, Finding, Position
from torchwise.source import SourceFile, split_lines

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                               "update", "add", "discard", "setdefault", "popitem"})


@dataclass
class Region:
    path: list  # [(node owning the block, the block, index of the statement leading down)], module first
    block: list  # the statements' block
    lo: int
    hi: int
    loop: str  # original statements, dedented
    vectorized: str  # with the fix applied, dedented
    first_line: int  # 0-based line of the first statement
    last_line: int
    imports: list = field(default_factory=list)  # import statements the fix adds elsewhere (text)

    @property
    def statements(self) -> list:
        return self.block[self.lo:self.hi + 1]

    @property
    def function(self):
        """The innermost function whose body holds the region (None at module level)."""
        for owner, _, _ in reversed(self.path):
            if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return owner
        return None


class RegionError(Exception):
    pass


# -- which finding ------------------------------------------------------------------------------
def is_bench_target(finding: Finding) -> bool:
    return finding.code.startswith("TW4") and bool(finding.fixes)


def find_target(tree: Optional[ast.Module], findings: Sequence[Finding], line: int) -> Optional[Finding]:
    """The fixable TW4xx finding a benchmark of ``line`` (0-based) means.

    In order: one whose span starts on the line; one inside the statement that starts on the line
    (the ``for`` of a loop whose body line carries the finding); one whose span covers the line;
    one whose fix replaces the line.
    """
    candidates = [f for f in findings if is_bench_target(f)]
    exact = [f for f in candidates if f.span.start.line == line]
    if exact:
        return exact[0]
    if tree is not None:
        stmt = _statement_starting_on(tree, line)
        if stmt is not None:
            inside = [f for f in candidates if line <= f.span.start.line and f.span.end.line <= stmt.end_lineno - 1]
            if inside:
                return inside[0]
    covering = [f for f in candidates if f.span.contains_line(line)]
    if covering:
        return covering[-1]
    # A line the rewrite replaces but the finding does not cover (the `out = torch.empty(N)` above
    # the loop): build the nearby fixes (libcst; only on request) and look at what they replace.
    nearby = sorted(candidates, key=lambda f: abs(f.span.start.line - line))[:5]
    for finding in nearby:
        try:
            edits = finding.fixes[0].edits
        except Exception:
            continue
        if any(e.span.start.line <= line < max(e.span.end.line, e.span.start.line + 1) for e in edits
               if e.span.start != e.span.end):
            return finding
    return None


def lens_line(tree: Optional[ast.Module], finding: Finding) -> int:
    """Where the "Benchmark" lens goes for a finding, without building its fix: the innermost loop
    statement around the finding's start (``for`` above ``out[i] = ...``), else the finding's own line."""
    line = finding.span.start.line
    if tree is None:
        return line
    best = None
    for node in _walk_statements(tree.body):
        if isinstance(node, _LOOPS) and node.lineno - 1 <= line <= node.end_lineno - 1:
            if best is None or node.lineno >= best.lineno:
                best = node
    return best.lineno - 1 if best is not None else line


def _statement_starting_on(tree: ast.Module, line: int):
    for node in _walk_statements(tree.body):
        if node.lineno - 1 == line:
            return node
    return None


def _walk_statements(body):
    for stmt in body:
        yield stmt
        for block in _child_blocks(stmt):
            yield from _walk_statements(block)


def _child_blocks(stmt) -> list:
    blocks = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(stmt, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            blocks.append(value)
    for handler in getattr(stmt, "handlers", ()) or ():
        blocks.append(handler.body)
    for case in getattr(stmt, "cases", ()) or ():
        blocks.append(case.body)
    return blocks


# -- where the fix applies ------------------------------------------------------------------------
def locate(source: SourceFile, edits: Sequence[Edit]) -> Region:
    tree = source.tree
    if tree is None or not edits:
        raise RegionError("the fix has no edits" if tree is not None else "the file does not parse")
    imports: list[str] = []
    replacing, inserting = [], []
    for edit in edits:
        if _is_import_insertion(source, edit):
            imports.append(textwrap.dedent(edit.new_text).strip())
        elif _is_blank_removal(source, edit):
            continue  # deleting an empty or comment line next to the loop
        elif edit.span.start == edit.span.end:
            inserting.append(edit)
        else:
            replacing.append(edit)
    places = [_place(source, tree, edit) for edit in replacing or inserting[:1]]
    if not places:
        raise RegionError("the fix only adds imports")
    path, block, _, _ = places[0]
    if any(p[1] is not block for p in places):
        raise RegionError("the fix changes statements in more than one block")
    lo = min(p[2] for p in places)
    hi = max(p[3] for p in places)
    kept = replacing or inserting[:1]
    for edit in inserting:
        if edit in kept:
            continue
        point = edit.span.start
        # An insertion at the start of the line after the region (`out = torch.cat(parts)` after the
        # loop) or inside it belongs to it; anywhere else it widens the region within the block.
        if block[lo].lineno - 1 <= point.line <= block[hi].end_lineno and \
                (point.line < block[hi].end_lineno or point.col == 0):
            kept.append(edit)
            continue
        where = _place(source, tree, edit)
        if where[1] is not block:
            raise RegionError("the fix changes statements in more than one block")
        lo, hi = min(lo, where[2]), max(hi, where[3])
        kept.append(edit)
    first, last = block[lo], block[hi]
    first_line, last_line = first.lineno - 1, last.end_lineno - 1
    # Whole lines, the last one's line break included (fixes often replace whole lines).
    start = source.offset(Position(first_line, 0))
    end = source.offset(Position(last_line + 1, 0)) if last_line + 1 < len(source.lines) else len(source.text)
    original = source.text[start:end]
    chosen = []
    for edit in kept:
        a, b = source.offset(edit.span.start), source.offset(edit.span.end)
        if a < start or b > end:
            raise RegionError("a fix edit reaches outside the statements it rewrites")
        chosen.append((a - start, b - start, edit.new_text))
    rewritten, last_end = [], 0
    for a, b, new_text in sorted(chosen):
        if a < last_end:
            raise RegionError("the fix's edits overlap")
        rewritten += [original[last_end:a], new_text]
        last_end = b
    rewritten.append(original[last_end:])
    return Region(path, block, lo, hi, _dedent(original), _dedent("".join(rewritten)), first_line, last_line,
                  imports)


def _dedent(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


def _is_blank_removal(source: SourceFile, edit: Edit) -> bool:
    if edit.new_text.strip():
        return False
    removed = source.text[source.offset(edit.span.start):source.offset(edit.span.end)]
    return all(not line.strip() or line.strip().startswith("#") for line in split_lines(removed))


def _is_import_insertion(source: SourceFile, edit: Edit) -> bool:
    if edit.span.start != edit.span.end or not edit.new_text.strip():
        return False
    try:
        tree = ast.parse(textwrap.dedent(edit.new_text))
    except SyntaxError:
        return False
    return bool(tree.body) and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in tree.body)


def _place(source: SourceFile, tree: ast.Module, edit: Edit):
    """(path, block, lo, hi): the statements of one block the edit touches, as deep as it goes."""
    start, end = edit.span.start, edit.span.end
    owner, block, path = tree, tree.body, []
    while True:
        touched = [i for i, stmt in enumerate(block) if _overlaps(source, stmt, start, end)]
        if not touched:
            raise RegionError(f"a fix edit at line {start.line + 1} touches no statement")
        if len(touched) == 1:
            stmt = block[touched[0]]
            span = source.span(stmt)
            covers = start <= span.start and span.end <= end
            if not covers:
                inner = next((b for b in _child_blocks(stmt)
                              if any(_overlaps(source, s, start, end) for s in b)
                              and _within(source, b, start, end)), None)
                if inner is not None:
                    path.append((owner, block, touched[0]))
                    owner, block = stmt, inner
                    continue
        path.append((owner, block, touched[0]))
        return path, block, touched[0], touched[-1]


def _overlaps(source: SourceFile, stmt, start: Position, end: Position) -> bool:
    span = source.span(stmt)
    if start == end:  # an insertion: the statement whose lines hold it
        return span.start.line <= start.line <= span.end.line
    return start < span.end and span.start < end


def _within(source: SourceFile, block: list, start: Position, end: Position) -> bool:
    first, last = source.span(block[0]), source.span(block[-1])
    return Position(first.start.line, 0) <= start and end <= last.end


# -- names ---------------------------------------------------------------------------------------
def free_names(code: str) -> list[str]:
    """Names the code reads before it binds them (in order of first use): its inputs."""
    tree = ast.parse(code)
    found: dict[str, None] = {}
    _free_block(tree.body, set(), found)
    return list(found)


def _free_block(body, bound: set, found: dict) -> None:
    for stmt in body:
        _free_stmt(stmt, bound, found)


def _loads(node, bound: set, found: dict) -> None:
    """Record reads in an expression (comprehension and lambda variables are their own)."""
    if node is None:
        return
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id not in bound:
            found.setdefault(node.id, None)
        return
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        inner = set(bound)
        for gen in node.generators:
            _loads(gen.iter, inner, found)
            inner |= _target_names(gen.target)
            for cond in gen.ifs:
                _loads(cond, inner, found)
        if isinstance(node, ast.DictComp):
            _loads(node.key, inner, found)
            _loads(node.value, inner, found)
        else:
            _loads(node.elt, inner, found)
        return
    if isinstance(node, ast.Lambda):
        args = node.args
        params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
        _loads(node.body, bound | params, found)
        return
    if isinstance(node, ast.NamedExpr):
        _loads(node.value, bound, found)
        bound.add(node.target.id)
        return
    for child in ast.iter_child_nodes(node):
        _loads(child, bound, found)


def _target_loads(target, bound: set, found: dict) -> None:
    """A store target reads its subscripts and attribute bases (``out[i] = ...`` reads ``out``, ``i``)."""
    if isinstance(target, (ast.Subscript, ast.Attribute)):
        _loads(target.value, bound, found)
        if isinstance(target, ast.Subscript):
            _loads(target.slice, bound, found)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _target_loads(elt, bound, found)
    elif isinstance(target, ast.Starred):
        _target_loads(target.value, bound, found)


def _target_names(target) -> set:
    names = set()
    for node in ast.walk(target):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _free_stmt(stmt, bound: set, found: dict) -> None:
    if isinstance(stmt, ast.Assign):
        _loads(stmt.value, bound, found)
        for target in stmt.targets:
            _target_loads(target, bound, found)
            bound |= _target_names(target)
    elif isinstance(stmt, ast.AnnAssign):
        _loads(stmt.value, bound, found)
        _target_loads(stmt.target, bound, found)
        if stmt.value is not None:
            bound |= _target_names(stmt.target)
    elif isinstance(stmt, ast.AugAssign):
        if isinstance(stmt.target, ast.Name):
            if stmt.target.id not in bound:
                found.setdefault(stmt.target.id, None)
        else:
            _target_loads(stmt.target, bound, found)
        _loads(stmt.value, bound, found)
        bound |= _target_names(stmt.target)
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        _loads(stmt.iter, bound, found)
        inner = bound | _target_names(stmt.target)
        _target_loads(stmt.target, inner, found)
        _free_block(stmt.body, inner, found)
        _free_block(stmt.orelse, set(inner), found)
        bound |= _target_names(stmt.target) | _bound_in(stmt.body)
    elif isinstance(stmt, (ast.While, ast.If)):
        _loads(stmt.test, bound, found)
        inner = set(bound)
        _free_block(stmt.body, inner, found)
        other = set(bound)
        _free_block(stmt.orelse, other, found)
        bound |= inner & other if isinstance(stmt, ast.If) else set()
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            _loads(item.context_expr, bound, found)
            if item.optional_vars is not None:
                bound |= _target_names(item.optional_vars)
        _free_block(stmt.body, bound, found)
    elif isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list and all(
            isinstance(s, (ast.Assign, ast.Return, ast.Expr)) for s in stmt.body):
        # A plain function (see plain.py): its parameters and assigned names are its own.
        args = stmt.args
        for default in (*args.defaults, *(d for d in args.kw_defaults if d is not None)):
            _loads(default, bound, found)
        own = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
        own |= {t.id for s in stmt.body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)}
        for inner in stmt.body:
            _loads(inner.value, bound | own, found)
        bound.add(stmt.name)
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
                found.setdefault(node.id, None)  # conservative: whatever a nested def mentions
        bound.add(stmt.name)
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            bound.add((alias.asname or alias.name).split(".")[0])
    else:
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                _loads(child, bound, found)
            elif isinstance(child, ast.stmt):
                _free_stmt(child, bound, found)
            elif isinstance(child, ast.excepthandler):
                _free_block(child.body, set(bound), found)


def _bound_in(body) -> set:
    names = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def changed_names(code) -> tuple[set, set]:
    """(names the code binds, names whose value it changes in place); ``code``: text or a tree."""
    tree = ast.parse(code) if isinstance(code, str) else code
    bound, mutated = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = _base_name(node.value)
            if base:
                mutated.add(base)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                base = _base_name(func.value)
                in_place = func.attr.endswith("_") and not func.attr.startswith("_")  # x.add_(1)
                if base and (func.attr in _MUTATING_METHODS or in_place):
                    mutated.add(base)
            for kw in node.keywords:
                if kw.arg == "out":
                    base = _base_name(kw.value)
                    if base:
                        mutated.add(base)
    return bound, mutated


def _base_name(node) -> Optional[str]:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def outputs_of(loop: str, vectorized: str) -> list[str]:
    """The names whose values both versions must agree on: what the rewrite sets that the loop sets too."""
    loop_bound, loop_mutated = changed_names(loop)
    vec_bound, vec_mutated = changed_names(vectorized)
    loop_changed = loop_bound | loop_mutated
    vec_changed = vec_bound | vec_mutated
    both = sorted(n for n in vec_changed & loop_changed if not n.startswith("_"))
    return both or sorted(n for n in vec_bound if not n.startswith("_"))


def fingerprint(text: str, first_line: int, last_line: int) -> str:
    """A short hash of lines ``first_line..last_line`` (0-based, inclusive), indentation ignored:
    compare it with the stored one to know a benchmark result is stale."""
    return fingerprint_lines(plain_lines(text), first_line, last_line)


def plain_lines(text: str) -> list[str]:
    """The lines as the editor and ast count them (not ``str.splitlines``, which also breaks at \\f), without ends."""
    return [line.rstrip("\r\n") for line in split_lines(text)]


def fingerprint_lines(lines: Sequence[str], first_line: int, last_line: int) -> str:
    """``fingerprint`` of already split lines."""
    chosen = lines[first_line:last_line + 1]
    return hashlib.sha1(textwrap.dedent("\n".join(chosen)).encode("utf-8")).hexdigest()[:16]
