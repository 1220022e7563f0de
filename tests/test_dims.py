"""Symbolic dimensions: the algebra (normal form, equality, printing) and shapes/layouts with symbols.

What is said with symbols must hold for every value of them (non-negative sizes); what cannot be
known stays unknown (None, or a fresh symbol for a size). The generated checks against PyTorch
with symbols live in ``test_shapes_truth.py`` and ``test_layout_truth.py`` ("sym" mode).
"""

from __future__ import annotations

import pytest

from torchwise.analysis import dims
from torchwise.analysis import shapes as S
from torchwise.analysis.dims import (
    Sym, dim_eq, dim_lt, exact_div, fmt_shape, is_known_int, product,
)
from torchwise.analysis.layout import Layout, can_view, view_strides

B, T, C, H = (Sym.var(n) for n in ("B", "T", "C", "H"))


def fresh(dim) -> bool:
    return isinstance(dim, Sym) and dim.is_fresh


# -- the algebra ------------------------------------------------------------------------------
def test_normal_form_makes_equality_semantic():
    assert 2 * C == C + C and hash(2 * C) == hash(C + C)
    assert (B + 1) * (B - 1) == B * B - 1
    assert B * T == T * B and B * (T + C) == B * T + B * C
    assert B - B == 0 and type(B - B) is int  # no symbol left: a plain int
    assert (C + 3) - C == 3 and type((C + 3) - C) is int
    assert B != T and B != 1 and C + 1 != C
    assert len({2 * C, C + C, C * 2}) == 1


def test_printing_reads_like_code():
    assert str(4 * C) == "4*C"
    assert str(B * T) == "B*T"
    assert str(Sym.var("n") + 1) == "n + 1"
    assert str(-B) == "-B" and str(B - 1) == "B - 1" and str(1 - B) == "-B + 1"
    assert str(C * C) == "C**2"
    assert str(2 * B * T + C - 3) == "2*B*T + C - 3"
    assert str(Sym.var("config.n_embd") * 4) == "4*n_embd"  # a size read from a config, as people name it
    assert str(Sym.var("b@GPT.forward") + 1) == "b + 1"  # a caller's size, tagged apart from the callee's
    assert fmt_shape((Sym.var("batch_size"), 512)) == "(batch_size, 512)"
    assert fmt_shape((3,)) == "(3,)" and fmt_shape(()) == "()" and fmt_shape(None) == "?"


def test_syms_are_immutable_and_have_no_truth_value():
    with pytest.raises(AttributeError):
        B._terms = ()
    with pytest.raises(TypeError):
        bool(B)


def test_fresh_symbols_are_unrelated_and_never_clash_with_names():
    a, b = Sym.fresh(), Sym.fresh()
    assert a != b and a.is_fresh and not B.is_fresh and not (2 * a).is_fresh
    assert "#" in str(a)  # not an identifier: never a variable of the analysed code
    assert dim_eq(a, b) is None and dim_eq(a, a) is True


def test_exact_division():
    assert (4 * C) // 2 == 2 * C
    assert (3 * C) // 2 is None
    assert exact_div(B * T * C, C) == B * T
    assert exact_div(6 * B, 3) == 2 * B
    assert exact_div(3 * B, 2) is None
    assert exact_div(B * T + T, B + 1) == T
    assert exact_div(B, T) is None and exact_div(12, 5) is None and exact_div(12, 4) == 3
    assert exact_div(B, 0) is None and exact_div(0, B) == 0


def test_subs_and_product():
    assert (B * T + C).subs({"B": 2, "T": 3, "C": 1}) == 7
    assert (B * T).subs({"B": 2}) == 2 * T
    assert product((B, T, 2)) == 2 * B * T and product(()) == 1
    assert is_known_int(3) and not is_known_int(B) and not is_known_int(True)


@pytest.mark.parametrize(("a", "b", "expected"), [
    (2, 2, True), (2, 3, False), (C, C, True), (2 * C, C + C, True),
    (C, C + 1, False),        # differ by a constant
    (B, T, None),             # may or may not be equal
    (B, 2 * B, None),         # equal when B == 0
    (2 * B, 5, False),        # an even number is never 5
    (B + 1, 0, False),        # sizes are >= 0
    (B * T + 1, 0, False),
    (B, 1, None), (B * T, B, None),
])
def test_dim_eq(a, b, expected):
    assert dim_eq(a, b) is expected
    assert dim_eq(b, a) is expected


def test_dim_lt_and_assumptions():
    assert dim_lt(B, B + 1) is True and dim_lt(B + 1, B) is False and dim_lt(B, T) is None
    assert dim_lt(0, B) is None  # B may be 0
    assert dim_lt(1, B * T, at_least=2) is True and dim_eq(B, 1, at_least=2) is False
    assert dim_eq(B * T, B, at_least=2) is False  # T >= 2


# -- shapes with symbols -------------------------------------------------------------------------
def test_matmul_and_linear_with_symbols():
    assert S.matmul((B, T, C), (C, 4 * C)) == (B, T, 4 * C)
    assert S.matmul((C,), (B, C, T)) == (B, T)
    assert S.linear((B, T, C), (4 * C, C), (4 * C,)) == (B, T, 4 * C)
    assert S.matmul((B, T, C), (T, C)) == (B, T, C)  # C vs T: unknown, so no error
    with pytest.raises(S.ShapeError, match="inner sizes C vs C \\+ 1"):
        S.matmul((B, C), (C + 1, T))


def test_broadcast_with_symbols():
    assert S.broadcast((B, 1), (1, T)) == (B, T)
    assert S.broadcast((B, T, C), (C,)) == (B, T, C)
    out = S.broadcast((B,), (T,))  # B vs T is not an error: either may be 1, or they are equal
    assert len(out) == 1 and fresh(out[0])
    assert S.broadcast((B,), (3,)) == (3,)  # works only if B is 1 or 3, and then gives 3
    out = S.broadcast((C,), (C + 1,))  # works for C = 0 (giving 0) and C = 1 (giving 2)
    assert len(out) == 1 and fresh(out[0])
    with pytest.raises(S.ShapeError, match="dim -1 is C \\+ 2 vs C \\+ 3"):
        S.broadcast((C + 2,), (C + 3,))  # both >= 2 and different: certainly an error
    with pytest.raises(S.ShapeError):
        S.broadcast((B + 2, T), (0, T))


def test_reshape_with_symbols():
    assert S.reshape((B, T, C), (B * T, C)) == (B * T, C)
    assert S.reshape((B, T, C), (-1, C)) == (B * T, C)
    assert S.reshape((B, T, C), (B, -1)) == (B, T * C)
    assert S.reshape((B, T, 4 * C), (B, T, 4, -1)) == (B, T, 4, C)
    odd = S.reshape((B, 3), (-1, 2))  # 3*B/2: a size, but no polynomial
    assert len(odd) == 2 and fresh(odd[0]) and odd[1] == 2
    assert S.reshape(None, (B, 3)) == (B, 3)  # the requested sizes are the answer
    with pytest.raises(S.ShapeError, match="shape '\\[B \\+ 1, 3\\]' is invalid for input of size 2\\*B \\+ 2"):
        S.reshape((B + 1, 2), (B + 1, 3))  # 3*(B + 1) is never 2*(B + 1): B + 1 >= 1
    assert S.reshape((B, 3), (B, 4)) == (B, 4)  # equal when B == 0: not an error


def test_unknowns_stay_unknown():
    assert S.squeeze((B, 1)) is None          # B may be 1
    assert S.squeeze((B, 1), 1) == (B,)
    assert S.squeeze((B + 2, 1)) == (B + 2,)  # B + 2 is never 1
    assert S.split((B, 4), 2) is None         # how many pieces depends on B
    assert S.split((B, 4), 2, dim=1) == [(B, 2), (B, 2)]
    assert S.split((B, 4), [B - 1, 1], dim=0) == [(B - 1, 4), (1, 4)]
    assert S.unbind((B, 4)) is None
    assert S.matmul(None, (C, T)) is None
    assert S.index((B, T), [slice(None), slice(None, 3)])[0] == B
    assert S.index((B, T), [slice(None), slice(None, 3)])[1] == Sym.var("min(3, T)")  # its own symbol
    assert fresh(S.index((B, T), [slice(None), slice(None, -B)])[1])    # counted from the end: unknown
    assert fresh(S.index((B, T), [S.Mask((B, T))])[0])                 # data-dependent length
    assert S.index((B, T), [0]) == (T,)                                # B may be 0: no error said
    assert S.einsum("bij,bjk->bik", [(B, T, C), (B, C, H)]) == (B, T, H)
    assert S.expand((1, C), (B, -1)) == (B, C)
    assert S.cat([(B, C), (T, C)], 0) == (B + T, C)


def test_prefix_lengths():
    """``x[:n]``: min(n, size), decided where the order is known, one symbol (the same each time) where not; it
    broadcasts against n itself as n (min(n, N) is n, or N < n must be 1)."""
    N = Sym.var("N")
    assert dims.prefix_length(5, 3) == 3 and dims.prefix_length(3, 5) == 3
    assert dims.prefix_length(T, T) == T and dims.prefix_length(T + 1, T) == T and dims.prefix_length(T, T + 1) == T
    m = dims.prefix_length(N, T + 1)
    assert m == dims.prefix_length(N, T + 1) and dims.minimum_operands(m) == (T + 1, N)
    assert dims.prefix_length(N, T - 1) is None  # may be negative
    assert S.broadcast_dims(T + 1, m) == T + 1 and S.broadcast_dims(m, T + 1) == T + 1
    assert dims.rename(m, {"N": 197, "T": 196}.get) == 197 and dims.rename(m, {"N": 50, "T": 196}.get) == 50


# -- layouts with symbols ------------------------------------------------------------------------
def test_symbolic_layouts():
    x = Layout.contiguous((B, T, C))
    assert x.strides == (T * C, C, 1) and x.is_contiguous() is True
    assert x.view(B * T, C).strides == (C, 1) and x.can_view(B * T, C) is True
    assert x.can_view(-1) is True
    # Transposed: contiguous, and viewable, exactly when T or C is 1 (or the tensor is empty).
    assert x.transpose(1, 2).is_contiguous() is None
    assert x.transpose(1, 2).can_view(B, T * C) is None
    # The classic attention bug: with known head counts and a batch that is surely not empty.
    heads = Layout.contiguous((B + 1, 12, 7, 64)).transpose(1, 2)
    assert heads.can_view(B + 1, 7, 768) is False
    assert heads.to_contiguous().can_view(B + 1, 7, 768) is True
    # ... with a batch that may be empty, "no" is not certain: an empty tensor views as anything.
    assert Layout.contiguous((B, 12, 7, 64)).transpose(1, 2).can_view(B, 7, 768) is None
    assert can_view((3, 4), (1, 3), (12,)) is False and can_view((3, 4), None, (12,)) is None


def test_size_one_strides_are_not_stated_with_symbols():
    y = Layout.contiguous((1, C)).expand(B, -1)
    assert y.shape == (B, C) and y.strides == (0, 1)  # the B == 1 case keeps a stride, unstated
    z = Layout.contiguous((B, H, T, C)).transpose(1, 2).to_contiguous()
    assert z.strides == (H * T * C, H * C, C, 1) and z.is_contiguous() is True


# -- the nondegenerate assumption: every symbolic size >= 2 -------------------------------------
def test_attention_view_after_transpose_is_flagged_when_sizes_are_nondegenerate():
    hs, nh = Sym.var("hs"), Sym.var("nh")
    for heads, head_size in [(12, hs), (12, 64), (nh, hs), (nh, 64), (1 + nh, hs)]:
        y = Layout.contiguous((B, heads, T, head_size))           # att @ v
        moved = y.transpose(1, 2)                                  # (B, T, nh, hs)
        width = heads * head_size
        # Works only when T == 1 or B == 0: undecided in general, impossible for real sizes.
        assert moved.can_view(B, T, width) is None
        assert moved.can_view(B, T, width, nondegenerate=True) is False
        assert moved.can_view(B, T, -1, nondegenerate=True) is False
        assert can_view(moved.shape, moved.strides, (B, T, width), nondegenerate=True) is False
        assert view_strides(moved.shape, moved.strides, (B, T, width), nondegenerate=True) is None
        with pytest.raises(S.ShapeError, match="view size is not compatible"):
            moved.view(B, T, width, nondegenerate=True)
        # ... after .contiguous() it is fine, and the strides are known.
        fixed = moved.to_contiguous()
        assert fixed.can_view(B, T, width, nondegenerate=True) is True
        assert fixed.can_view(B, T, -1, nondegenerate=True) is True
        assert fixed.view(B, T, width, nondegenerate=True).strides == (T * width, width, 1)
        # reshape copies instead: no view question at all.
        assert moved.reshape(B, T, width).shape == (B, T, width)


def test_attention_view_with_the_embedding_size_as_its_own_symbol():
    hs = Sym.var("hs")
    moved = Layout.contiguous((B, 12, T, hs)).transpose(1, 2)
    # C is not known to be 12*hs; whatever it is, the view cannot work (wrong count or strides).
    assert moved.can_view(B, T, C, nondegenerate=True) is False
    assert moved.can_view(B, T, C) is None


def test_nondegenerate_keeps_what_works():
    x = Layout.contiguous((B, T, C))
    assert view_strides(x.shape, x.strides, (B * T, C), nondegenerate=True) == (C, 1)
    assert x.can_view(B * T, C, nondegenerate=True) is True
    assert x.view(B * T, C, nondegenerate=True).strides == (C, 1)
    assert x.can_view(-1, nondegenerate=True) is True
    assert x.transpose(1, 2).can_view(B, T * C, nondegenerate=True) is False
    assert x.transpose(1, 2).can_view(B * C, T, nondegenerate=True) is False
    assert x.transpose(1, 2).can_view(B, C, T, nondegenerate=True) is True  # its own shape
    # ints are what they are: a size-1 dim still lets the transposed view work.
    one = Layout.contiguous((B, 1, C)).transpose(1, 2)
    assert one.can_view(B, C, nondegenerate=True) is True
    assert one.view(B, C, nondegenerate=True).strides == (C, 1)
    empty = Layout.contiguous((B, 0, C)).transpose(1, 2)
    assert empty.can_view(B, 0, nondegenerate=True) is True


def test_nondegenerate_leaves_unknown_strides_open():
    # A stride nobody knows (a fresh symbol in the strides only) may still be 0 or 1.
    s = Sym.fresh("stride")
    assert can_view((B, C), (s, 1), (B * C,), nondegenerate=True) is None
    assert can_view((B, C), (C, 1), (B * C,), nondegenerate=True) is True


def test_reshape_with_nondegenerate_sizes():
    assert S.reshape((B, T, C), (B, T, C, 2)) == (B, T, C, 2)  # B == 0: both empty
    with pytest.raises(S.ShapeError, match=r"shape '\[B, T, C, 2\]' is invalid for input of size B\*C\*T"):
        S.reshape((B, T, C), (B, T, C, 2), nondegenerate=True)
    with pytest.raises(S.ShapeError):
        S.reshape((B, 3), (B, 4), nondegenerate=True)
    with pytest.raises(S.ShapeError):
        Layout.contiguous((B, T, C)).can_view(B, T, C, 2, nondegenerate=True)
    assert S.reshape((B, T, C), (B * T, C), nondegenerate=True) == (B * T, C)
    assert S.reshape((B, T, C), (B, T, -1), nondegenerate=True) == (B, T, C)
    assert S.reshape((B, T, C), (B, T, H), nondegenerate=True) == (B, T, H)  # H may be C
    assert dim_eq(B * T * C, 2 * B * T * C) is None
    assert dim_eq(B * T * C, 2 * B * T * C, at_least=2) is False
