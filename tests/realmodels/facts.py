"""What an engine value claims that the runtime can check, and the symbol arithmetic the checks need.

The engine grows while this is used: kinds of value it may not have (``SymbolicValue``, a list's
``length`` / ``element``, quotient symbols such as ``C // n_head`` that ``dims.rename`` rebuilds from
their operands) are looked up, not imported, so the checks work with any version of it.
"""

from __future__ import annotations

from typing import Callable, Optional

from torchwise.analysis import dims, values
from torchwise.analysis.dims import Sym
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue

SymbolicValue = getattr(values, "SymbolicValue", None)
_rename = getattr(dims, "rename", None)


def symbolic_dim(fact):
    """The size a ``SymbolicValue`` stands for (a claim only when the runtime value is an int)."""
    if SymbolicValue is not None and isinstance(fact, SymbolicValue) and isinstance(getattr(fact, "dim", None),
                                                                                   (int, Sym)):
        return fact.dim
    return None


def seq_length(fact: SeqValue):
    return len(fact.items) if fact.items is not None else getattr(fact, "length", None)


def seq_element(fact: SeqValue):
    """What every item of a list of unknown items is, when the engine says."""
    return getattr(fact, "element", None) if fact.items is None else None


def checkable(fact) -> bool:
    if isinstance(fact, TensorValue):
        return fact.shape is not None or fact.dtype is not None or fact.device is not None
    if isinstance(fact, ScalarValue):
        return fact.kind == "int" and fact.value is not None
    if isinstance(fact, SeqValue):
        if fact.kind == "iterator":
            return False  # a zip / enumerate: reading its items would use them up
        return seq_length(fact) is not None or checkable(seq_element(fact))
    return symbolic_dim(fact) is not None


def shape_text(shape) -> str:
    if shape is None:
        return "?"
    inner = ", ".join(map(str, shape))
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def fact_text(fact) -> str:
    if isinstance(fact, TensorValue):
        dtype = fact.dtype.short if fact.dtype is not None else "?"
        return f"Tensor[{dtype}, {shape_text(fact.shape)}] on {fact.device or '?'}"
    if isinstance(fact, ScalarValue):
        if fact.value is None:
            return fact.kind
        return f"{fact.kind} {fact.value!r}" if fact.kind == "str" else f"{fact.kind} {fact.value}"
    if isinstance(fact, SeqValue):
        if fact.items is not None:
            return f"{fact.kind} of {len(fact.items)}: ({', '.join(map(fact_text, fact.items))})"
        element = seq_element(fact)
        length = seq_length(fact)
        return f"{fact.kind} of {'?' if length is None else length}" + \
            (f", each {fact_text(element)}" if element is not None else "")
    if symbolic_dim(fact) is not None:
        return f"symbolic {symbolic_dim(fact)}"
    return "?" if fact is None else type(fact).__name__


def single_symbol(dim) -> Optional[str]:
    """``B`` -> "B"; ``2*B``, ``B*T``, ``B + 1`` -> None."""
    terms = dim.terms
    if len(terms) == 1:
        (monomial, coefficient), = terms.items()
        if coefficient == 1 and len(monomial) == 1:
            return monomial[0]
    return None


def base_symbols(dim) -> frozenset:
    """The symbols a dim is made of, through quotient symbols to their operands' symbols."""
    if _rename is None:
        return dim.symbols
    found: set = set()
    _rename(dim, lambda name: found.add(name))  # returns None: nothing is replaced
    return frozenset(found)


def evaluate(dim, value_of: Callable):
    """``dim`` with each base symbol that ``value_of`` knows replaced: an int when all are known."""
    if _rename is not None:
        return _rename(dim, value_of)
    known = {name: value_of(name) for name in dim.symbols}
    return dim.subs({name: value for name, value in known.items() if value is not None})
