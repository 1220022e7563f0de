"""einops patterns and the shapes they make, without einops: ``rearrange``, ``repeat``, ``reduce``,
``einops.einsum``, ``pack`` and ``unpack`` (einops 0.8, torch backend), and torch.einsum's sublist form.

A pattern is parsed and checked with the rules einops itself enforces, in einops' order and with its
messages (``Identifiers only on one side of expression``, ``Shape mismatch, can't divide axis of length 8
in chunks of 3``). Then the recipe einops would cook is followed step by step (reshape, permute, reduce,
unsqueeze + expand, reshape), so the result is einops' own, and :class:`Plan` keeps the steps for the
layout (strides) of the result.

Dimensions are ints or :class:`~torchwise.analysis.dims.Sym`; axis sizes given as keywords are too, or
``None`` when their value is unknown (the name still counts: einops checks names before values). Like
``shapes``, every function returns what einops produces whenever it does not raise, raises
:class:`~torchwise.analysis.shapes.ShapeError` only when einops raises for every value of the symbols, and
says "unknown" otherwise.

Splitting a symbolic dim ``C`` as ``(h d)`` with ``h`` given gives ``d = exact_div(C, h)``. When that is no
polynomial (``C / 3``), ``d`` is a fresh symbol rather than an unknown result: the rank and every other
axis stay known, and einops checks the division itself at run time. The split is remembered, so an output
group that puts the pieces back together (``(h d)`` again, or ``(d h)``) is ``C`` itself, not ``h*d#1``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import chain
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from torchwise.analysis import shapes
from torchwise.analysis.dims import Dim, Shape, Sym, dim_eq, dim_lt, exact_div, product
from torchwise.analysis.shapes import MaybeShape, ShapeError

ELLIPSIS = "\u2026"  # einops writes "..." as this one character while parsing
REDUCTIONS = ("min", "max", "sum", "mean", "prod", "any", "all")
LAYER_ELLIPSIS_DIMS = 8  # einops' layers cook recipes for 0..7 dims under an ellipsis, no more
AxisLengths = Mapping[str, Optional[Dim]]  # a keyword's size; None: given, value unknown


# -- parsing ----------------------------------------------------------------------------------------------
class Anonymous:
    """An axis written as its length (``2``). Like einops' ``AnonymousAxis`` every occurrence is its own
    axis: two ``2`` s are never the same axis, so one on the left is never found on the right."""

    __slots__ = ("value",)

    def __init__(self, value: int):
        self.value = value

    def __repr__(self) -> str:
        return f"{self.value}-axis"


Axis = Union[str, Anonymous]


@dataclass(frozen=True)
class Side:
    """One side of a pattern (``b (h w) c``). A group is ``ELLIPSIS`` or a tuple of axes (``()`` and a lone
    ``1`` are the empty group; a ``1`` inside brackets is dropped)."""

    groups: tuple
    identifiers: frozenset  # names, Anonymous axes, and ELLIPSIS when present
    has_ellipsis: bool = False
    ellipsis_parenthesized: Optional[bool] = None
    has_anonymous: bool = False  # a non-unitary anonymous axis (2, 3, ...)


def _error(message: str, **data) -> ShapeError:
    return ShapeError(message, **data)


def axis_name_problem(name: str, allow_underscore: bool = False) -> Optional[str]:
    """Why ``name`` is no axis name for einops (None: it is one). Keywords are allowed (einops warns)."""
    if not name.isidentifier():
        return "not a valid python identifier"
    if name[0] == "_" or name[-1] == "_":
        if name == "_" and allow_underscore:
            return None
        return "axis name should should not start or end with underscore"  # sic, einops' text
    return None


def parse_side(expression: str, *, allow_underscore: bool = False, allow_duplicates: bool = False) -> Side:
    """einops' ``ParsedExpression``, character by character."""
    has_ellipsis = False
    if "." in expression:
        if "..." not in expression:
            raise _error("Expression may contain dots only inside ellipsis (...)")
        if expression.count("...") != 1 or expression.count(".") != 3:
            raise _error("Expression may contain dots only inside ellipsis (...); only one ellipsis for tensor ")
        expression = expression.replace("...", ELLIPSIS)
        has_ellipsis = True
    state = _SideBuilder(allow_underscore, allow_duplicates)
    state.has_ellipsis = has_ellipsis
    current: Optional[str] = None
    for char in expression:
        if char in "() ":
            if current is not None:
                state.add(current)
            current = None
            if char == "(":
                if state.bracket is not None:
                    raise _error("Axis composition is one-level (brackets inside brackets not allowed)")
                state.bracket = []
            elif char == ")":
                if state.bracket is None:
                    raise _error("Brackets are not balanced")
                state.groups.append(tuple(state.bracket))
                state.bracket = None
        elif char.isalnum() or char in ("_", ELLIPSIS):
            current = char if current is None else current + char
        else:
            raise _error(f"Unknown character '{char}'")
    if state.bracket is not None:
        raise _error(f'Imbalanced parentheses in expression: "{expression}"')
    if current is not None:
        state.add(current)
    return Side(tuple(state.groups), frozenset(state.identifiers), state.has_ellipsis,
                state.ellipsis_parenthesized, state.has_anonymous)


class _SideBuilder:
    def __init__(self, allow_underscore: bool, allow_duplicates: bool):
        self.allow_underscore = allow_underscore
        self.allow_duplicates = allow_duplicates
        self.groups: list = []
        self.identifiers: set = set()
        self.bracket: Optional[list] = None
        self.has_ellipsis = False
        self.ellipsis_parenthesized: Optional[bool] = None
        self.has_anonymous = False

    def add(self, name: str) -> None:
        if name in self.identifiers and not (self.allow_underscore and name == "_") and not self.allow_duplicates:
            raise _error(f'Indexing expression contains duplicate dimension "{name}"')
        if name == ELLIPSIS:
            self.identifiers.add(ELLIPSIS)
            self.ellipsis_parenthesized = self.bracket is not None
            self._place(ELLIPSIS, ELLIPSIS)
            return
        is_number = name.isdecimal()
        if is_number and int(name) == 1:
            if self.bracket is None:
                self.groups.append(())  # a lone 1 is an empty group; inside brackets it is nothing
            return
        problem = axis_name_problem(name, self.allow_underscore)
        if not is_number and problem is not None:
            raise _error(f"Invalid axis identifier: {name}\n{problem}")
        axis: Axis = name
        if is_number:
            if int(name) <= 0:
                raise _error(f"Anonymous axis should have positive length, not {int(name)}")
            axis = Anonymous(int(name))
            self.has_anonymous = True
        self.identifiers.add(axis)
        self._place(axis, (axis,))

    def _place(self, axis, group) -> None:
        if self.bracket is None:
            self.groups.append(group)
        else:
            self.bracket.append(axis)


def split_arrow(pattern: str) -> Tuple[str, str]:
    """``left -> right``; Python's own unpacking error where einops unpacks ``pattern.split("->")``."""
    parts = pattern.split("->")
    if len(parts) != 2:
        raise _error("no '->' in the pattern: ValueError: not enough values to unpack (expected 2, got 1)"
                     if len(parts) < 2 else f"{len(parts) - 1} '->' in the pattern: ValueError: too many values to "
                     f"unpack (expected 2)", pattern=pattern)
    return parts[0], parts[1]


# -- the recipe: what einops checks before it looks at sizes ---------------------------------------------
@dataclass(frozen=True)
class _Recipe:
    left: tuple  # groups of elementary axes, the ellipsis expanded
    right: tuple
    left_axes: frozenset  # identifiers of the left side, the ellipsis expanded
    given: frozenset  # elementary axes with a size before the input is seen: keywords and anonymous axes
    has_ellipsis: bool  # the rank is not fixed by the pattern


def _describe(items) -> str:
    return repr(set(items))


def _check_operation(left: Side, right: Side, operation: str, axes_names: Iterable[str], pattern: str) -> None:
    if not left.has_ellipsis and right.has_ellipsis:
        raise _error(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.ellipsis_parenthesized:
        raise _error(f"Ellipsis inside parenthesis in the left side is not allowed: {pattern}")
    if operation == "rearrange":
        if left.has_anonymous or right.has_anonymous:
            raise _error("Non-unitary anonymous axes are not supported in rearrange (exception is length 1)")
        difference = left.identifiers ^ right.identifiers
        if difference:
            raise _error(f"Identifiers only on one side of expression (should be on both): {_describe(difference)}")
    elif operation == "repeat":
        difference = left.identifiers - right.identifiers
        if difference:
            raise _error(f"Unexpected identifiers on the left side of repeat: {_describe(difference)}")
        unsized = {ax for ax in right.identifiers if not isinstance(ax, Anonymous)} - {*left.identifiers, *axes_names}
        if unsized:
            raise _error(f"Specify sizes for new axes in repeat: {_describe(unsized)}")
    elif operation in REDUCTIONS:
        difference = right.identifiers - left.identifiers
        if difference:
            raise _error(f"Unexpected identifiers on the right side of reduce {operation}: {_describe(difference)}")
    else:
        raise _error(f"Unknown reduction {operation}. Expect one of {REDUCTIONS}.")


def _expand_ellipsis(left: Side, right: Side, ndim: Optional[int]) -> Tuple[tuple, tuple, frozenset]:
    """Both sides' groups with ``...`` replaced by its axes (none when the rank is unknown), and the
    left's identifiers."""
    if not left.has_ellipsis:
        if ndim is not None and ndim != len(left.groups):
            raise _error(f"Wrong shape: expected {len(left.groups)} dims. Received {ndim}-dim tensor.",
                         expected=len(left.groups), rank=ndim)
        return left.groups, right.groups, left.identifiers
    others = len(left.groups) - 1
    if ndim is not None and ndim < others:
        raise _error(f"Wrong shape: expected >={others} dims. Received {ndim}-dim tensor.", expected=others, rank=ndim)
    ellipsis_axes = tuple(f"{ELLIPSIS}{i}" for i in range((ndim if ndim is not None else others) - others))
    new_left = tuple(g for group in left.groups
                     for g in ([(axis,) for axis in ellipsis_axes] if group == ELLIPSIS else [group]))
    new_right = []
    for group in right.groups:
        if group == ELLIPSIS:
            new_right.extend((axis,) for axis in ellipsis_axes)
        else:
            new_right.append(tuple(a for axis in group for a in (ellipsis_axes if axis == ELLIPSIS else (axis,))))
    identifiers = (left.identifiers - {ELLIPSIS}) | set(ellipsis_axes)
    return new_left, tuple(new_right), frozenset(identifiers)


def _prepare(pattern: str, operation: str, axes_names: Sequence[str], ndim: Optional[int]) -> _Recipe:
    """einops' ``_prepare_transformation_recipe``: every check that needs no size. ``ndim=None``: the
    rank is unknown, so it is not checked (and ``...`` stands for no axes)."""
    left_text, right_text = split_arrow(pattern)
    left, right = parse_side(left_text), parse_side(right_text)
    _check_operation(left, right, operation, axes_names, pattern)
    left_groups, right_groups, left_axes = _expand_ellipsis(left, right, ndim)
    known = {axis for axis in chain(*left_groups, *right_groups) if isinstance(axis, Anonymous)}
    all_axes = set(chain(*left_groups)) | set(chain(*right_groups))
    for name in axes_names:
        if axis_name_problem(name) is not None:
            raise _error(str(("Invalid name for an axis", name)))
        if name not in all_axes:
            raise _error(f"Axis {name} is not used in transform")
        known.add(name)
    for group in left_groups:
        unknown = {axis for axis in group if axis not in known}
        if len(unknown) > 1:
            raise _error(f"Could not infer sizes for {_describe(unknown)}")
    return _Recipe(left_groups, right_groups, left_axes, frozenset(known), left.has_ellipsis)


def check_pattern(pattern: str, operation: str, axes_names: Sequence[str] = ()) -> None:
    """What a pattern must satisfy whatever the input (raises :class:`ShapeError`): what einops' layers
    check when they are built (``Rearrange(pattern, **axes)``, ``Reduce(pattern, reduction, **axes)``)."""
    _prepare(pattern, operation, tuple(axes_names), None)


# -- sizes: einops' _reconstruct_from_shape, then the torch calls it makes ---------------------------------
@dataclass(frozen=True)
class Plan:
    """What einops does to a tensor of shape ``input``, in its order; each step is None when skipped."""

    input: Shape
    init_shape: Optional[Shape]  # x.reshape(init_shape)
    permutation: Optional[Tuple[int, ...]]  # x.permute(permutation)
    reduced: Tuple[int, ...]  # the dims reduced (after the permutation)
    added: Tuple[Tuple[int, Dim], ...]  # (position, length): x.unsqueeze(position) each, then x.expand
    final_shape: Optional[Shape]  # x.reshape(final_shape)
    shape: Shape  # the result


def _positive_or_unknown(value: Optional[Dim]) -> Optional[Dim]:
    """A keyword size as the recipe reads it: an int below 1 makes einops or torch misbehave in ways
    not modelled (``0`` divides by zero, ``-1`` expands to 1), so its value counts as unknown."""
    if type(value) is int and value < 1:
        return None
    return value


class _Lengths:
    """The size of every elementary axis, and the splits that made a fresh symbol. ``of`` holds what
    einops' checks may read (None: a size given with an unknown value); ``size`` what shapes are built of
    (such a size stands in as one fresh symbol per axis)."""

    def __init__(self):
        self.of: Dict[object, Optional[Dim]] = {}
        self.stand_ins: Dict[object, Sym] = {}
        self.splits: Dict[object, Tuple[Dim, Tuple[object, ...]]] = {}  # axis -> (whole dim, the other parts)

    def size(self, axis) -> Dim:
        known = self.of.get(axis)
        if known is not None:
            return known
        if axis not in self.stand_ins:
            self.stand_ins[axis] = Sym.fresh("n")
        return self.stand_ins[axis]

    def group(self, group: Sequence[object]) -> Dim:
        """The size of a composed axis: the product of its parts."""
        rest = list(group)
        total: Dim = 1
        for axis, (whole, parts) in self.splits.items():
            if axis in rest and all(p in rest for p in parts):
                for part in (axis, *parts):
                    rest.remove(part)
                total = total * whole  # the pieces of a split dim, together again: the dim itself
        return total * product(self.size(axis) for axis in rest)


def _fill_from_input(recipe: _Recipe, shape: Shape, axes: AxisLengths, pattern: str) -> _Lengths:
    lengths = _Lengths()
    for axis in chain(*recipe.left, *recipe.right):
        if isinstance(axis, Anonymous):
            lengths.of[axis] = axis.value
    for name, value in axes.items():
        lengths.of[name] = _positive_or_unknown(value)
    for dim, group in zip(shape, recipe.left):
        known = [axis for axis in group if axis in recipe.given]
        unknown = [axis for axis in group if axis not in recipe.given]
        if not known and len(unknown) == 1:
            lengths.of[unknown[0]] = dim
            continue
        sizes = [lengths.of.get(axis) for axis in known]
        known_product = None if any(s is None for s in sizes) else product(sizes)
        if not unknown:
            if known_product is not None and dim_eq(dim, known_product) is False:
                raise _error(f"Shape mismatch, {dim} != {known_product}", pattern=pattern, sizes=(dim, known_product))
            continue
        quotient = _divide(dim, known_product, pattern)
        lengths.of[unknown[0]] = quotient
        if quotient is None or (isinstance(quotient, Sym) and quotient.is_fresh):
            lengths.splits[unknown[0]] = (dim, tuple(known))  # whatever the quotient, times the parts it is dim
    return lengths


def _divide(dim: Dim, known_product: Optional[Dim], pattern: str) -> Optional[Dim]:
    """The unknown axis of a split input dim: ``dim / known_product``, a fresh symbol when no
    polynomial, None when a given size is unknown."""
    if known_product is None:
        return None  # a stand-in symbol
    if type(dim) is int and type(known_product) is int:
        if dim % known_product:
            raise _error(f"Shape mismatch, can't divide axis of length {dim} in chunks of {known_product}",
                         pattern=pattern, sizes=(dim, known_product))
        return dim // known_product
    quotient = exact_div(dim, known_product)
    return quotient if quotient is not None else Sym.fresh("n")


def _check_reduction(operation: str, sizes: Sequence[Dim]) -> None:
    """``amin`` / ``amax`` have no identity: reducing a dim of size 0 raises."""
    if operation not in ("min", "max"):
        return
    for d, size in enumerate(sizes):
        if dim_eq(size, 0):
            raise _error(f"a{operation}(): Expected reduction dim {d} to have non-zero size.", size=size)


def _plan(recipe: _Recipe, shape: Shape, axes: AxisLengths, pattern: str, operation: str) -> Plan:
    lengths = _fill_from_input(recipe, shape, axes, pattern)
    ordered_left = list(chain(*recipe.left))
    ordered_right = list(chain(*recipe.right))
    right_axes = set(ordered_right)
    reduced = [axis for axis in ordered_left if axis not in right_axes]
    order = [axis for axis in ordered_right if axis in recipe.left_axes] + reduced
    permutation = tuple(ordered_left.index(axis) for axis in order)
    elementary = tuple(lengths.size(axis) for axis in ordered_left)
    init_shape = elementary if any(len(g) != 1 for g in recipe.left) else None
    first_reduced = len(order) - len(reduced)
    added = tuple((i, lengths.size(axis)) for i, axis in enumerate(ordered_right) if axis not in recipe.left_axes)
    out = tuple(lengths.group(g) for g in recipe.right)
    final_shape = out if any(len(g) != 1 for g in recipe.right) else None
    reduced_sizes = [elementary[permutation[d]] for d in range(first_reduced, len(permutation))]
    _check_reduction(operation, reduced_sizes)
    return Plan(tuple(shape), init_shape, None if permutation == tuple(range(len(permutation))) else permutation,
                tuple(range(first_reduced, len(permutation))), added, final_shape, out)


def _one_unknown(dim: Dim) -> Dim:
    """A size made of unknown sizes only (``n#7*n#8``) as one unknown size: nothing is known of it anyway."""
    if isinstance(dim, Sym) and not dim.is_fresh and all("#" in name for name in dim.symbols):
        return Sym.fresh("n")
    return dim


def _unknown_input(recipe: _Recipe) -> Shape:
    """With the input's shape unknown but its rank fixed by the pattern: one fresh size per dim."""
    return tuple(Sym.fresh("n") for _ in recipe.left)


def plan(shape: MaybeShape, pattern: str, operation: str, axes: Optional[AxisLengths] = None) -> Optional[Plan]:
    """How ``einops.reduce(x, pattern, operation, **axes)`` runs on a tensor of ``shape`` (``operation``:
    ``"rearrange"``, ``"repeat"`` or a reduction): its steps and result; None when unknown.

    An unknown ``shape`` still gets every check that needs no size, and a result of fresh sizes where the
    pattern fixes the rank (no ``...``)."""
    axes = dict(axes or {})
    if shape is None:
        recipe = _prepare(pattern, operation, tuple(axes), None)
        if recipe.has_ellipsis:
            return None
        result = _plan(recipe, _unknown_input(recipe), axes, pattern, operation)
        return replace(result, shape=tuple(_one_unknown(d) for d in result.shape))
    recipe = _prepare(pattern, operation, tuple(axes), len(shape))
    return _plan(recipe, tuple(shape), axes, pattern, operation)


def _shape_of(result: Optional[Plan]) -> MaybeShape:
    return None if result is None else result.shape


def rearrange(shape: MaybeShape, pattern: str, axes: Optional[AxisLengths] = None) -> MaybeShape:
    return _shape_of(plan(shape, pattern, "rearrange", axes))


def repeat(shape: MaybeShape, pattern: str, axes: Optional[AxisLengths] = None) -> MaybeShape:
    return _shape_of(plan(shape, pattern, "repeat", axes))


def reduce(shape: MaybeShape, pattern: str, reduction: str, axes: Optional[AxisLengths] = None) -> MaybeShape:
    return _shape_of(plan(shape, pattern, reduction, axes))


def layer_plan(shape: MaybeShape, pattern: str, operation: str,
               axes: Optional[AxisLengths] = None) -> Optional[Plan]:
    """``Rearrange(pattern, **axes)(x)`` / ``Reduce(...)(x)``: the layer cooked its recipes when built, one
    per rank it accepts (the pattern's, or up to 7 dims under ``...``); another rank raises KeyError."""
    axes = dict(axes or {})
    check_pattern(pattern, operation, tuple(axes))
    if shape is None:
        return plan(None, pattern, operation, axes)
    left = parse_side(split_arrow(pattern)[0])
    fixed = len(left.groups) - left.has_ellipsis
    ranks = range(fixed, fixed + LAYER_ELLIPSIS_DIMS) if left.has_ellipsis else range(fixed, fixed + 1)
    if len(shape) not in ranks:
        accepted = f"{fixed} to {ranks[-1]}" if left.has_ellipsis else f"{fixed}"
        raise _error(f"KeyError: {len(shape)} (the layer has recipes for {accepted} dims, not a "
                     f"{len(shape)}-dim input)", expected=fixed, rank=len(shape))
    result = plan(shape, pattern, operation, axes)
    if result is not None and result.reduced and operation in ("any", "all"):
        # einops' scriptable torch backend, which the layers use, knows no any / all
        raise _error(str(("Unknown reduction ", operation)))
    return result


# -- einops.einsum ---------------------------------------------------------------------------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # string.ascii_letters


def _einsum_letter(raw) -> str:
    """einops' ``_validate_einsum_axis_name`` of one group, then the axis it names."""
    if len(raw) == 0:
        raise _error("Singleton () axes are not yet supported in einsum.")
    if len(raw) > 1:
        raise _error("Shape rearrangement is not yet supported in einsum.")
    if isinstance(raw[0], Anonymous):
        raise _error("Anonymous axes are not yet supported in einsum.")
    return raw[0]


def compact_einsum(pattern: str) -> str:
    """einops' ``_compactify_pattern_for_einsum``: named axes become letters, for ``torch.einsum``."""
    return _compact(pattern)[0]


def _compact(pattern: str) -> Tuple[str, Dict[str, str]]:
    """(the torch equation, letter -> axis name)."""
    if "->" not in pattern:
        raise _error("Einsum pattern must contain '->'.", pattern=pattern)
    lefts_text, right_text = split_arrow(pattern)
    lefts = [parse_side(text, allow_underscore=True, allow_duplicates=True) for text in lefts_text.split(",")]
    right = parse_side(right_text, allow_underscore=True)
    letters: Dict[str, str] = {}
    terms = []
    for left in lefts:
        term = ""
        for raw in left.groups:
            if raw == ELLIPSIS:
                term += "..."
                continue
            name = _einsum_letter(raw)
            if name not in letters:
                if len(letters) >= len(_LETTERS):
                    raise _error("Too many axes in einsum.")
                letters[name] = _LETTERS[len(letters)]
            term += letters[name]
        terms.append(term)
    out = ""
    for raw in right.groups:
        if raw == ELLIPSIS:
            out += "..."
            continue
        name = _einsum_letter(raw)
        if name not in letters:
            raise _error(f"Unknown axis {name} on right side of einsum {pattern}.")
        out += letters[name]
    return ",".join(terms) + "->" + out, {letter: name for name, letter in letters.items()}


def einsum(operand_shapes: Sequence[MaybeShape], pattern: str) -> MaybeShape:
    """``einops.einsum(*tensors, pattern)``: the pattern compacted, then torch.einsum's shape rules. torch's
    messages name the letters einops made up (``subscript c``); here they name the axes (``subscript d``)."""
    if not operand_shapes:
        raise _error("`einops.einsum` takes at minimum two arguments: the tensors (at least one), followed "
                     "by the pattern.")
    equation, names = _compact(pattern)
    try:
        return shapes.einsum(equation, list(operand_shapes))
    except ShapeError as err:
        message = re.sub(r"subscript ([a-zA-Z])\b", lambda m: f"subscript {names.get(m.group(1), m.group(1))}",
                         err.message)
        raise ShapeError(message, **err.data) from None


# -- torch.einsum's sublist form ---------------------------------------------------------------------------
def _sublist_letter(item) -> str:
    if item is Ellipsis:
        return "..."
    if type(item) is int and 0 <= item < 26:
        return chr(ord("A") + item)
    if type(item) is int and 26 <= item < 52:
        return chr(ord("a") + item - 26)
    raise _error("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def sublist_equation(sublists: Sequence[Sequence[object]], output: Optional[Sequence[object]] = None) -> str:
    """``torch.einsum(a, [0, 1], b, [1, 2], [0, 2])`` as the equation torch builds from it
    (``"AB,BC->AC"``); items are ints in [0, 52) or ``Ellipsis``."""
    equation = ",".join("".join(_sublist_letter(s) for s in sub) for sub in sublists)
    if output is not None:
        equation += "->" + "".join(_sublist_letter(s) for s in output)
    return equation


# -- pack and unpack ---------------------------------------------------------------------------------------
def analyze_pack_pattern(pattern: str, opname: str) -> Tuple[int, int]:
    """(axes before ``*``, axes after it) of a pack/unpack pattern such as ``"b * d"``."""
    axes = pattern.split()
    if len(axes) != len(set(axes)):
        raise _error(f'Duplicates in axes names in {opname}(..., "{pattern}")')
    if "*" not in axes:
        raise _error(f'No *-axis in {opname}(..., "{pattern}")')
    for axis in axes:
        if axis != "*" and axis_name_problem(axis) is not None:
            raise _error(f'Invalid axis name {axis} in {opname}(..., "{pattern}")')
    before = axes.index("*")
    return before, len(axes) - before - 1


def pack(operand_shapes: Sequence[MaybeShape], pattern: str) -> Tuple[MaybeShape, List[MaybeShape]]:
    """``einops.pack(tensors, pattern)``: (the packed shape, the packed shapes ``ps``, one per tensor); each
    None when unknown. Every tensor is reshaped to ``(*before, -1, *after)`` and they are concatenated."""
    before, after = analyze_pack_pattern(pattern, "pack")
    if not operand_shapes:
        raise _error("pack needs at least one tensor (einops reads tensors[0]: IndexError)")
    flat: List[MaybeShape] = []
    packed: List[MaybeShape] = []
    for i, shape in enumerate(operand_shapes):
        if shape is None:
            flat.append(None)
            packed.append(None)
            continue
        if len(shape) < before + after:
            raise _error(f"packed tensor #{i} (enumeration starts with 0) has shape {tuple(shape)}, while pattern "
                         f"{pattern} assumes at least {before + after} axes", position=i)
        end = len(shape) - after
        packed.append(tuple(shape[before:end]))
        kept = tuple(shape[:before]) + tuple(shape[end:])
        if product(kept) == 0:
            raise _error(f"cannot reshape tensor of 0 elements into shape "
                         f"{list(shape[:before]) + [-1] + list(shape[end:])} because the unspecified dimension "
                         f"size -1 can be any value and is ambiguous", position=i)
        flat.append(tuple(shape[:before]) + (product(shape[before:end]),) + tuple(shape[end:]))
    known = [f for f in flat if f is not None]
    if len(known) == len(flat) or not known:
        return shapes.cat(flat, before), packed
    # Some shapes unknown: when pack returns, each of them was reshaped to (*before, -1, *after) with the same
    # kept sizes as the known ones, so only the packed axis is unknown.
    joined = shapes.cat(known, before)
    return joined[:before] + (Sym.fresh("n"),) + joined[before + 1:], packed


def unpack(shape: MaybeShape, packed_shapes: Sequence[Optional[Sequence[Dim]]], pattern: str) -> Optional[List[Shape]]:
    """``einops.unpack(x, ps, pattern)``: the shapes of the pieces (None when unknown). One packed shape
    may hold a ``-1``, inferred from the rest. Errors are claimed only where every size is an int."""
    before, after = analyze_pack_pattern(pattern, "unpack")
    if shape is None:
        return None
    if len(shape) != before + 1 + after:
        raise _error(f"unpack(..., {pattern}) received input of wrong dim with shape {tuple(shape)}")
    if any(p is None for p in packed_shapes):
        return _unpack_known_parts(shape, packed_shapes, before, after, pattern)
    parts = [tuple(p) for p in packed_shapes]
    unknown = [i for i, p in enumerate(parts) if any(_is_minus_one(d) for d in p)]
    if len(unknown) > 1:
        raise _error(f"unpack(..., {pattern}) received more than one -1 in {[list(p) for p in parts]} and can't "
                     f"infer dimensions")
    start, end, total = tuple(shape[:before]), tuple(shape[before + 1:]), shape[before]
    if all(type(d) is int for d in (*shape, *chain(*parts))):
        return _int_unpack(start, end, total, parts, unknown, pattern)
    if any(type(d) is int and d < 0 and not _is_minus_one(d) for d in chain(*parts)) \
            or any(sum(map(_is_minus_one, p)) > 1 for p in parts):
        return None  # torch's reshape raises; with symbols around, not claimed
    pieces = []
    for i, part in enumerate(parts):
        if i in unknown:
            part = _infer_minus_one(part, total, [p for k, p in enumerate(parts) if k != i])
        pieces.append(start + part + end)
    return pieces


def _unpack_known_parts(shape: Shape, packed_shapes: Sequence[Optional[Sequence[Dim]]], before: int, after: int,
                        pattern: str) -> Optional[List[MaybeShape]]:
    """Some packed shapes unknown: a piece whose packed shape is known (and holds no ``-1``, which the others
    decide) is reshaped to exactly it; the rest stay unknown."""
    parts = [tuple(p) if p is not None else None for p in packed_shapes]
    if sum(1 for p in parts if p is not None and any(_is_minus_one(d) for d in p)) > 1:
        raise _error(f"unpack(..., {pattern}) received more than one -1 in {[p and list(p) for p in parts]} and "
                     f"can't infer dimensions")
    start, end = tuple(shape[:before]), tuple(shape[before + 1:])
    pieces: List[MaybeShape] = []
    for part in parts:
        usable = part is not None and all(type(d) is not int or d >= 0 for d in part)
        pieces.append(start + part + end if usable else None)
    return pieces if any(p is not None for p in pieces) else None


def _is_minus_one(d: Dim) -> bool:
    return type(d) is int and d == -1


def _infer_minus_one(part: Shape, total: Dim, others: Sequence[Shape]) -> Shape:
    """The ``-1`` of one packed shape: what the other pieces leave of the axis, over its known dims. When
    the others may take more than the axis, its slice is empty (not negative): a fresh size."""
    left = total - sum((product(p) for p in others), 0)
    known = product(d for d in part if not _is_minus_one(d))
    size = exact_div(left, known) if dim_lt(left, 0) is False else None
    if size is None:
        size = Sym.fresh("n")
    return tuple(size if _is_minus_one(d) else d for d in part)


def _int_unpack(start: Shape, end: Shape, total: int, parts: List[Shape], unknown: List[int],
                pattern: str) -> List[Shape]:
    """einops slices the axis at the running sums of the pieces (the piece with ``-1`` takes what the
    others leave, from both ends) and reshapes each slice; a slice that does not fit its shape raises."""
    lengths = [-1 if i in unknown else product(p) for i, p in enumerate(parts)]
    cuts = [0] * len(parts) + [total]
    if not unknown:
        for i, n in enumerate(lengths[:-1]):
            cuts[i + 1] = cuts[i] + n
    else:
        u = unknown[0]
        for i in range(u):
            cuts[i + 1] = cuts[i] + lengths[i]
        for j in range(len(lengths) - 1, u, -1):
            cuts[j] = cuts[j + 1] - lengths[j]
    outer = product(start) * product(end)
    pieces = []
    for i, part in enumerate(parts):
        piece = len(range(total)[slice(cuts[i], cuts[i + 1])])
        try:
            pieces.append(shapes.reshape((outer * piece,), start + part + end))
        except ShapeError:
            raise _error(f'Error during unpack(..., "{pattern}"): could not split axis of size {cuts[-1]} into '
                         f"requested {[tuple(p) for p in parts]}", pattern=pattern) from None
    return pieces


__all__ = [
    "ELLIPSIS", "REDUCTIONS", "Anonymous", "Plan", "Side", "analyze_pack_pattern", "axis_name_problem",
    "check_pattern", "compact_einsum", "einsum", "layer_plan", "pack", "parse_side", "plan", "rearrange",
    "reduce", "repeat", "split_arrow", "sublist_equation", "unpack",
]
