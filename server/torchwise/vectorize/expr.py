"""What every part of the vectorizer shares: how rewrites are written as Python text, and how it says no.

- Python's operator precedences (``wrap`` adds parentheses only where they are needed), so that a
  translated expression can be dropped into any other one;
- ``Refuse`` (this loop is not rewritten, for the reason given) and ``Inherent`` (the loop is not a
  per-element computation at all: a recurrence, an effect, an early exit; it stays silent);
- two obligations checked in several places: code computed for elements the loop skips must not raise
  (``no_raising_ops``), and which layouts element-wise results keep (``row_ordered``).
"""

from __future__ import annotations

import ast

from torchwise.analysis import layout

# Python's operator precedence, loosest first; ATOM needs no parentheses anywhere.
IFEXP, OR, AND, NOT, COMPARE, BOR, BXOR, BAND, SHIFT, ARITH, TERM, UNARY, POWER, ATOM = range(3, 17)

_PRECEDENCE = {ast.Add: ARITH, ast.Sub: ARITH, ast.Mult: TERM, ast.Div: TERM, ast.FloorDiv: TERM, ast.Mod: TERM,
               ast.Pow: POWER, ast.MatMult: TERM, ast.BitAnd: BAND, ast.BitOr: BOR, ast.BitXor: BXOR,
               ast.LShift: SHIFT, ast.RShift: SHIFT}


class Refuse(Exception):
    """The expression cannot be shown to vectorize to the same result."""


class Inherent(Refuse):
    """The loop is not a per-element computation at all (a recurrence, effects, an early exit): stay silent."""


class Unknown(Inherent):
    """Nothing is known of an operand: silent, unless its use shows the loop is per element (an index into a known
    tensor the loop walks), where it is flagged with this reason."""


def torch_name(scope, refusal: type = Inherent) -> str:
    """The name torch is imported as where a rewrite goes (``torch`` when it is one of them)."""
    aliases = list(scope.aliases_of("torch"))
    if not aliases:
        raise refusal("torch is not imported")
    return "torch" if "torch" in aliases else aliases[0]


def wrap(text: str, prec: int, needed: int) -> str:
    return f"({text})" if prec < needed else text


def _precedence(node: ast.AST) -> int:
    if isinstance(node, ast.BinOp):
        return _PRECEDENCE.get(type(node.op), 0)
    if isinstance(node, ast.UnaryOp):
        return NOT if isinstance(node.op, ast.Not) else UNARY
    if isinstance(node, ast.Compare):
        return COMPARE
    if isinstance(node, ast.BoolOp):
        return AND if isinstance(node.op, ast.And) else OR
    if isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr)):
        return 0
    return ATOM


def precedence_of(text: str) -> int:
    """The precedence of an expression's text (for a text built elsewhere, its precedence not kept)."""
    return _precedence(ast.parse(text, mode="eval").body)


def number_literal(text: str):
    """The int or float that ``text`` writes out (``0.0``, ``-1``), else None."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    if negative:
        node = node.operand
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, float) or node.value != node.value:
        return None
    return -node.value if negative else node.value


def no_raising_ops(node: ast.AST, ctx=None) -> None:
    """Code the loop may skip for some elements (an untaken branch) is computed for all of them vectorized:
    an integer division by zero or a negative integer power it never reached would raise. With the facts
    (``ctx``), an op on a floating tensor is let through: it gives inf or NaN, never raises; so is an int
    tensor to a constant power >= 0."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, (ast.FloorDiv, ast.Mod, ast.Pow)) \
                and not (ctx is not None and _cannot_raise(sub, ctx)):
            raise Refuse("a branch that may raise where the loop would not compute it")


def _cannot_raise(op: ast.BinOp, ctx) -> bool:
    from torchwise.analysis.dtypes import is_floating
    from torchwise.analysis.values import TensorValue

    left = ctx.value(op.left)
    if not isinstance(left, TensorValue) or left.dtype is None:
        return False
    if is_floating(left.dtype):
        return True
    right = op.right
    return isinstance(op.op, ast.Pow) and isinstance(right, ast.Constant) and type(right.value) is int \
        and right.value >= 0


def row_ordered(shape, strides) -> bool:
    """An element-wise op (TensorIterator) lays its result out in the order of its operands' dims, and a
    clone or a cast (``preserve_format``) that of its input: a result is row-major (contiguous) when every
    operand is *row-ordered*: at most one dim; or row-major; or, sizes and strides known, the strides of
    its dims of more than one element decrease outwards, a broadcast (stride 0) one aside (``x[::2]``,
    ``v.expand(n, d)``). A matrix product or a reduction makes a new row-major tensor whatever its inputs."""
    if shape is None:
        return False
    if len(shape) <= 1 or layout.is_contiguous(shape, strides) is True:
        return True
    if strides is None or not all(type(d) is int for d in (*shape, *strides)):
        return False
    spread = [stride for size, stride in zip(shape, strides) if size > 1 and stride != 0]
    return all(outer > inner for outer, inner in zip(spread, spread[1:]))


def spelled(node: ast.AST, like: ast.AST) -> ast.AST:
    """A node the vectorizer writes itself (``v in t`` spelled ``(v == t).any().item()``, ``row[0]`` of an unpacked
    row): its new parts are marked so that their text is unparsed, not read from the file at a borrowed position;
    the parts taken from the file keep theirs."""
    for sub in ast.walk(node):
        if not hasattr(sub, "lineno"):
            sub._tw_synthetic = True
    return ast.fix_missing_locations(ast.copy_location(node, like))
