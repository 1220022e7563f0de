"""Shape arithmetic of PyTorch operations, with precise errors.

A shape is a ``tuple`` of dimensions (``int`` or :class:`~torchwise.analysis.dims.Sym`); an
unknown shape (rank unknown) is ``None``. Every function here either

- returns the shape(s) PyTorch produces (certain whenever PyTorch does not raise),
- raises :class:`ShapeError` - only when PyTorch certainly raises, for every value of the symbols,
- or returns ``None`` when it cannot know (unknown inputs, a rank that depends on a symbol).

Unknown *sizes* with a known rank get a fresh symbol (``n#3``, see ``Sym.fresh``): the length of
``x[mask]``, ``min(B, 3)`` for ``x[:3]``, the broadcast of ``B`` with ``T``. A fresh symbol is
unrelated to everything else, so nothing is ever concluded from it.

Dimension *arguments* (``dim=``, ``start_dim``, permutation entries) must be ``int``: callers
that do not know them do not call. With all-``int`` inputs nothing is unknown except
:func:`linear` with a bias and a 1-D weight or a ≥2-D bias, where PyTorch takes a different path
(``addmm`` or ``matmul`` + ``add_``) depending on the input's memory layout; :func:`index` with two
masks or two ellipses; and ``expand`` of a 0-D tensor to negative sizes beside a 0 (PyTorch
builds a tensor of negative size).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

from torchwise.analysis.dims import (
    Dim, Shape, Sym, dim_eq, exact_div, fmt_list, fmt_shape, minimum_operands, prefix_length, product,
)

MaybeShape = Optional[Shape]


class ShapeError(ValueError):
    """PyTorch raises here. ``message`` is for people; ``data`` holds what to show."""

    def __init__(self, message: str, **data):
        super().__init__(message)
        self.message = message
        self.data = data


# -- dimension arguments ------------------------------------------------------------------
def wrap_dim(dim: int, rank: int, *, scalar_as_1d: bool = True) -> int:
    """Normalize a negative dim like ``maybe_wrap_dim``: a 0-D tensor accepts 0 and -1."""
    if rank == 0 and not scalar_as_1d:
        raise ShapeError(f"Dimension specified as {dim} but tensor has no dimensions", dim=dim, rank=rank)
    bound = max(rank, 1) if scalar_as_1d else rank
    if not -bound <= dim < bound:
        raise ShapeError(
            f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})",
            dim=dim, rank=rank)
    return dim % bound


def _wrap_dims(dims: Sequence[int], rank: int) -> List[int]:
    """A list of dims (reductions, squeeze): each wrapped, none repeated."""
    seen: List[int] = []
    for d in dims:
        w = wrap_dim(d, rank)
        if w in seen:
            raise ShapeError(f"dim {w} appears multiple times in the list of dims", dim=w)
        seen.append(w)
    return seen


def _is_one(d: Dim) -> Optional[bool]:
    return dim_eq(d, 1)


# -- broadcasting -------------------------------------------------------------------------
_CLASH = object()


def broadcast_dims(a: Dim, b: Dim):
    """Two aligned sizes broadcast: the result, or ``_CLASH`` when certainly incompatible.

    A symbol against an int ``k != 1`` gives ``k``: the symbol must be 1 or ``k`` for PyTorch
    to succeed, and the result is ``k`` either way.
    """
    if dim_eq(a, b):
        return a
    if _is_one(a):
        return b
    if _is_one(b):
        return a
    if dim_eq(a, b) is False and _is_one(a) is False and _is_one(b) is False:
        return _CLASH
    if type(a) is int:
        return a
    if type(b) is int:
        return b
    for size in (a, b):
        if _is_one(size) is False:  # `4 * (dim // 4)` is never 1: the other must be 1 or this very size
            return size
    # x + pos[:n] with x's size n: min(n, N) is n, or N < n and then N must be 1: the result is n either way.
    for size, other in ((a, b), (b, a)):
        if (minimum_operands(other) or (None,))[0] == size:
            return size
    # Unrelated to everything else, but a function of a and b: the same pair broadcasts to the same size (a loop
    # that adds them again is stable).
    key = tuple(sorted((repr(a), repr(b))))
    return Sym.var(f"n#{10 ** 12 + abs(hash(key)) % 10 ** 12}")  # far above the fresh counter


def aligned(*shapes: Shape) -> List[Tuple[Optional[Dim], ...]]:
    """The shapes right-aligned as rows for a hover: missing leading dims are ``None``."""
    rank = max((len(s) for s in shapes), default=0)
    return [(None,) * (rank - len(s)) + tuple(s) for s in shapes]


def broadcast(*shapes: MaybeShape) -> MaybeShape:
    """Broadcast shapes (right-aligned). Error data: ``dim`` (from the right, negative),
    ``sizes``, ``shapes`` (the two that clash) and ``rows`` (:func:`aligned`)."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out: List[Dim] = []
    for i in range(1, rank + 1):
        acc: Dim = 1
        source = None
        for k, shape in enumerate(shapes):
            if i > len(shape):
                continue
            merged = broadcast_dims(acc, shape[-i])
            if merged is _CLASH:
                first = shapes[source]
                raise ShapeError(
                    f"cannot broadcast {fmt_shape(first)} with {fmt_shape(shape)}: "
                    f"dim -{i} is {acc} vs {shape[-i]}",
                    dim=-i, sizes=(acc, shape[-i]), shapes=(first, shape), rows=aligned(*shapes))
            if _is_one(shape[-i]) is not True:
                source = k
            acc = merged
        out.append(acc)
    return tuple(reversed(out))


# -- products -----------------------------------------------------------------------------
def _check_inner(op: str, a: Shape, b: Shape, left: Dim, right: Dim) -> None:
    if dim_eq(left, right) is False:
        raise ShapeError(
            f"{op}: cannot multiply {fmt_shape(a)} by {fmt_shape(b)}: inner sizes {left} vs {right}",
            shapes=(a, b), sizes=(left, right))


def _need_rank(op: str, shape: Shape, ranks: Tuple[int, ...], what: str) -> None:
    if len(shape) not in ranks:
        want = " or ".join(f"{r}-D" for r in ranks)
        raise ShapeError(f"{op}: {what} must be {want}, got {len(shape)}-D {fmt_shape(shape)}",
                         shape=shape)


def matmul(a: MaybeShape, b: MaybeShape) -> MaybeShape:
    """``torch.matmul`` / ``@``: dot, matrix-vector, vector-matrix, matrix and batched products.

    A 1-D operand is made a matrix (a row on the left, a column on the right) and that dim is
    dropped again from the result; batch dims broadcast.
    """
    if a is None or b is None:
        return None
    if not a or not b:
        raise ShapeError(f"both arguments to matmul need to be at least 1D, but they are "
                         f"{len(a)}D and {len(b)}D", shapes=(a, b))
    if len(a) == 1 and len(b) == 1:
        _check_inner("matmul", a, b, a[0], b[0])
        return ()
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    _check_inner("matmul", a, b, a2[-1], b2[-2])
    try:
        batch = broadcast(a2[:-2], b2[:-2])
    except ShapeError as err:
        raise ShapeError(f"matmul: batch dims of {fmt_shape(a)} and {fmt_shape(b)} do not "
                         f"broadcast: {err.message}",
                         **{**err.data, "shapes": (a, b), "batch_shapes": err.data["shapes"]}) from None
    return batch + (a2[-2:-1] if len(a) > 1 else ()) + (b2[-1:] if len(b) > 1 else ())


def mm(a: MaybeShape, b: MaybeShape) -> MaybeShape:
    if a is None or b is None:
        return None
    _need_rank("mm", a, (2,), "self")
    _need_rank("mm", b, (2,), "mat2")
    _check_inner("mm", a, b, a[1], b[0])
    return (a[0], b[1])


def bmm(a: MaybeShape, b: MaybeShape) -> MaybeShape:
    """Batched product without broadcasting: batch sizes must be equal."""
    if a is None or b is None:
        return None
    _need_rank("bmm", a, (3,), "batch1")
    _need_rank("bmm", b, (3,), "batch2")
    if dim_eq(a[0], b[0]) is False:
        raise ShapeError(f"bmm: batch1 and batch2 must have the same number of batches, "
                         f"got {a[0]} and {b[0]}", shapes=(a, b), sizes=(a[0], b[0]))
    _check_inner("bmm", a, b, a[2], b[1])
    return (a[0], a[1], b[2])


def dot(a: MaybeShape, b: MaybeShape) -> MaybeShape:
    if a is None or b is None:
        return None
    _need_rank("dot", a, (1,), "self")
    _need_rank("dot", b, (1,), "other")
    _check_inner("dot", a, b, a[0], b[0])
    return ()


def mv(a: MaybeShape, b: MaybeShape) -> MaybeShape:
    if a is None or b is None:
        return None
    _need_rank("mv", a, (2,), "self")
    _need_rank("mv", b, (1,), "vec")
    _check_inner("mv", a, b, a[1], b[0])
    return (a[0],)


def linear(input: MaybeShape, weight: MaybeShape, bias: MaybeShape = None, *,
           has_bias: Optional[bool] = None) -> MaybeShape:
    """``F.linear(input, weight, bias)``: ``input @ weight.T + bias``.

    ``has_bias`` says whether a bias is passed when its shape is unknown (``bias=None`` with
    ``has_bias=True``); by default a bias is passed exactly when ``bias`` is a shape.
    With a bias PyTorch uses ``addmm`` (weight must be 2-D, bias expands to ``(N, out)``) or
    ``matmul`` + ``add_`` depending on the input's rank and memory layout: only what holds on
    both paths is stated.
    """
    if has_bias is None:
        has_bias = bias is not None
    if input is None or weight is None:
        return None
    if not input or not weight:
        raise ShapeError(f"both arguments to linear need to be at least 1D, but they are "
                         f"{len(input)}D and {len(weight)}D", shapes=(input, weight))
    out = matmul(input, t(weight))
    if not has_bias:
        return out
    if len(weight) == 1:
        if len(input) == 2:  # always addmm, which needs a matrix
            raise ShapeError("linear: with a bias, weight must be 2-D, got 1-D", shape=weight)
        return None  # addmm (error) or matmul (fine): depends on the input's layout
    if bias is None:
        return out
    if len(bias) <= 1:  # a bias of 0 or 1 dims: the same rule on both paths (it expands to out)
        if bias and dim_eq(bias[0], weight[0]) is False and _is_one(bias[0]) is False:
            raise ShapeError(f"linear: bias {fmt_shape(bias)} does not match the {weight[0]} "
                             f"output features", shapes=(bias, weight), sizes=(bias[0], weight[0]))
        return out
    if len(input) == 2:  # addmm: the bias expands to the (N, out) result
        expand(bias, out)
        return out
    return None


# -- views and reshapes -------------------------------------------------------------------
def numel(shape: MaybeShape) -> Optional[Dim]:
    return None if shape is None else product(shape)


def _check_sizes(op: str, sizes: Sequence[Dim], allow_minus_one: bool) -> None:
    for d in sizes:
        if type(d) is int and d < 0 and not (allow_minus_one and d == -1):
            raise ShapeError(f"{op}: invalid shape dimension {d}", dim=d)


def reshape(shape: MaybeShape, requested: Sequence[Dim], *, nondegenerate: bool = False) -> MaybeShape:
    """``reshape``/``view`` sizes: at most one ``-1``, inferred from the element count.

    The result is known even for an unknown input when ``requested`` has no ``-1``. A size
    mismatch raises only when it holds for every value of the symbols; with ``nondegenerate``,
    for every value at least 1 (``(B, T, C)`` to ``(B, T, C, 2)`` then raises: only ``B*T*C == 0``
    would make it work; ``(B, C, H, W)`` to ``(C, H*W)`` does not: a batch of one is real).
    """
    requested = tuple(requested)
    _check_sizes("reshape", requested, allow_minus_one=True)
    infer = [i for i, d in enumerate(requested) if type(d) is int and d == -1]
    if len(infer) > 1:
        raise ShapeError("only one dimension can be inferred", requested=requested)
    if shape is None:
        if not infer:
            return requested
        return requested[:infer[0]] + (Sym.fresh("n"),) + requested[infer[0] + 1:]
    total = product(shape)
    known = product(d for i, d in enumerate(requested) if i not in infer)
    invalid = ShapeError(f"shape '{fmt_list(requested)}' is invalid for input of size {total}",
                         shape=shape, requested=requested, numel=total)
    if not infer:
        if dim_eq(total, known, at_least=1 if nondegenerate else 0) is False:
            raise invalid
        return requested
    if type(total) is int and type(known) is int:
        if known == 0:
            raise ShapeError(f"cannot reshape tensor of {total} elements into shape "
                             f"'{fmt_list(requested)}' because the unspecified dimension size -1 "
                             f"can be any value and is ambiguous", shape=shape, requested=requested)
        if total % known:
            raise invalid
    size = exact_div(total, known)
    if size is None:
        size = Sym.fresh("n")
    i = infer[0]
    return requested[:i] + (size,) + requested[i + 1:]


def permute(shape: MaybeShape, dims: Sequence[int]) -> MaybeShape:
    if shape is None:
        return None
    if len(dims) != len(shape):
        raise ShapeError(f"permute: the tensor has {len(shape)} dims but {len(dims)} were given",
                         shape=shape, dims=tuple(dims))
    wrapped = [wrap_dim(d, len(shape)) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise ShapeError("permute(): duplicate dims are not allowed.", dims=tuple(dims))
    return tuple(shape[d] for d in wrapped)


def transpose(shape: MaybeShape, dim0: int, dim1: int) -> MaybeShape:
    if shape is None:
        return None
    d0, d1 = wrap_dim(dim0, len(shape)), wrap_dim(dim1, len(shape))
    if not shape:
        return ()
    out = list(shape)
    out[d0], out[d1] = out[d1], out[d0]
    return tuple(out)


def t(shape: MaybeShape) -> MaybeShape:
    """``.t()``: 0-D and 1-D tensors are returned as they are."""
    if shape is None:
        return None
    if len(shape) > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(shape)}D",
                         shape=shape)
    return tuple(reversed(shape))


def mT(shape: MaybeShape) -> MaybeShape:
    """``.mT``: the last two dims swapped. PyTorch rejects 1-D tensors but lets 0-D through."""
    if shape is None:
        return None
    if len(shape) == 1:
        raise ShapeError("tensor.mT is only supported on matrices or batches of matrices. "
                         "Got 1-D tensor.", shape=shape)
    return shape[:-2] + (shape[-1], shape[-2]) if shape else ()


def unsqueeze(shape: MaybeShape, dim: int) -> MaybeShape:
    if shape is None:
        return None
    d = wrap_dim(dim, len(shape) + 1)  # one more place than dims: the end
    return shape[:d] + (1,) + shape[d:]


def squeeze_dims(shape: Shape, dim: Union[None, int, Sequence[int]] = None) -> Optional[List[int]]:
    """The dims ``squeeze`` removes (sorted), or None when a symbolic size may or may not be 1."""
    if dim is None:
        dims = list(range(len(shape)))
    elif isinstance(dim, int):
        dims = [wrap_dim(dim, len(shape))]
    else:
        dims = _wrap_dims(dim, len(shape))
    if not shape:
        return []
    drop = []
    for d in sorted(dims):
        one = _is_one(shape[d])
        if one is None:
            return None
        if one:
            drop.append(d)
    return drop


def squeeze(shape: MaybeShape, dim: Union[None, int, Sequence[int]] = None) -> MaybeShape:
    """Drop size-1 dims (all, one, or a tuple). A symbolic size may be 1: rank unknown."""
    if shape is None:
        return None
    drop = squeeze_dims(shape, dim)
    if drop is None:
        return None
    return tuple(s for i, s in enumerate(shape) if i not in drop)


def flatten(shape: MaybeShape, start_dim: int = 0, end_dim: int = -1) -> MaybeShape:
    if shape is None:
        return None
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if s > e:
        raise ShapeError("flatten() has invalid args: start_dim cannot come after end_dim",
                         start_dim=start_dim, end_dim=end_dim)
    if not shape:
        return (1,)
    return shape[:s] + (product(shape[s:e + 1]),) + shape[e + 1:]


def expand(shape: MaybeShape, sizes: Sequence[Dim]) -> MaybeShape:
    """``expand``: new dims go in front; ``-1`` keeps a size; only size-1 dims may grow."""
    sizes = tuple(sizes)
    if shape is None:
        return None
    if not shape and any(type(d) is int and d < 0 for d in sizes):
        # PyTorch does not check sizes for a 0-D tensor: with a size 0 beside it makes a tensor
        # of negative size, otherwise it fails computing the element count.
        if any(dim_eq(d, 0) is not False for d in sizes):
            return None
        raise ShapeError(f"expand: invalid size for a 0-D tensor: {fmt_list(sizes)}", sizes=sizes)
    if len(sizes) < len(shape):
        raise ShapeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or "
                         f"equal to the number of dimensions in the tensor ({len(shape)})",
                         shape=shape, sizes=sizes)
    lead = len(sizes) - len(shape)
    out: List[Dim] = []
    for i, target in enumerate(sizes):
        if i < lead:
            if type(target) is int and target < 0:
                raise ShapeError(f"expand: the expanded size of the tensor ({target}) isn't allowed "
                                 f"in a leading, non-existing dimension {i}", dim=i, size=target)
            out.append(target)
            continue
        size = shape[i - lead]
        if type(target) is int and target == -1:
            out.append(size)
            continue
        if type(target) is int and target < 0:
            raise ShapeError(f"expand: invalid size {target}", dim=i, size=target)
        if dim_eq(size, target) is False and _is_one(size) is False:
            raise ShapeError(
                f"The expanded size of the tensor ({target}) must match the existing size ({size}) "
                f"at non-singleton dimension {i}.  Target sizes: {fmt_list(sizes)}.  "
                f"Tensor sizes: {fmt_list(shape)}", dim=i, sizes=(size, target))
        out.append(target)
    return tuple(out)


def repeat(shape: MaybeShape, repeats: Sequence[Dim]) -> MaybeShape:
    """``repeat``: sizes multiply (the shape padded with leading 1s). Only a negative *product*
    is an error: a size-0 dim repeated ``-1`` times is fine."""
    repeats = tuple(repeats)
    if shape is None:
        return None
    if len(repeats) < len(shape):
        raise ShapeError("Number of dimensions of repeat dims can not be smaller than number of "
                         "dimensions of tensor", shape=shape, repeats=repeats)
    padded = (1,) * (len(repeats) - len(shape)) + shape
    out: List[Dim] = []
    for size, times in zip(padded, repeats):
        if type(times) is int and times < 0:
            if dim_eq(size, 0) is False:
                raise ShapeError(f"Trying to create tensor with negative dimension {size * times}: "
                                 f"{fmt_list([p * r for p, r in zip(padded, repeats)])}",
                                 shape=shape, repeats=repeats)
            out.append(0)  # PyTorch goes on only when the size is 0
        else:
            out.append(size * times)
    return tuple(out)


def narrow(shape: MaybeShape, dim: int, start: int, length: Dim) -> MaybeShape:
    """``narrow(dim, start, length)``: ``start`` in ``[-size, size]`` (negative counts from the
    end), and ``start + length`` within the size."""
    if shape is None:
        return None
    if not shape:
        raise ShapeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    size = shape[d]
    if type(length) is int and length < 0:
        raise ShapeError("narrow(): length must be non-negative.", length=length)
    if type(size) is int:
        if not -size <= start <= size:
            raise ShapeError(f"start out of range (expected to be in range of [{-size}, {size}], "
                             f"but got {start})", dim=d, start=start, size=size)
        begin = start % size if start < 0 else start
        if type(length) is int and begin + length > size:
            raise ShapeError(f"start ({begin}) + length ({length}) exceeds dimension size ({size}).",
                             dim=d, start=begin, length=length, size=size)
    return shape[:d] + (length,) + shape[d + 1:]


def diagonal(shape: MaybeShape, offset: int = 0, dim1: int = 0, dim2: int = 1) -> MaybeShape:
    """``diagonal``: drops ``dim1`` and ``dim2`` and appends the diagonal's length."""
    if shape is None:
        return None
    d1, d2 = wrap_dim(dim1, len(shape)), wrap_dim(dim2, len(shape))
    if d1 == d2:
        raise ShapeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}", dims=(dim1, dim2))
    s1, s2 = shape[d1], shape[d2]
    if type(s1) is int and type(s2) is int:
        size: Dim = max(min(s1, s2 - offset), 0) if offset >= 0 else max(min(s1 + offset, s2), 0)
    elif offset == 0 and dim_eq(s1, s2):
        size = s1
    else:
        size = Sym.fresh("n")
    return tuple(s for i, s in enumerate(shape) if i not in (d1, d2)) + (size,)


# -- joining and splitting ----------------------------------------------------------------
def cat(shapes: Sequence[MaybeShape], dim: int = 0) -> MaybeShape:
    """``torch.cat``. PyTorch skips 1-D empty tensors (legacy): ``cat([zeros(0), x])`` is ``x``."""
    if not shapes:
        raise ShapeError("torch.cat(): expected a non-empty list of Tensors")
    if any(s is None for s in shapes):
        return None
    for i, s in enumerate(shapes):
        if not s:
            raise ShapeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated",
                             position=i)
    skipped = [dim_eq(s[0], 0) if len(s) == 1 else False for s in shapes]
    if None in skipped:
        if any(len(s) != 1 for s in shapes):
            return None  # whether a maybe-empty 1-D tensor is skipped changes the rules
        if False not in skipped and not -1 <= dim <= 0:
            return None  # all may be skipped, and then PyTorch never checks `dim`
        skipped = [False] * len(shapes)  # all 1-D: skipping or not, the sizes add up the same
    kept = [(i, s) for i, s in enumerate(shapes) if not skipped[i]]
    if not kept:
        return shapes[0]
    ref_i, ref = kept[0]
    d = wrap_dim(dim, len(ref))
    total: Dim = 0
    for i, s in kept:
        if len(s) != len(ref):
            raise ShapeError(f"Tensors must have same number of dimensions: got {len(ref)} and "
                             f"{len(s)}", position=i, shapes=(ref, s))
        for k in range(len(ref)):
            if k != d and dim_eq(s[k], ref[k]) is False:
                raise ShapeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                                 f"size {ref[k]} but got size {s[k]} for tensor number {i} in the "
                                 f"list.", position=i, dim=k, sizes=(ref[k], s[k]))
        total = total + s[d]
    return ref[:d] + (total,) + ref[d + 1:]


def stack(shapes: Sequence[MaybeShape], dim: int = 0) -> MaybeShape:
    if not shapes:
        raise ShapeError("stack expects a non-empty TensorList")
    known = [s for s in shapes if s is not None]
    if not known:
        return None
    ref = known[0]
    d = wrap_dim(dim, len(ref) + 1)
    for i, s in enumerate(shapes):
        if s is None:
            continue
        if len(s) != len(ref) or any(dim_eq(x, y) is False for x, y in zip(s, ref)):
            raise ShapeError(f"stack expects each tensor to be equal size, but got "
                             f"{fmt_list(ref)} at entry 0 and {fmt_list(s)} at entry {i}",
                             position=i, shapes=(ref, s))
    return ref[:d] + (len(shapes),) + ref[d:]


def split(shape: MaybeShape, split_size_or_sections: Union[int, Sequence[Dim]],
          dim: int = 0) -> Optional[List[Shape]]:
    """``torch.split``: an int size (the last piece smaller) or a list of sizes summing up."""
    if shape is None:
        return None
    if not shape:
        raise ShapeError("split expects at least a 1-dimensional tensor", shape=shape)
    d = wrap_dim(dim, len(shape))
    size = shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0:
            raise ShapeError(f"split expects split_size be non-negative, but got split_size={step}")
        if type(size) is not int:
            return None  # the number of pieces depends on the symbol
        if step == 0:
            if size:
                raise ShapeError(f"split_size can only be 0 if dimension size is 0, but got "
                                 f"dimension size of {size}", size=size)
            return [shape]
        count = max(-(-size // step), 1)
        pieces = [step] * (count - 1) + [size - step * (count - 1)]
    elif isinstance(split_size_or_sections, Sym):
        # `qkv.split(n_embd, dim=2)` of `3 * n_embd`: as many pieces as the size divides into (for a non-zero size)
        count = exact_div(size, split_size_or_sections)
        if type(count) is not int or count < 1:
            return None
        pieces = [split_size_or_sections] * count
    else:
        pieces = list(split_size_or_sections)
        _check_sizes("split_with_sizes", pieces, allow_minus_one=False)
        if dim_eq(sum(pieces, 0), size) is False:
            raise ShapeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input "
                             f"tensor's size at dimension {d}), but got split_sizes={fmt_list(pieces)}",
                             size=size, sections=tuple(pieces))
    return [shape[:d] + (p,) + shape[d + 1:] for p in pieces]


def chunk(shape: MaybeShape, chunks: int, dim: int = 0) -> Optional[List[Shape]]:
    """``torch.chunk``: pieces of ``ceil(size / chunks)``, so possibly fewer than ``chunks``."""
    if shape is None:
        return None
    if not shape:
        raise ShapeError("chunk expects at least a 1-dimensional tensor", shape=shape)
    if chunks <= 0:
        raise ShapeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, len(shape))
    size = shape[d]
    if type(size) is not int:
        piece = exact_div(size, chunks)  # `chunk(3)` of `3 * inner`: three pieces of `inner` (or three empty ones)
        return [shape[:d] + (piece,) + shape[d + 1:]] * chunks if piece is not None else None
    if size == 0:  # PyTorch keeps the count: `chunks` empty pieces
        return [shape] * chunks
    return split(shape, -(-size // chunks), d)


def unbind(shape: MaybeShape, dim: int = 0) -> Optional[List[Shape]]:
    if shape is None:
        return None
    d = wrap_dim(dim, len(shape), scalar_as_1d=False)
    if type(shape[d]) is not int:
        return None
    return [shape[:d] + shape[d + 1:]] * shape[d]


def reduce(shape: MaybeShape, dim: Union[None, int, Sequence[int]] = None,
           keepdim: bool = False) -> MaybeShape:
    """``sum``/``mean``-style reductions. ``dim=None`` or an empty tuple reduces every dim."""
    if shape is None:
        return None
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        dims = set(range(len(shape)))
    else:
        dims = set(_wrap_dims([dim] if isinstance(dim, int) else dim, len(shape)))
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


# -- indexing -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Mask:
    """A boolean tensor used as an index (``x[mask]``); ``shape=None`` when unknown."""
    shape: MaybeShape


@dataclass(frozen=True)
class Take:
    """A list of ints used as an index (``x[:, [-1], :]``): that dim becomes ``len(positions)``, in place."""
    positions: tuple


def _slice_length(size: Dim, item: slice) -> Dim:
    start, stop, step = item.start, item.stop, item.step
    if step is None:
        step = 1
    if type(step) is int and step <= 0:
        raise ShapeError("slice step cannot be zero" if step == 0 else "step must be greater than zero",
                         step=step)
    ints = all(v is None or type(v) is int for v in (start, stop, step))
    if ints and type(size) is int:
        return len(range(*slice(start, stop, step).indices(size)))  # Python's clamping = PyTorch's
    if ints and start in (None, 0) and stop is None and step == 1:
        return size
    if ints and (stop == 0 or (type(start) is int and type(stop) is int and (start >= 0) == (stop >= 0)
                               and stop <= start)):
        return 0
    if start in (None, 0) and step == 1 and stop is not None:  # x[:n + 1]: min(n + 1, size)
        length = prefix_length(size, stop)
        if length is not None:
            return length
    return Sym.fresh("n")


@dataclass(frozen=True)
class Gather:
    """An integer tensor used as an index (``x[ids]``, ``x[rows, cols]``) of this shape."""
    shape: Shape


def index(shape: MaybeShape, items: Sequence[object]) -> MaybeShape:
    """``x[items]``: ints (or a Sym for an int of unknown value), slices, ``None``, ``...``, one boolean mask
    (:class:`Mask`: its dims become one dim of fresh length, in place), integer tensors (:class:`Gather`) and
    lists of ints (:class:`Take`).

    PyTorch applies ints, slices and ``None`` first (an int is a ``select``: unlike NumPy it takes no part in
    the advanced index), then the advanced indices: their shapes broadcast together into one block, in place
    when they index adjacent dims, else in front.

    Unknown (None): two or more masks, or a mask with other advanced indices (counts must broadcast: data),
    two or more ``...`` (PyTorch then skips dims once per ellipsis, past the end).
    """
    if shape is None:
        return None
    items = tuple(items)
    masks = [it for it in items if isinstance(it, Mask)]
    advanced = [it for it in items if isinstance(it, (Take, Gather))]
    if sum(1 for it in items if it is Ellipsis) > 1 or len(masks) > 1 or (masks and advanced) or \
            any(it.shape is None or not it.shape for it in masks):
        return None
    consumed = sum(len(it.shape) if isinstance(it, Mask) else
                   0 if it is None or it is Ellipsis else 1 for it in items)
    if consumed > len(shape):
        raise ShapeError(f"too many indices for tensor of dimension {len(shape)}",
                         rank=len(shape), indices=consumed)
    out: List[object] = []  # dims of the result, and (in place of advanced indices) the Gather of each
    pos = 0  # the next dim of `shape`
    outside: Optional[ShapeError] = None  # an advanced index out of bounds: raised only if the result has elements
    for it in items:
        if it is Ellipsis:
            skip = len(shape) - consumed
            out.extend(shape[pos:pos + skip])
            pos += skip
        elif it is None:
            out.append(1)
        elif isinstance(it, Mask):
            for k, m in enumerate(it.shape):
                if dim_eq(m, shape[pos + k]) is False:
                    raise ShapeError(f"The shape of the mask {fmt_list(it.shape)} at index {k} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{fmt_list(shape[pos:])} at index {k}", dim=pos + k)
            out.append(Sym.fresh("nnz"))  # ints and slices apply first; the mask stays in place
            pos += len(it.shape)
        elif isinstance(it, slice):
            out.append(_slice_length(shape[pos], it))
            pos += 1
        elif isinstance(it, (Take, Gather)) and type(shape[pos]) is int and shape[pos] == 0:
            # An empty dim has no index at all: PyTorch raises for any index with elements, at once.
            ishape = (len(it.positions),) if isinstance(it, Take) else it.shape
            if any(type(d) is int and d == 0 for d in ishape):
                out.append(Gather(ishape))
            elif all(type(d) is int for d in ishape):
                raise ShapeError(f"index is out of bounds for dimension {pos} with size 0", dim=pos, size=0)
            else:
                return None
            pos += 1
        elif isinstance(it, Take):
            size = shape[pos]
            for p in it.positions:
                if type(size) is int and not -size <= p < size and outside is None:
                    outside = ShapeError(f"index {p} is out of bounds for dimension {pos} with size {size}",
                                         dim=pos, index=p, size=size)
            out.append(Gather((len(it.positions),)))
            pos += 1
        elif isinstance(it, Gather):
            out.append(it)
            pos += 1
        elif type(it) is int:
            size = shape[pos]
            if type(size) is int and not -size <= it < size:
                raise ShapeError(f"index {it} is out of bounds for dimension {pos} with size {size}",
                                 dim=pos, index=it, size=size)
            pos += 1
        elif isinstance(it, Sym):
            if type(shape[pos]) is int and shape[pos] == 0:  # whatever the int, an empty dim has no such index
                raise ShapeError(f"index is out of bounds for dimension {pos} with size 0", dim=pos, size=0)
            pos += 1
        else:
            return None
    out.extend(shape[pos:])
    if not advanced:  # basic indexing (most subscripts): no block to place
        return tuple(out)
    places = [i for i, d in enumerate(out) if isinstance(d, Gather)]
    block = broadcast(*(out[i].shape for i in places))  # raises for index shapes that do not broadcast
    rest = [d for d in out if not isinstance(d, Gather)]
    if places[-1] - places[0] + 1 == len(places):  # adjacent: the block stays where they are
        result = (*rest[:places[0]], *block, *rest[places[0]:])
    else:
        result = (*block, *rest)
    if outside is not None and not any(type(d) is int and d == 0 for d in result):
        if all(type(d) is int for d in result):
            raise outside  # PyTorch checks the indices while it fills the result: only when it has elements
        return None
    return result


# -- einsum -------------------------------------------------------------------------------
_ELLIPSIS = "..."


def _parse_subscripts(term: str, equation: str) -> List[str]:
    labels: List[str] = []
    i = 0
    while i < len(term):
        if term[i] == " ":  # spaces separate labels; they never join dots into an ellipsis
            i += 1
        elif term.startswith(_ELLIPSIS, i):
            if _ELLIPSIS in labels:
                raise ShapeError(f"einsum(): found more than one ellipsis in '{equation}'")
            labels.append(_ELLIPSIS)
            i += 3
        elif term[i].isascii() and term[i].isalpha():
            labels.append(term[i])
            i += 1
        else:
            raise ShapeError(f"einsum(): invalid subscript given at index {i} in the equation "
                             f"string, subscripts must be in [a-zA-Z]")
    return labels


def einsum(equation: str, shapes: Sequence[MaybeShape]) -> MaybeShape:
    """``torch.einsum`` with a literal equation: sizes of a label broadcast across operands
    (1 against n), but a label repeated within one operand (a diagonal) needs equal sizes.
    Implicit output: the ellipsis dims, then the labels seen once, in ASCII order."""
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        more = "more" if len(shapes) > len(terms) else "fewer"
        raise ShapeError(f"einsum(): {more} operands were provided than specified in the equation",
                         operands=len(shapes), terms=len(terms))
    parsed = [_parse_subscripts(term, equation) for term in terms]
    if any(s is None for s in shapes):
        return None
    sizes: dict = {}
    ell: Shape = ()
    counts: dict = {}
    for k, (labels, shape) in enumerate(zip(parsed, shapes)):
        named = len(labels) - (_ELLIPSIS in labels)
        if len(shape) < named or (len(shape) != named and _ELLIPSIS not in labels):
            raise ShapeError(f"einsum(): the number of subscripts in the equation ({named}) does "
                             f"not match the number of dimensions ({len(shape)}) for operand {k}"
                             + ("" if _ELLIPSIS in labels else " and no ellipsis was given"),
                             operand=k)
        dims = list(shape)
        local: dict = {}
        for label in labels:
            if label == _ELLIPSIS:
                span = len(shape) - named
                ell = broadcast(ell, tuple(dims[:span]))
                del dims[:span]
                continue
            size = dims.pop(0)
            counts[label] = counts.get(label, 0) + 1
            if label in local:
                if dim_eq(local[label], size) is False:
                    raise ShapeError(f"einsum(): subscript {label} is repeated for operand {k} but "
                                     f"the sizes don't match, {local[label]} != {size}", operand=k)
                continue
            local[label] = size
            if label in sizes:
                merged = broadcast_dims(sizes[label], size)
                if merged is _CLASH:
                    raise ShapeError(f"einsum(): operands do not broadcast: subscript {label} has "
                                     f"size {sizes[label]} and {size}", label=label)
                sizes[label] = merged
            else:
                sizes[label] = size
    if arrow:
        out_labels = _parse_subscripts(rhs, equation)
        for label in out_labels:
            if label != _ELLIPSIS and label not in sizes:
                raise ShapeError(f"einsum(): output subscript {label} does not appear in the "
                                 f"equation for any input operand", label=label)
            if out_labels.count(label) > 1:
                raise ShapeError(f"einsum(): output subscript {label} appears more than once in "
                                 f"the output", label=label)
    else:
        out_labels = [_ELLIPSIS] + sorted(label for label, n in counts.items() if n == 1)
    out: List[Dim] = []
    for label in out_labels:
        out.extend(ell if label == _ELLIPSIS else (sizes[label],))
    return tuple(out)


__all__ = [
    "Mask", "MaybeShape", "ShapeError", "aligned", "bmm", "broadcast", "broadcast_dims", "cat",
    "chunk", "diagonal", "dot", "einsum", "expand", "flatten", "index", "linear", "matmul", "mm", "mT", "mv",
    "narrow", "numel", "permute", "reduce", "repeat", "reshape", "split", "squeeze", "squeeze_dims", "stack", "t",
    "transpose", "unbind", "unsqueeze", "wrap_dim",
]
