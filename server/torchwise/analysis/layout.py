"""Strides, contiguity, and whether ``.view`` works - PyTorch's own algorithms, reimplemented.

Strides are ``tuple[Dim, ...]`` (``None`` when unknown), one per dim, in elements. Every
``*_strides`` function takes the input's ``shape`` and ``strides`` and returns the strides of the
result, mirroring what PyTorch's view functions compute; the result's *shape* comes from
:mod:`~torchwise.analysis.shapes` (which raises :class:`ShapeError` for invalid arguments, and so
do these functions). :class:`Layout` bundles shape and strides.

Symbolic sizes. The algorithms compare sizes and strides (``size != 1``, ``numel < numel``). With
symbols they run once per *case* - each symbol 0, 1, or at least 2 - and, inside a case, both ways
on every comparison still open (see :func:`_outcomes`). An answer is given only when every case
and path agrees with it; a stride on which they disagree becomes a fresh symbol (a stride nobody
knows), and a yes/no question (:func:`is_contiguous`, :func:`can_view`) gets None.

The opt-in assumption ``nondegenerate=True`` (:func:`view_strides`, :func:`can_view`,
``shapes.reshape``) keeps only the case where every symbol of a size is at least 2 (ints are what
they are): code that works only when ``T == 1`` or the batch is empty, such as
``x.transpose(1, 2).view(B, T, C)``, is then decided "impossible". Named symbols and the fresh
ones of the input's shape (sizes nobody knows) are sizes; a fresh symbol found only in the
strides or the target (a stride nobody knows) still takes every case.

Two conventions keep symbolic strides useful (with all-``int`` shapes everything is exact):

1. Unless a tensor is provably empty, its strides are those it has when it is not empty.
   (PyTorch strides an empty tensor by ``max(size, 1)`` products, so ``(B, C)`` would otherwise
   have no known stride.)
2. The stride of a dim whose size is 1 is not stated: the one given may differ from PyTorch's.
   PyTorch itself ignores it - contiguity, ``computeStride`` (for every dim of size > 1) and
   the dense check never depend on it - and the one place that does (``clone`` of a non-dense
   tensor, which orders dims by stride) gives unknown strides then.

Yes/no answers use neither: an empty tensor is contiguous and views as any shape, so "no" is
said only when the tensor provably has elements, and size-1 strides do not change the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, wraps
from itertools import product as _each
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from torchwise.analysis import shapes as S
from torchwise.analysis.dims import Dim, Shape, Sym, dim_eq, dim_lt, product

Strides = Tuple[Dim, ...]
MaybeStrides = Optional[Strides]
_SYMBOL_LIMIT = 5   # 3**5 cases at most; more symbols: unknown (sizes assumed >= 2: twice as many)
_RUN_LIMIT = 400    # runs of an algorithm over all cases and paths; more: unknown (an editor waits)


class _Undecided:
    def __repr__(self) -> str:
        return "UNDECIDED"


UNDECIDED = _Undecided()  # view_strides: the answer depends on values the symbols hide
_EMPTY = object()         # a path on which the tensor has no element


# -- deciding with symbols ----------------------------------------------------------------
class _Case:
    """Comparisons in one case: every symbol left is >= 2. ``q(x)`` returns a decided ``x`` as
    it is and answers an open one (None) both ways, one per path."""

    def __init__(self, ask: Callable[[Optional[bool]], bool]):
        self._ask = ask

    def __call__(self, answer: Optional[bool]) -> bool:
        return self._ask(answer)

    @staticmethod
    def eq(a: Dim, b: Dim) -> Optional[bool]:
        return dim_eq(a, b, at_least=2)

    @staticmethod
    def ne(a: Dim, b: Dim) -> Optional[bool]:
        same = dim_eq(a, b, at_least=2)
        return None if same is None else not same

    @staticmethod
    def lt(a: Dim, b: Dim) -> Optional[bool]:
        return dim_lt(a, b, at_least=2)

    def both(self, x: Optional[bool], y: Optional[bool]) -> bool:
        return False if x is False or y is False else self(x) and self(y)

    def either(self, x: Optional[bool], y: Optional[bool]) -> bool:
        return True if x is True or y is True else self(x) or self(y)


def _outcomes(run: Callable[[_Case], object], limit: int) -> Optional[list]:
    """``run(q)`` once per combination of answers to the comparisons it cannot decide.

    Every concrete value of the symbols follows one of these paths, so what all paths give is
    certain. None when there are more than ``limit`` paths.
    """
    results: list = []
    pending: List[Tuple[bool, ...]] = [()]
    while pending:
        if len(results) >= limit:
            return None
        forced = pending.pop()
        taken: List[bool] = []

        def ask(answer: Optional[bool], forced=forced, taken=taken) -> bool:
            if answer is not None:
                return answer
            if len(taken) < len(forced):
                choice = forced[len(taken)]
            else:
                choice = True
                pending.append(tuple(taken) + (False,))
            taken.append(choice)
            return choice

        results.append(run(_Case(ask)))
    return results


def _subs(dims: Sequence[Dim], env: Dict[str, int]) -> tuple:
    return tuple(d.subs(env) if isinstance(d, Sym) and env else d for d in dims)


def _symbols(dims: Sequence[Dim]) -> set:
    return {n for d in dims if isinstance(d, Sym) for n in d.symbols}


def _solve(run, shape: Shape, *more: Sequence[Dim],
           nondegenerate: bool = False) -> Optional[List[Tuple[dict, object]]]:
    """``(case, result)`` for every case and path of ``run(q, shape, *more)``; ``_EMPTY`` where
    the tensor has no element (unless it is empty for sure: then the run itself decides).
    ``nondegenerate``: size symbols (those of ``shape``, and every named one) only take the
    case ``>= 2``, so they do not count towards the limit on cases."""
    names = sorted(_symbols(shape).union(*map(_symbols, more)))
    big = {n for n in names if n in _symbols(shape) or "#" not in n} if nondegenerate else set()
    if len(names) - len(big) > _SYMBOL_LIMIT or len(names) > 2 * _SYMBOL_LIMIT:
        return None
    surely_empty = dim_eq(product(shape), 0, at_least=2 if nondegenerate else 0) is True
    # Only a polynomial with a negative coefficient (``n - 1``) can be negative in some case.
    signed = [d for seq in (shape,) + more for d in seq
              if isinstance(d, Sym) and any(c < 0 for c in d.terms.values())]
    found = []
    for values in _each(*[(None,) if n in big else (0, 1, None) for n in names]):
        env = {n: v for n, v in zip(names, values) if v is not None}
        if any(dim_lt(d.subs(env), 0, at_least=2) for d in signed):
            continue  # a negative size or stride: no tensor is in this case
        args = [_subs(seq, env) for seq in (shape,) + more]

        def guarded(q, args=args):
            if not surely_empty and q(q.eq(product(args[0]), 0)):
                return _EMPTY
            return run(q, *args)

        results = _outcomes(guarded, _RUN_LIMIT - len(found))
        if results is None:
            return None
        found.extend((env, r) for r in results)
    return found


def _yes_no(runs) -> Optional[bool]:
    """The answer of every case, an empty tensor counting as yes; None when they differ."""
    if not runs:
        return None
    answers = {True if r is _EMPTY else r for _, r in runs}
    return answers.pop() if len(answers) == 1 else None


def _strides(runs, out_shape: Shape):
    """The strides every non-empty case agrees on, stride by stride; a stride on which cases
    disagree becomes a fresh symbol, except that a case where that dim has size 1 does not count
    (the size-1 convention). None: no answer; UNDECIDED: some cases say "impossible" (None),
    others give strides."""
    kept = [(env, r) for env, r in (runs or ()) if r is not _EMPTY]
    if not kept:
        return None
    if any(r is None for _, r in kept):
        return None if all(r is None for _, r in kept) else UNDECIDED
    whole = [r for env, r in kept if None not in r]
    if not whole:
        return tuple(Sym.fresh("stride") for _ in out_shape)
    candidate = next((r for env, r in kept if not env and None not in r), whole[0])
    out = []
    for i, dim in enumerate(candidate):
        def agrees(env, r):
            size = out_shape[i].subs(env) if isinstance(out_shape[i], Sym) else out_shape[i]
            if dim_eq(size, 1, at_least=2):
                return True  # size 1 in this case: its stride is not stated (convention 2)
            return (dim.subs(env) if isinstance(dim, Sym) else dim) == r[i]
        out.append(dim if all(agrees(env, r) for env, r in kept) else Sym.fresh("stride"))
    return tuple(out)


def _strides_or_none(runs, out_shape: Shape) -> MaybeStrides:
    result = _strides(runs, out_shape)
    return None if result is UNDECIDED else result


def _known_shape(fn):
    """An answer only for a known shape: with an unknown one (None) the answer is None."""
    @wraps(fn)
    def wrapper(shape, *args, **kwargs):
        return None if shape is None else fn(shape, *args, **kwargs)
    return wrapper


# -- contiguity ---------------------------------------------------------------------------
def _row_major(q: _Case, shape: Shape) -> Strides:
    # c10 contiguous strides: products of max(size, 1), so (2, 0, 3) has strides (3, 3, 1).
    out: List[Dim] = []
    step: Dim = 1
    for size in reversed(shape):
        out.append(step)
        step = step * (1 if q(q.lt(size, 1)) else size)
    return tuple(reversed(out))


@lru_cache(maxsize=1024)
def _contiguous_strides(shape: Shape) -> Strides:
    found = _strides(_solve(_row_major, shape), shape)
    return found if isinstance(found, tuple) else tuple(Sym.fresh("stride") for _ in shape)


def contiguous_strides(shape: Sequence[Dim]) -> Strides:
    """Row-major strides as PyTorch makes them: ``(B, T, C)`` -> ``(T*C, C, 1)``."""
    return _contiguous_strides(tuple(shape))


def _contiguous(q: _Case, shape: Shape, strides: Strides) -> bool:
    # c10 compute_contiguous: empty tensors are contiguous; size-1 dims are skipped, whatever
    # their stride; the others must be the running product of the sizes inside them.
    if q(q.eq(product(shape), 0)):
        return True
    expected: Dim = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if q(q.ne(size, 1)):
            if not q(q.eq(stride, expected)):
                return False
            expected = expected * size
    return True


@lru_cache(maxsize=1024)
def _is_contiguous(shape: Shape, strides: Strides) -> Optional[bool]:
    return _yes_no(_solve(_contiguous, shape, strides))


@_known_shape
def is_contiguous(shape: Shape, strides: MaybeStrides) -> Optional[bool]:
    """``Tensor.is_contiguous()``: True, False, or None (unknown)."""
    return None if strides is None else _is_contiguous(tuple(shape), tuple(strides))


# -- views --------------------------------------------------------------------------------
def _compute_stride(q: _Case, old: Shape, old_strides: Strides, new: Shape) -> MaybeStrides:
    """ATen ``computeStride``: split the old dims into chunks that are contiguous with respect
    to each other; each chunk must be rebuilt by consecutive new dims with the same element
    count. None: the view is impossible."""
    if not old:
        return (1,) * len(new)
    if q(q.eq(product(old), 0)):  # any view of an empty tensor works
        if len(old) == len(new) and all(q(q.eq(a, b)) for a, b in zip(old, new)):
            return tuple(old_strides)
        return _row_major(q, new)
    new_strides: List[Dim] = [0] * len(new)
    view_d = len(new) - 1
    chunk_base = old_strides[-1]  # the stride of the innermost dim of the chunk
    tensor_numel: Dim = 1
    view_numel: Dim = 1
    for tensor_d in range(len(old) - 1, -1, -1):
        tensor_numel = tensor_numel * old[tensor_d]
        # A chunk ends where the next outer dim is not laid out right after this chunk.
        if tensor_d == 0 or q.both(q.ne(old[tensor_d - 1], 1),
                                   q.ne(old_strides[tensor_d - 1], tensor_numel * chunk_base)):
            while view_d >= 0 and q.either(q.lt(view_numel, tensor_numel), q.eq(new[view_d], 1)):
                new_strides[view_d] = view_numel * chunk_base
                view_numel = view_numel * new[view_d]
                view_d -= 1
            if not q(q.eq(view_numel, tensor_numel)):
                return None
            if tensor_d > 0:
                chunk_base = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


@lru_cache(maxsize=1024)
def _view_strides(shape: Shape, strides: Strides, new_shape: Shape, nondegenerate: bool):
    runs = _solve(_compute_stride, shape, strides, new_shape, nondegenerate=nondegenerate)
    if not runs:
        return UNDECIDED
    result = _strides(runs, new_shape)
    if result is None and any(r is _EMPTY for _, r in runs):
        return UNDECIDED if any(r is None for _, r in runs) else tuple(Sym.fresh("stride") for _ in new_shape)
    return result


def view_strides(shape: Optional[Shape], strides: MaybeStrides, new_shape: Optional[Shape], *,
                 nondegenerate: bool = False):
    """``tensor.view(new_shape)``'s strides (``new_shape`` resolved, same element count): a
    tuple, ``None`` when the view is certainly impossible, or ``UNDECIDED``. With
    ``nondegenerate``, for every symbolic size at least 2 (see the module's notes)."""
    if shape is None or strides is None or new_shape is None:
        return UNDECIDED
    return _view_strides(tuple(shape), tuple(strides), tuple(new_shape), bool(nondegenerate))


@_known_shape
def can_view(shape: Shape, strides: MaybeStrides, new_shape: Sequence[Dim], *,
             nondegenerate: bool = False) -> Optional[bool]:
    """Whether ``tensor.view(new_shape)`` works (``-1`` allowed): the strides allow it without a
    copy. None when unknown. A size mismatch raises :class:`ShapeError` (as ``shapes.reshape``).
    ``nondegenerate``: assume every symbolic size is at least 2."""
    target = S.reshape(shape, new_shape, nondegenerate=nondegenerate)
    if strides is None:
        return None
    result = view_strides(shape, strides, target, nondegenerate=nondegenerate)
    return None if result is UNDECIDED else result is not None


def _reshape(q: _Case, shape: Shape, strides: Strides, new_shape: Shape) -> Strides:
    view = _compute_stride(q, shape, strides, new_shape)
    return view if view is not None else _row_major(q, new_shape)


@_known_shape
def reshape_strides(shape: Shape, strides: MaybeStrides, new_shape: Shape) -> MaybeStrides:
    """``reshape``: a view when ``computeStride`` allows, else a row-major copy."""
    if strides is None:
        return None
    return _strides_or_none(_solve(_reshape, tuple(shape), tuple(strides), tuple(new_shape)), new_shape)


@_known_shape
def flatten_strides(shape: Shape, strides: MaybeStrides, start_dim: int = 0,
                    end_dim: int = -1) -> MaybeStrides:
    """``flatten``: a 0-D tensor is reshaped to ``(1,)``; ``start == end`` returns the tensor
    itself; otherwise it is a ``reshape``."""
    new_shape = S.flatten(shape, start_dim, end_dim)
    if shape and S.wrap_dim(start_dim, len(shape)) == S.wrap_dim(end_dim, len(shape)):
        return strides
    return reshape_strides(shape, strides, new_shape)


# -- copies -------------------------------------------------------------------------------
def _after_contiguous(q: _Case, shape: Shape, strides: Strides) -> Strides:
    return tuple(strides) if _contiguous(q, shape, strides) else _row_major(q, shape)


@_known_shape
def after_contiguous(shape: Shape, strides: MaybeStrides) -> MaybeStrides:
    """``.contiguous()`` returns the tensor itself when it already is (size-1 strides kept)."""
    if strides is None:
        return None
    return _strides_or_none(_solve(_after_contiguous, tuple(shape), tuple(strides)), shape)


def _dense_nonoverlapping(q: _Case, shape: Shape, strides: Strides) -> bool:
    # c10 compute_non_overlapping_and_dense: sorted by stride (size < 2 dims last), the strides
    # must be exactly the running products of the sizes.
    if len(shape) == 1:
        return q.either(q.lt(shape[0], 2), q.eq(strides[0], 1))
    order: List[int] = []
    for d in range(len(shape)):  # insertion sort; the outcome does not depend on tie order
        at = len(order)
        while at > 0 and _sorts_before(q, shape, strides, d, order[at - 1]):
            at -= 1
        order.insert(at, d)
    expected: Dim = 1
    for d in order:
        if q(q.lt(shape[d], 2)):
            return True
        if not q(q.eq(strides[d], expected)):
            return False
        expected = expected * shape[d]
    return True


def _sorts_before(q: _Case, shape: Shape, strides: Strides, a: int, b: int) -> bool:
    if q(q.lt(shape[a], 2)):
        return False
    if q(q.lt(shape[b], 2)):
        return True
    return q(q.lt(strides[a], strides[b]))


def _dense_strides(q: _Case, shape: Shape, strides: Strides) -> Strides:
    # ATen infer_dense_strides: order the dims by stride (a stable insertion sort; stride-0 dims
    # stay put; equal strides put the smaller size inside), then lay them out densely.
    rank = len(shape)
    perm = list(range(rank - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if q(q.eq(s0, 0)) or q(q.eq(s1, 0)):
            return 0
        if q(q.lt(s0, s1)):
            return -1
        if q(q.lt(s1, s0)):
            return 1
        return 1 if q(q.lt(shape[d1], shape[d0])) else 0

    for i in range(1, rank):
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            cmp = should_swap(perm[dim0], perm[dim1])
            if cmp > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif cmp < 0:
                break
    out: List[Dim] = [0] * rank
    step: Dim = 1
    for d in perm:
        out[d] = step
        if q(q.lt(1, shape[d])):  # size 0 counts as 1: no element, any stride will do
            step = step * shape[d]
    return tuple(out)


def _after_clone(q: _Case, shape: Shape, strides: Strides, symbolic: Tuple[int]) -> tuple:
    # TensorImpl's is_non_overlapping_and_dense: contiguous (so any empty tensor) or dense.
    if _contiguous(q, shape, strides) or _dense_nonoverlapping(q, shape, strides):
        return tuple(strides)
    if symbolic[0] and any(q(q.eq(size, 1)) for size in shape):
        # The stride of a size-1 dim is not stated (convention 2), and infer_dense_strides
        # orders the dims by every stride, those included: unknown.
        return (None,) * len(shape)
    return _dense_strides(q, shape, strides)


@_known_shape
def after_clone(shape: Shape, strides: MaybeStrides) -> MaybeStrides:
    """``.clone()`` (``preserve_format``): a dense, non-overlapping tensor keeps its strides (a
    transposed clone stays transposed); otherwise dense strides in the same dim order."""
    if strides is None:
        return None
    symbolic = (int(any(isinstance(d, Sym) for d in tuple(shape) + tuple(strides))),)
    return _strides_or_none(_solve(_after_clone, tuple(shape), tuple(strides), symbolic), tuple(shape))


# -- views that only move strides ---------------------------------------------------------
@_known_shape
def permute_strides(shape: Shape, strides: MaybeStrides, dims: Sequence[int]) -> MaybeStrides:
    S.permute(shape, dims)
    return None if strides is None else tuple(strides[S.wrap_dim(d, len(shape))] for d in dims)


@_known_shape
def transpose_strides(shape: Shape, strides: MaybeStrides, dim0: int, dim1: int) -> MaybeStrides:
    S.transpose(shape, dim0, dim1)
    if strides is None or not shape:
        return strides
    out = list(strides)
    d0, d1 = S.wrap_dim(dim0, len(shape)), S.wrap_dim(dim1, len(shape))
    out[d0], out[d1] = out[d1], out[d0]
    return tuple(out)


@_known_shape
def t_strides(shape: Shape, strides: MaybeStrides) -> MaybeStrides:
    S.t(shape)
    return None if strides is None else tuple(reversed(strides))


@_known_shape
def mT_strides(shape: Shape, strides: MaybeStrides) -> MaybeStrides:
    S.mT(shape)
    return transpose_strides(shape, strides, -2, -1) if shape else strides


@_known_shape
def unsqueeze_strides(shape: Shape, strides: MaybeStrides, dim: int) -> MaybeStrides:
    """ATen inferUnsqueezeGeometry: the new dim's stride is ``size * stride`` of the dim it is
    put before (1 at the end)."""
    S.unsqueeze(shape, dim)
    if strides is None:
        return None
    d = S.wrap_dim(dim, len(shape) + 1)
    new = 1 if d >= len(shape) else shape[d] * strides[d]
    return tuple(strides[:d]) + (new,) + tuple(strides[d:])


@_known_shape
def squeeze_strides(shape: Shape, strides: MaybeStrides,
                    dim: Union[None, int, Sequence[int]] = None) -> MaybeStrides:
    drop = S.squeeze_dims(shape, dim)
    if strides is None or drop is None:
        return None
    return tuple(s for i, s in enumerate(strides) if i not in drop)


def _expand(q: _Case, shape: Shape, strides: Strides, target: Shape) -> Strides:
    out: List[Dim] = [0] * len(target)
    lead = len(target) - len(shape)
    for i in range(len(target) - 1, -1, -1):
        size, stride = (shape[i - lead], strides[i - lead]) if i >= lead \
            else (1, target[i + 1] * out[i + 1])
        out[i] = stride if q(q.eq(size, target[i])) else 0
    return tuple(out)


@_known_shape
def expand_strides(shape: Shape, strides: MaybeStrides, sizes: Sequence[Dim]) -> MaybeStrides:
    """ATen inferExpandGeometry: a grown dim gets stride 0; a new leading dim gets stride 0,
    or ``size * stride`` of the next dim when its size is 1. A 0-D tensor expands to all 0s."""
    target = S.expand(shape, sizes)
    if strides is None:
        return None
    if not shape:
        return (0,) * len(target)
    return _strides_or_none(_solve(_expand, tuple(shape), tuple(strides), target), target)


@_known_shape
def narrow_strides(shape: Shape, strides: MaybeStrides, dim: int, start: int, length: Dim) -> MaybeStrides:
    S.narrow(shape, dim, start, length)
    return strides  # a narrower window on the same memory


@_known_shape
def diagonal_strides(shape: Shape, strides: MaybeStrides, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> MaybeStrides:
    """The diagonal steps along both dims at once: ``stride[dim1] + stride[dim2]``, appended."""
    S.diagonal(shape, offset, dim1, dim2)
    if strides is None:
        return None
    d1, d2 = S.wrap_dim(dim1, len(shape)), S.wrap_dim(dim2, len(shape))
    return tuple(s for i, s in enumerate(strides) if i not in (d1, d2)) + (strides[d1] + strides[d2],)


@_known_shape
def index_strides(shape: Shape, strides: MaybeStrides, items: Sequence[object]) -> MaybeStrides:
    """Basic indexing (PyTorch's applySlicing, item by item): an int selects (drops the dim), a
    slice keeps it with ``stride * step``, ``None`` unsqueezes, ``...`` skips. A boolean mask
    or an integer index copies (advanced indexing): unknown here."""
    if S.index(shape, items) is None or strides is None or any(isinstance(it, (S.Mask, S.Take, S.Gather))
                                                               for it in items):
        return None
    consumed = sum(0 if it is None or it is Ellipsis else 1 for it in items)
    sizes: List[Dim] = list(shape)
    out: List[Dim] = list(strides)
    d = 0  # the current dim of the partly indexed tensor
    for it in items:
        if it is Ellipsis:
            d += len(shape) - consumed
        elif it is None:
            out.insert(d, 1 if d >= len(sizes) else sizes[d] * out[d])
            sizes.insert(d, 1)
            d += 1
        elif isinstance(it, slice):
            out[d] = out[d] * (1 if it.step is None else it.step)
            d += 1
        else:  # an int (or a Sym int): select
            del out[d], sizes[d]
    return tuple(out)


# -- the bundle ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """A tensor's geometry: a known shape and its strides (``None`` when unknown). Each method
    returns the result's layout, raises :class:`ShapeError` where PyTorch raises, or returns
    None when the result's rank is unknown."""
    shape: Shape
    strides: MaybeStrides

    @classmethod
    def contiguous(cls, shape: Sequence[Dim]) -> "Layout":
        shape = tuple(shape)
        return cls(shape, contiguous_strides(shape))

    def is_contiguous(self) -> Optional[bool]:
        return is_contiguous(self.shape, self.strides)

    def can_view(self, *sizes: Dim, nondegenerate: bool = False) -> Optional[bool]:
        return can_view(self.shape, self.strides, _sizes(sizes), nondegenerate=nondegenerate)

    def _to(self, shape: Optional[Shape], strides: MaybeStrides) -> Optional["Layout"]:
        return None if shape is None else Layout(shape, strides)

    def transpose(self, dim0: int, dim1: int) -> "Layout":
        return Layout(S.transpose(self.shape, dim0, dim1),
                      transpose_strides(self.shape, self.strides, dim0, dim1))

    def permute(self, *dims: int) -> "Layout":
        dims = _sizes(dims)
        return Layout(S.permute(self.shape, dims), permute_strides(self.shape, self.strides, dims))

    def t(self) -> "Layout":
        return Layout(S.t(self.shape), t_strides(self.shape, self.strides))

    def mT(self) -> "Layout":
        return Layout(S.mT(self.shape), mT_strides(self.shape, self.strides))

    def unsqueeze(self, dim: int) -> "Layout":
        return Layout(S.unsqueeze(self.shape, dim), unsqueeze_strides(self.shape, self.strides, dim))

    def squeeze(self, dim: Union[None, int, Sequence[int]] = None) -> Optional["Layout"]:
        return self._to(S.squeeze(self.shape, dim), squeeze_strides(self.shape, self.strides, dim))

    def expand(self, *sizes: Dim) -> "Layout":
        sizes = _sizes(sizes)
        return Layout(S.expand(self.shape, sizes), expand_strides(self.shape, self.strides, sizes))

    def narrow(self, dim: int, start: int, length: Dim) -> "Layout":
        return Layout(S.narrow(self.shape, dim, start, length),
                      narrow_strides(self.shape, self.strides, dim, start, length))

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> "Layout":
        return Layout(S.diagonal(self.shape, offset, dim1, dim2),
                      diagonal_strides(self.shape, self.strides, offset, dim1, dim2))

    def __getitem__(self, items) -> Optional["Layout"]:
        items = items if isinstance(items, tuple) else (items,)
        return self._to(S.index(self.shape, items), index_strides(self.shape, self.strides, items))

    def to_contiguous(self) -> "Layout":
        return Layout(self.shape, after_contiguous(self.shape, self.strides))

    def clone(self) -> "Layout":
        return Layout(self.shape, after_clone(self.shape, self.strides))

    def reshape(self, *sizes: Dim) -> "Layout":
        new_shape = S.reshape(self.shape, _sizes(sizes))
        return Layout(new_shape, reshape_strides(self.shape, self.strides, new_shape))

    def view(self, *sizes: Dim, nondegenerate: bool = False) -> "Layout":
        new_shape = S.reshape(self.shape, _sizes(sizes), nondegenerate=nondegenerate)
        if self.strides is None:
            return Layout(new_shape, None)
        result = view_strides(self.shape, self.strides, new_shape, nondegenerate=nondegenerate)
        if result is None:
            raise S.ShapeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
                shape=self.shape, strides=self.strides, requested=new_shape)
        return Layout(new_shape, None if result is UNDECIDED else result)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Layout":
        return Layout(S.flatten(self.shape, start_dim, end_dim),
                      flatten_strides(self.shape, self.strides, start_dim, end_dim))


def _sizes(sizes: tuple) -> tuple:
    """``view(2, 3)`` and ``view((2, 3))`` alike."""
    return tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)


__all__ = [
    "Layout", "Strides", "UNDECIDED", "after_clone", "after_contiguous", "can_view",
    "contiguous_strides", "diagonal_strides", "expand_strides", "flatten_strides", "index_strides",
    "is_contiguous", "mT_strides", "narrow_strides", "permute_strides", "reshape_strides",
    "squeeze_strides", "t_strides", "transpose_strides", "unsqueeze_strides", "view_strides",
]
