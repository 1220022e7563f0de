"""A piece of a rewrite written twice is computed once: ``(X - mu).T @ (X - mu)`` becomes ``diff = X - mu``
then ``diff.T @ diff``, and a ragged mean's mask is built once for its sum and its count.

The batched forms are composed from the translations of their parts, so a part read twice (the two factors of
a Gram matrix, a mask and the count of what it keeps) is written twice; computed twice it can cost as much as
the rest of the rewrite. A repeated sub-expression of one statement is bound to a fresh name just before it
when that saves work and computing it once is the same as computing it twice:

- it reads a tensor (arithmetic on sizes and ``torch.arange(n)`` are cheap, and read better where they are);
- it is pure: torch ops and tensor methods of the op table, nothing random, uninitialized or in place, no code
  of the program;
- it is evaluated unconditionally: not under ``and``/``or``, an ``if``-expression, a lambda or a comprehension;
- the statement changes nothing between its two evaluations: no in-place call, unless it is the statement's
  outermost call, whose arguments are all evaluated before it runs.
"""

from __future__ import annotations

import ast
import builtins
from typing import Callable, Optional

from torchwise.analysis import optable
from torchwise.vectorize.vec import _PURE_FACTORIES, _PURE_METHODS, _RANDOM

_CONDITIONAL = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                ast.NamedExpr, ast.JoinedStr)
_COMPUTING = (ast.BinOp, ast.Compare, ast.UnaryOp, ast.Call)
_NAMES = {ast.Sub: "diff"}
_CALL_NAMES = {"where": "chosen"}
_SIZES = frozenset({"shape", "dtype", "device", "ndim"})


def computed_once(lines: list, torch: str, fresh_name: Callable[[str], str], is_tensor: Callable[[str], bool]) -> list:
    """``lines`` with each statement's repeated pure sub-expressions that read a tensor (``is_tensor`` of a name)
    bound once, before it."""
    out = []
    for line in lines:
        out.extend(_computed_once(line, torch, fresh_name, is_tensor))
    return out


def _computed_once(line: str, torch: str, fresh_name, is_tensor) -> list:
    hoisted = []
    for _ in range(4):  # a second repeated piece may remain once the largest is bound
        found = _largest_repeat(line, torch, is_tensor)
        if found is None:
            break
        node, spans = found
        name = fresh_name(_name_for(node))
        data = line.encode()
        hoisted.append(f"{name} = {data[spans[0][0]:spans[0][1]].decode()}")
        for start, end in sorted(spans, reverse=True):
            data = _unparenthesized(data[:start] + name.encode() + data[end:], start, len(name))
        line = data.decode()
    return hoisted + [line]


def _largest_repeat(line: str, torch: str, is_tensor) -> Optional[tuple]:
    """The largest pure sub-expression written at least twice, with the byte spans of its occurrences."""
    try:
        tree = ast.parse(line)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or "\n" in line.strip():
        return None
    stmt = tree.body[0]
    if not _nothing_changes_between(stmt):
        return None
    seen: dict = {}
    for node in _unconditional(stmt):
        if isinstance(node, _COMPUTING) and _reads_tensor(node, is_tensor) and _pure(node, torch):
            seen.setdefault(ast.dump(node), []).append(node)
    repeated = [nodes for nodes in seen.values() if len(nodes) >= 2]
    if not repeated:
        return None
    nodes = max(repeated, key=lambda group: group[0].end_col_offset - group[0].col_offset)
    return nodes[0], [(n.col_offset, n.end_col_offset) for n in nodes]


def _unconditional(node: ast.AST):
    """The expressions under ``node`` that are evaluated whenever it is."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _CONDITIONAL):
            continue
        if isinstance(child, ast.expr):
            yield child
        yield from _unconditional(child)


def _nothing_changes_between(stmt: ast.stmt) -> bool:
    outermost = stmt.value if isinstance(stmt, ast.Expr) else None
    return not any(isinstance(n, ast.Call) and _in_place(n) and n is not outermost for n in ast.walk(stmt))


def _in_place(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr.endswith("_") and not call.func.attr.endswith("__")


def _pure(node: ast.expr, torch: str) -> bool:
    return all(_pure_call(n, torch) for n in ast.walk(node) if isinstance(n, ast.Call))


def _pure_call(call: ast.Call, torch: str) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "len"
    if not isinstance(func, ast.Attribute) or _in_place(call) or any(k.arg == "out" for k in call.keywords):
        return False
    name = func.attr
    if name in _RANDOM or "empty" in name:
        return False
    if _root(func) == torch:
        op = optable.function(name)
        return name in _PURE_FACTORIES or op is not None and not op.has("random")
    op = optable.method(name)
    return name in _PURE_METHODS or op is not None and not op.has("random")


def _root(node: ast.expr) -> Optional[str]:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _reads_tensor(node: ast.expr, is_tensor) -> bool:
    """Some name ``node`` reads holds a tensor, and not only for its size (``x.shape[0]``, ``len(x)``)."""
    sized = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr in _SIZES} | \
        {id(a) for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
         and n.func.id == "len" for a in n.args}
    return any(isinstance(n, ast.Name) and id(n) not in sized and is_tensor(n.id) for n in ast.walk(node))


def _name_for(node: ast.expr) -> str:
    if isinstance(node, (ast.Compare, ast.BoolOp)) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return "mask"
    if isinstance(node, ast.BinOp):
        return _NAMES.get(type(node.op), "part")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        name = _CALL_NAMES.get(node.func.attr, node.func.attr)
        return name if not hasattr(builtins, name) else "part"
    return "part"


def _unparenthesized(data: bytes, start: int, length: int) -> bytes:
    """``(name)`` -> ``name`` where the parentheses only grouped what the name replaced."""
    end = start + length
    if start == 0 or data[start - 1:start] != b"(" or data[end:end + 1] != b")":
        return data
    plain = data[:start - 1] + data[start:end] + data[end + 1:]
    try:
        same = ast.dump(ast.parse(plain)) == ast.dump(ast.parse(data))
    except SyntaxError:
        return data
    return plain if same else data
