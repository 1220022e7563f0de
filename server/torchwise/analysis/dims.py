"""Dimensions: an ``int`` or a symbolic polynomial (``B``, ``4*C``, ``B*T``, ``n + 1``).

Real code sizes tensors from variables, so a dimension is either a known ``int`` or a
:class:`Sym`, a polynomial with integer coefficients over named symbols. ``Sym`` is kept in a
normal form (monomial -> coefficient, zero coefficients dropped), so equality is semantic
(``2*C == C + C``), and arithmetic that cancels every symbol gives back a plain ``int``.

Every symbol stands for an unknown non-negative integer (a size). The questions
(:func:`dim_eq`, :func:`dim_lt`) answer ``True``/``False`` only when that holds for *every*
such value, and ``None`` otherwise: ``B`` vs ``T`` is unknown (they may be equal), ``C`` vs
``C + 1`` is certainly different, ``B`` vs ``2*B`` is unknown (``B`` may be 0).

Fresh symbols (:meth:`Sym.fresh`) name a size nobody knows (the length of ``x[mask]``): they
carry a ``#`` in their name so they can never collide with a variable of the analysed code.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from functools import lru_cache
from itertools import count
from math import gcd
from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union

Monomial = Tuple[str, ...]  # sorted symbol names, repeated for powers: C*C -> ("C", "C")
_CONSTANT: Monomial = ()
_fresh_ids = count(1)
_fresh_tag = ""  # inside ``fresh_names(tag)``: the tag of the fresh symbols made there


@contextmanager
def fresh_names(tag: str):
    """Fresh symbols made inside are numbered ``n#<tag>.1``, ``n#<tag>.2``... from 1 each time: a piece of code
    analysed again in the same way makes the very same symbols (values equal to the last analysis's, so what reads
    them can be reused). Tags must tell apart every piece analysed in one analysis; an analysis never meets two
    pieces analysed under one tag, except a piece and its own earlier analysis (whose facts it replaces)."""
    global _fresh_ids, _fresh_tag
    saved = _fresh_ids, _fresh_tag
    _fresh_ids, _fresh_tag = count(1), f"{tag}."
    try:
        yield
    finally:
        _fresh_ids, _fresh_tag = saved


class Sym:
    """An immutable polynomial over named symbols; never a constant (that is an ``int``)."""

    __slots__ = ("_terms", "_hash")
    _terms: Tuple[Tuple[Monomial, int], ...]  # sorted, no zero coefficient

    # -- constructors ------------------------------------------------------------------
    @staticmethod
    def var(name: str) -> "Sym":
        """The symbol ``name`` (any non-empty text: ``batch_size``, ``config.n_embd``)."""
        if not isinstance(name, str) or not name:
            raise ValueError("a symbol needs a non-empty name")
        return _make({(name,): 1})  # type: ignore[return-value]

    @staticmethod
    def fresh(hint: str = "n") -> "Sym":
        """A new symbol unrelated to every other: ``n#1``, ``n#2``, ..."""
        return Sym.var(f"{hint}#{_fresh_tag}{next(_fresh_ids)}")

    # -- views -------------------------------------------------------------------------
    @property
    def terms(self) -> Dict[Monomial, int]:
        return dict(self._terms)

    @property
    def symbols(self) -> frozenset:
        return frozenset(name for mono, _ in self._terms for name in mono)

    @property
    def is_fresh(self) -> bool:
        """True for a single fresh symbol (a size the analysis made up for an unknown)."""
        return len(self._terms) == 1 and self._terms[0][1] == 1 and len(self._terms[0][0]) == 1 \
            and "#" in self._terms[0][0][0]

    def subs(self, values: Mapping[str, "Dim"]) -> "Dim":
        """Substitute symbols (by name) with dimensions; the others stay. A quotient (``C // n_head``) or a prefix
        length (``min(n, T)``) is computed again from its substituted operands."""
        derived = None  # (no allocation in the common case: subs runs for every symbolic size)
        for name in self.symbols:
            if name not in values and (name in _QUOTIENTS or name in _MINIMA):
                value = _derived(name, values)
                if value is not None and value != Sym.var(name):
                    derived = derived or dict(values)
                    derived[name] = value
        if derived is not None:
            values = derived
        if all(type(values[n]) is int for n in self.symbols if n in values):  # the common, fast case
            terms: Dict[Monomial, int] = {}
            for mono, coeff in self._terms:
                left = []
                for name in mono:
                    if name in values:
                        coeff *= values[name]
                    else:
                        left.append(name)
                key = tuple(left)
                terms[key] = terms.get(key, 0) + coeff
            return _make(terms)
        total: Dim = 0
        for mono, coeff in self._terms:
            term: Dim = coeff
            for name in mono:
                term = term * (values[name] if name in values else Sym.var(name))
            total = total + term
        return total

    # -- arithmetic --------------------------------------------------------------------
    def __add__(self, other: "Dim") -> "Dim":
        other_terms = _terms_of(other)
        if other_terms is None:
            return NotImplemented
        terms = dict(self._terms)
        for mono, coeff in other_terms:
            terms[mono] = terms.get(mono, 0) + coeff
        return _make(terms)

    __radd__ = __add__

    def __neg__(self) -> "Dim":
        return _make({mono: -coeff for mono, coeff in self._terms})

    def __sub__(self, other: "Dim") -> "Dim":
        if _terms_of(other) is None:
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other: "Dim") -> "Dim":
        if _terms_of(other) is None:
            return NotImplemented
        return (-self) + other

    def __mul__(self, other: "Dim") -> "Dim":
        other_terms = _terms_of(other)
        if other_terms is None:
            return NotImplemented
        terms: Dict[Monomial, int] = {}
        for m1, c1 in self._terms:
            for m2, c2 in other_terms:
                mono = tuple(sorted(m1 + m2))
                terms[mono] = terms.get(mono, 0) + c1 * c2
        return _make(terms)

    __rmul__ = __mul__

    def __floordiv__(self, other: int) -> Optional["Dim"]:
        """Exact division by a non-zero int: ``None`` unless every coefficient divides."""
        if type(other) is not int:
            return NotImplemented
        if other == 0 or any(coeff % other for _, coeff in self._terms):
            return None
        return _make({mono: coeff // other for mono, coeff in self._terms})

    # -- identity ----------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        # Polynomial identity; a Sym is never an int (constants are normalised to int).
        return isinstance(other, Sym) and self._terms == other._terms

    def __hash__(self) -> int:
        return self._hash

    def __setattr__(self, name, value):
        raise AttributeError("Sym is immutable")

    def __bool__(self) -> bool:
        raise TypeError("a symbolic dimension has no truth value; use dim_eq")

    def __repr__(self) -> str:
        return f"Sym({str(self)!r})"

    def _raw(self) -> list:
        """The polynomial in its internal names (a quotient symbol is named by them, so that it is stable)."""
        out = []
        for i, (mono, coeff) in enumerate(sorted(self._terms, key=_print_order)):
            body = "*".join(name if mono.count(name) == 1 else f"{name}**{mono.count(name)}"
                            for name in sorted(set(mono)))
            text = body if abs(coeff) == 1 and body else (f"{abs(coeff)}*{body}" if body else str(abs(coeff)))
            out.append((f"-{text}" if coeff < 0 else text) if i == 0 else (f" - {text}" if coeff < 0 else f" + {text}"))
        return out

    def __str__(self) -> str:
        out = ""
        for i, (mono, coeff) in enumerate(sorted(self._terms, key=_print_order)):
            magnitude = abs(coeff)
            body = _mono_str(mono)
            text = body if magnitude == 1 and body else \
                (f"{magnitude}*{body if ' ' not in body or body.startswith('(') else f'({body})'}" if body
                 else str(magnitude))
            if i == 0:
                out = f"-{text}" if coeff < 0 else text
            else:
                out += f" - {text}" if coeff < 0 else f" + {text}"
        return out


Dim = Union[int, Sym]
Shape = Tuple[Dim, ...]


def _terms_of(value: object) -> Optional[Tuple[Tuple[Monomial, int], ...]]:
    if isinstance(value, Sym):
        return value._terms
    if type(value) is int:
        return ((_CONSTANT, value),) if value else ()
    return None


def _make(terms: Mapping[Monomial, int]) -> Dim:
    """The normal form: an int when no symbol is left, else a Sym."""
    kept = tuple(sorted((m, c) for m, c in terms.items() if c))
    if all(mono == _CONSTANT for mono, _ in kept):
        return kept[0][1] if kept else 0
    sym = object.__new__(Sym)
    object.__setattr__(sym, "_terms", kept)
    object.__setattr__(sym, "_hash", hash(kept))
    return sym


def _mono_str(mono: Monomial) -> str:
    parts = []
    for name in sorted(set(mono)):
        power = mono.count(name)
        shown = display_name(name)
        if " " in shown and (power > 1 or len(set(mono)) > 1):
            shown = f"({shown})"  # a quotient symbol in a product: (C // n_head)*B
        parts.append(shown if power == 1 else f"{shown}**{power}")
    return "*".join(parts)


_CHAIN = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


_TAG = re.compile(r"@[^\s)*+/-]*")


def display_name(name: str) -> str:
    """A symbol as people read it: a size read from a config, ``config.n_embd``, shows as ``n_embd``; one that came
    in from a caller, ``b@GPT.forward``, as ``b``."""
    if "@" in name:
        name = _TAG.sub("", name)
    return _CHAIN.sub(lambda m: m.group(0).rsplit(".", 1)[1], name) if "." in name else name


def _print_order(term: Tuple[Monomial, int]):
    mono, _ = term
    return (-len(mono), mono)  # highest degree first, the constant last: ``B*T + C + 1``


# -- questions about values ---------------------------------------------------------------
def is_known_int(dim: object) -> bool:
    return type(dim) is int


def _shifted(poly: Dim, at_least: int) -> Dict[Monomial, int]:
    """The terms of ``poly`` with every symbol ``s`` written ``s' + at_least`` (``s' >= 0``)."""
    if at_least and isinstance(poly, Sym):
        return dict(_shift(poly, at_least))
    return dict(_terms_of(poly) or ())


@lru_cache(maxsize=4096)
def _shift(poly: "Sym", at_least: int) -> Tuple[Tuple[Monomial, int], ...]:
    return _terms_of(poly.subs({name: Sym.var(name) + at_least for name in poly.symbols})) or ()


def _certainly_nonzero(poly: Dim, at_least: int = 0) -> bool:
    """True when ``poly`` is non-zero for every integer value ``>= at_least`` of its symbols."""
    terms = _shifted(poly, at_least)
    const = terms.pop(_CONSTANT, 0)
    if not terms:
        return const != 0
    step = 0
    for coeff in terms.values():
        step = gcd(step, coeff)
    if const % step:  # every value is const + a multiple of step, never 0
        return True
    if const > 0 and all(c > 0 for c in terms.values()):
        return True
    return const < 0 and all(c < 0 for c in terms.values())


def dim_eq(a: Dim, b: Dim, *, at_least: int = 0) -> Optional[bool]:
    """True when provably equal, False when provably different, None when unknown.

    Symbols range over the integers ``>= at_least`` (sizes: 0)."""
    diff = a - b
    if type(diff) is int:
        return diff == 0
    return False if _certainly_nonzero(diff, at_least) else None


def dim_lt(a: Dim, b: Dim, *, at_least: int = 0) -> Optional[bool]:
    """``a < b`` for every value of the symbols (True), for none (False), or unknown (None)."""
    terms = _shifted(b - a, at_least)
    const = terms.pop(_CONSTANT, 0)
    if all(c >= 0 for c in terms.values()) and const > 0:
        return True   # b - a >= const > 0
    if all(c <= 0 for c in terms.values()) and const <= 0:
        return False  # b - a <= 0
    return None


def product(dims: Iterable[Dim]) -> Dim:
    total: Dim = 1
    for dim in dims:
        total = total * dim
    return total


def exact_div(a: Dim, b: Dim) -> Optional[Dim]:
    """``q`` with ``a == b * q`` as polynomials, or None (not expressible, or ``b == 0``).

    Long division by the leading term (graded order): in a polynomial ring, when ``b`` divides
    ``a`` the leading term of ``b`` divides the leading term of every remainder, so a step that
    cannot divide proves there is no polynomial quotient.
    """
    if type(b) is int:
        if b == 0:
            return None
        if type(a) is int:
            return a // b if a % b == 0 else None
        return a // b
    lead_mono, lead_coeff = max(b._terms, key=lambda t: (len(t[0]), t[0]))
    quotient: Dim = 0
    rest: Dim = a
    for _ in range(64):  # the degree only decreases; the bound is a guard
        if rest == 0:
            return quotient
        rest_terms = _terms_of(rest)
        mono, coeff = max(rest_terms, key=lambda t: (len(t[0]), t[0]))
        left = list(mono)
        for name in lead_mono:
            if name not in left:
                return None
            left.remove(name)
        if coeff % lead_coeff:
            return None
        step = _make({tuple(left): coeff // lead_coeff})
        quotient = quotient + step
        rest = rest - step * b
    return None


def floordiv(a: Dim, b: Dim) -> Optional[Dim]:
    """``a // b`` of sizes (None when ``b`` is 0): exact where ``b`` divides ``a`` as polynomials (then the floor
    is that quotient for every value), else one symbol standing for the quotient, ``C // n_head``: the same
    symbol every time it is computed from the same operands, unrelated to everything else."""
    if type(b) is int:
        if b == 0:
            return None
        if type(a) is int:
            return a // b
        if b == 1:
            return a
    quotient = exact_div(a, b)
    if quotient is not None:
        return quotient
    atom = Sym.var(f"{_operand(a)} // {_operand(b)}")
    _QUOTIENTS[next(iter(atom.symbols))] = (a, b)
    return atom


_QUOTIENTS: Dict[str, tuple] = {}  # a quotient symbol's name -> its operands (to substitute into them)


def prefix_length(size: Dim, stop: Dim) -> Optional[Dim]:
    """``len(range(size)[:stop])`` for a ``stop`` with no negative part (``n + 1``, a size): ``min(stop, size)``,
    one symbol of its own when neither is surely the smaller (the same symbol for the same operands). None for a
    stop that may be negative (``-k``, ``n - 1``): Python then counts from the end."""
    if type(size) is int and type(stop) is int:
        return len(range(size)[:stop])
    if any(coeff < 0 for _, coeff in _terms_of(stop)):
        return None
    if dim_lt(size, stop + 1) is True:
        return size
    if dim_lt(stop, size + 1) is True:
        return stop
    atom = Sym.var(f"min({_operand(stop)}, {_operand(size)})")
    _MINIMA[next(iter(atom.symbols))] = (stop, size)
    return atom


def minimum_operands(dim: Dim) -> Optional[tuple]:
    """``(stop, size)`` when ``dim`` is one :func:`prefix_length` symbol, else None."""
    if type(dim) is not Sym or len(dim._terms) != 1 or dim._terms[0][1] != 1 or len(dim._terms[0][0]) != 1:
        return None
    return _MINIMA.get(dim._terms[0][0][0])


_MINIMA: Dict[str, tuple] = {}  # a prefix-length symbol's name -> (stop, size)


def _derived(name: str, values: Mapping[str, Dim]) -> Optional[Dim]:
    """A quotient or prefix-length symbol with ``values`` substituted into its operands."""
    def put(dim: Dim) -> Dim:
        return dim.subs(values) if type(dim) is Sym else dim
    if name in _MINIMA:
        stop, size = _MINIMA[name]
        return prefix_length(put(size), put(stop))
    a, b = _QUOTIENTS[name]
    return floordiv(put(a), put(b))


def rename(dim: Dim, replace) -> Dim:
    """``dim`` with each symbol ``name`` replaced by ``replace(name)`` (a dim; None keeps it); a quotient symbol
    is rebuilt from its replaced operands, so ``C // n_head`` becomes ``768 // 12 == 64``."""
    if type(dim) is not Sym:
        return dim
    mapping = {}
    for name in dim.symbols:
        parts = _QUOTIENTS.get(name)
        if parts is not None:
            new = floordiv(rename(parts[0], replace), rename(parts[1], replace))
            if new is not None and not (type(new) is Sym and new == Sym.var(name)):
                mapping[name] = new
            continue
        parts = _MINIMA.get(name)
        if parts is not None:
            new = prefix_length(rename(parts[1], replace), rename(parts[0], replace))
            if new is not None and not (type(new) is Sym and new == Sym.var(name)):
                mapping[name] = new
            continue
        new = replace(name)
        if new is not None:
            mapping[name] = new
    return dim.subs(mapping) if mapping else dim


def _operand(dim: Dim) -> str:
    text = str(dim) if type(dim) is int else "".join(dim._raw())
    return f"({text})" if any(c in text for c in " +*-") else text


def fmt_dim(dim: Dim) -> str:
    return str(dim)


def fmt_shape(shape: Optional[Sequence[Dim]], dim_text=str) -> str:
    """``(batch_size, 512)``; ``(3,)`` for 1-D; ``()`` for 0-D; ``?`` when unknown."""
    if shape is None:
        return "?"
    inner = ", ".join(dim_text(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def readable_dim(dim: Dim) -> str:
    """A size as a message or hover shows it: ``?`` for one made up for an unknown, or arithmetic on one (``n#7 - 2``:
    its name means nothing to a reader)."""
    if isinstance(dim, Sym) and any("#" in name for name in dim.symbols):
        return "?"
    return str(dim)


def readable_shape(shape: Optional[Sequence[Dim]]) -> str:
    """``fmt_shape`` for people: ``(B, ?, 64)``, never a made-up symbol's name (generated code keeps ``fmt_shape``)."""
    return fmt_shape(shape, readable_dim)


def fmt_list(shape: Sequence[Dim]) -> str:
    """PyTorch's own spelling of a size in messages: ``[5, 5]``."""
    return "[" + ", ".join(str(d) for d in shape) + "]"


__all__ = [
    "Dim", "Shape", "Sym", "dim_eq", "dim_lt", "display_name", "exact_div", "floordiv", "fmt_dim", "fmt_list",
    "minimum_operands", "prefix_length",
    "fmt_shape", "readable_dim", "readable_shape", "rename",
    "is_known_int", "product",
]
