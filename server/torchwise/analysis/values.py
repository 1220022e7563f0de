"""What the analysis knows about a value. ``None`` everywhere means "unknown".

Values are immutable; joining two (after an ``if``/``else``, around a loop) keeps
only what both agree on, so a fact survives only when it holds on every path.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Optional, Union

Dim = Any  # int | dims.Sym
Shape = tuple  # tuple[Dim, ...]


@dataclass(frozen=True)
class TensorValue:
    dtype: Any = None  # dtypes.DType
    shape: Optional[Shape] = None
    device: Optional[str] = None  # "cpu", "cuda", "cuda:1", "mps"
    strides: Optional[tuple] = None  # None: layout unknown
    requires_grad: Optional[bool] = None
    is_leaf: Optional[bool] = None
    why: Optional[str] = None  # why the dtype is what it is, for hover
    memory: Optional[str] = None  # "copies" / "shares memory with ..." for creation calls
    saved_by: Optional[str] = None  # the op whose backward reads this very tensor (exp, sigmoid, ...)

    def with_(self, **changes) -> "TensorValue":
        return replace(self, **changes)

    @property
    def rank(self) -> Optional[int]:
        return None if self.shape is None else len(self.shape)


@dataclass(frozen=True)
class NdarrayValue:
    dtype: Any = None
    shape: Optional[Shape] = None
    why: Optional[str] = None


@dataclass(frozen=True)
class ScalarValue:
    kind: str  # "bool" | "int" | "float" | "complex" | "str" | "none"
    value: Any = None  # the constant (an int may be a symbolic Dim), or None when unknown


@dataclass(frozen=True)
class SeqValue:
    kind: str  # "list" | "tuple" | "size" (torch.Size) | "iterator" (zip, enumerate: iterated once, no len)
    items: Optional[tuple] = None  # None: length unknown
    element: Any = None  # with items unknown: what every item is (a comprehension's element), when known
    length: Any = None  # with items unknown: the length (an int or a Sym), when known
    fields: Optional[tuple] = None  # a named tuple's field names: ("values", "indices") of ``x.max(dim=1)``

    @property
    def each(self):
        """What every item is: the items' join, or the element of a list of unknown items."""
        if self.items is None:
            return self.element
        if not self.items:
            return None
        item = self.items[0]
        for other in self.items[1:]:
            item = join(item, other)
        return item


VALUES_INDICES = ("values", "indices")  # the fields of torch.return_types (max, sort, topk, ...)


@dataclass(frozen=True)
class DeviceValue:
    device: Optional[str] = None


@dataclass(frozen=True)
class DtypeValue:
    dtype: Any = None


@dataclass(frozen=True)
class ModuleValue:
    """An ``nn.Module`` of a known layer type, with its parameters' facts and its settings. Containers
    (Sequential, ModuleList, ModuleDict) hold their sub-modules: layers or instances of this file's classes."""

    kind: str  # "Linear", "Conv2d", "Sequential", ...
    params: tuple = ()  # ((name, TensorValue), ...)
    config: tuple = ()  # ((name, value), ...): in_features, kernel_size, ...
    children: Optional[tuple] = ()  # sub-modules of containers, in order; None: not known one by one
    names: tuple = ()  # a ModuleDict's keys, parallel to children
    element: Any = None  # with children unknown: what every sub-module is (built in a loop or a comprehension)

    def param(self, name: str):
        return dict(self.params).get(name)

    def child(self, key):
        """A container's sub-module by name (ModuleDict) or index (Sequential, ModuleList); None when unknown."""
        if self.children is None:
            return self.element if isinstance(key, int) and self.kind != "ModuleDict" else None
        if isinstance(key, str):
            return dict(zip(self.names, self.children)).get(key)
        if isinstance(key, int) and -len(self.children) <= key < len(self.children):
            return self.children[key]
        return None

    @property
    def each(self):
        """What every sub-module of a container is, when they are all alike."""
        if self.children is None:
            return self.element
        if not self.children:
            return None
        item = self.children[0]
        for other in self.children[1:]:
            item = join(item, other)
        return item

    def setting(self, name: str, default=None):
        return dict(self.config).get(name, default)


@dataclass(frozen=True)
class SymbolicValue:
    """A value known only by a stable name, or an expression over such names: a parameter nobody passes facts
    to, ``config.n_embd``, ``C // self.n_head``. Used as a size it is that symbolic number (the op would raise if
    it were not an int); nothing else is known about it (it may be a float, a tensor...), so no other op reads it."""

    dim: Any  # dims.Sym (or an int an expression came to)
    is_int: bool = False  # known to be an int if anything (a default of 8, an `n_embd: int` config field)


@dataclass(frozen=True)
class InstanceValue:
    """An instance of a class of this file (``self`` inside it, or ``Block(config)``). ``bindings`` are the facts
    of the arguments it was built with, by ``__init__`` parameter name: its attributes, which the class's analysis
    states in terms of those parameters (``(heads, dim)``), read through them (``(8, 64)``, or the caller's names)."""

    class_name: str
    bindings: Optional[tuple] = None  # ((parameter name, value), ...); None: `self` (the class's own names)
    token: Any = field(default=None, repr=False)  # the construction call: sizes made up in __init__ differ per instance


@dataclass(frozen=True)
class LambdaValue:
    """``lambda x: m.dropout(m.c_proj(x))``: called, its body runs with the arguments and the names it captured."""

    node: Any = field(repr=False)  # the ast.Lambda
    captured: tuple = ()  # ((name, value), ...): the enclosing names its body reads, each bound once


@dataclass(frozen=True)
class PartialValue:
    """``functools.partial(nn.LayerNorm, bias = False)``: calling it makes that layer with these keywords (the
    call's own keywords win, as partial's do)."""

    qualname: str  # "torch.nn.LayerNorm"
    keywords: tuple = ()  # ((name, value), ...)


@dataclass(frozen=True)
class EitherValue:
    """One of a few modules, which depends on the path (``Sequential(...) if project_out else nn.Identity()``):
    calling it gives what the calls of all of them agree on."""

    options: tuple  # (ModuleValue | InstanceValue | LambdaValue, ...), at least two, none an EitherValue; in a
    # ModuleList, one may be ScalarValue("none"): ``PEG(dim) if is_first else None`` (see ``module_or_none``)

    @property
    def may_be_none(self) -> bool:
        return any(isinstance(o, ScalarValue) and o.kind == "none" for o in self.options)

    def without_none(self):
        """What it is where it is not None: the one module left, or the modules left."""
        left = tuple(o for o in self.options if not (isinstance(o, ScalarValue) and o.kind == "none"))
        return left[0] if len(left) == 1 else EitherValue(left)


@dataclass(frozen=True)
class SumValue:
    """The builtin ``sum`` of alike tensors whose count is not known (``sum([fn(x) for fn in self.fns])`` over a
    ``ModuleList`` of ``n`` branches): ``0`` when there are none, else ``total`` (``0 + t1 + ... + tn``). Nothing
    reads it but arithmetic, which works out both (``sum(...) + x`` is ``x`` or ``total + x``: what they agree on)."""

    total: Any  # a TensorValue


@dataclass(frozen=True)
class MappingValue:
    """``dict(a=x, b=y)`` or ``{"a": x}`` with string keys."""

    items: tuple  # ((key, value), ...)


@dataclass(frozen=True)
class SiteKeywordsValue:
    """``**kwargs`` of a def whose call sites pass different extra keywords (``attn(x, context = c)`` and
    ``ff(x)`` through one wrapper): per call site, one of these ``MappingValue``s. Spread into a call
    (``self.fn(x, **kwargs)``), the call is made once with each."""

    options: tuple  # (MappingValue, ...), at least two, distinct


Value = Union[TensorValue, NdarrayValue, ScalarValue, SeqValue, DeviceValue, DtypeValue, ModuleValue,
              InstanceValue, SymbolicValue, MappingValue, LambdaValue, EitherValue, PartialValue]


_CALLABLE_MODULES = None  # (filled below: the module-like value types an EitherValue holds)


def join(a, b):
    """What holds on both paths: equal values stay, same-kind values keep the fields they agree on."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    if isinstance(a, _CALLABLE_MODULES) and isinstance(b, _CALLABLE_MODULES) and not (
            isinstance(a, ModuleValue) and isinstance(b, ModuleValue) and a.kind == b.kind):
        options = tuple(dict.fromkeys((*(a.options if isinstance(a, EitherValue) else (a,)),
                                       *(b.options if isinstance(b, EitherValue) else (b,)))))
        return EitherValue(options) if len(options) <= 4 else None
    for module, seq in ((a, b), (b, a)):
        if isinstance(module, ModuleValue) and module.kind in ("Sequential", "ModuleList") \
                and isinstance(seq, SeqValue) and seq.kind == "list":
            # `return layers` or `[l for l in layers if keep(l)]` (vit-pytorch's dropout_layers): either way, a
            # list of what every sub-module is.
            return SeqValue("list", element=join(module.each, seq.each))
    if type(a) is not type(b):
        return None
    if isinstance(a, (TensorValue, NdarrayValue)):
        agreed = {f.name: (getattr(a, f.name) if getattr(a, f.name) == getattr(b, f.name) else None)
                  for f in fields(a)}
        return type(a)(**agreed)
    if isinstance(a, ScalarValue) and a.kind == b.kind:
        return ScalarValue(a.kind)
    if isinstance(a, SeqValue) and a.kind == b.kind:
        if a.items is not None and b.items is not None and len(a.items) == len(b.items):
            return SeqValue(a.kind, tuple(join(x, y) for x, y in zip(a.items, b.items)),
                            fields=a.fields if a.fields == b.fields else None)
        return SeqValue(a.kind, element=_join_elements(a, b), length=a.length if a.length == b.length else None)
    if isinstance(a, ModuleValue) and a.kind == b.kind and a.params == b.params and a.config == b.config \
            and a.kind in ("Sequential", "ModuleList", "ParameterList"):
        if a.children is not None and b.children is not None and len(a.children) == len(b.children) \
                and a.children and a.names == b.names:
            # Two containers of as many sub-modules (`ModuleList([Transformer(d), Aggregate(d)])` built per
            # iteration): one of them, so sub-module by sub-module.
            children = tuple(join(x, y) for x, y in zip(a.children, b.children))
            if all(c is not None for c in children):
                return ModuleValue(a.kind, a.params, a.config, children, a.names, None)
        # A list built by appending in a loop: what every sub-module is, the empty list adding nothing.
        return ModuleValue(a.kind, a.params, a.config, None, (), _join_elements(a, b))
    if isinstance(a, SumValue):
        total = join(a.total, b.total)
        return SumValue(total) if isinstance(total, TensorValue) else None
    if isinstance(a, DeviceValue):
        return DeviceValue()
    if isinstance(a, DtypeValue):
        return DtypeValue()
    return None


_CALLABLE_MODULES = (ModuleValue, InstanceValue, LambdaValue, EitherValue)


def module_or_none(a, b):
    """``PEG(dim) if is_first else None`` (a sub-module some blocks lack): an EitherValue with a None option, or
    None when it is not a module (not an EitherValue already holding None) on one side and None on the other."""
    for module, other in ((a, b), (b, a)):
        if isinstance(other, ScalarValue) and other.kind == "none" and isinstance(module, (ModuleValue, InstanceValue)):
            return EitherValue((module, other))
    return None


def _join_elements(a, b):
    """What every item of a container is on both paths; an empty container constrains nothing."""
    empty_a = (a.items if isinstance(a, SeqValue) else a.children) == ()
    empty_b = (b.items if isinstance(b, SeqValue) else b.children) == ()
    if empty_a:
        return b.each
    if empty_b:
        return a.each
    return join(a.each, b.each)


def map_dims(value, f):
    """``value`` with every dimension in it (shapes, strides, int values, lengths, sub-modules...) mapped by ``f``."""
    if isinstance(value, TensorValue):
        return replace(value, shape=None if value.shape is None else tuple(f(d) for d in value.shape),
                       strides=None if value.strides is None else tuple(f(d) for d in value.strides))
    if isinstance(value, NdarrayValue):
        return replace(value, shape=None if value.shape is None else tuple(f(d) for d in value.shape))
    if isinstance(value, ScalarValue):
        return ScalarValue("int", f(value.value)) if value.kind == "int" and value.value is not None \
            and not isinstance(value.value, bool) else value
    if isinstance(value, SymbolicValue):
        return SymbolicValue(f(value.dim), value.is_int)
    if isinstance(value, SeqValue):
        return SeqValue(value.kind, None if value.items is None else tuple(map_dims(i, f) for i in value.items),
                        map_dims(value.element, f), None if value.length is None else f(value.length), value.fields)
    if isinstance(value, ModuleValue):
        def setting(v):
            return f(v) if isinstance(v, int) and not isinstance(v, bool) or type(v).__name__ == "Sym" else \
                tuple(setting(x) for x in v) if isinstance(v, tuple) else map_dims(v, f)
        return ModuleValue(value.kind, tuple((n, map_dims(p, f)) for n, p in value.params),
                           tuple((n, setting(v)) for n, v in value.config),
                           None if value.children is None else tuple(map_dims(c, f) for c in value.children),
                           value.names, map_dims(value.element, f))
    if isinstance(value, InstanceValue) and value.bindings is not None:
        return InstanceValue(value.class_name, tuple((n, map_dims(v, f)) for n, v in value.bindings), value.token)
    if isinstance(value, MappingValue):
        return MappingValue(tuple((k, map_dims(v, f)) for k, v in value.items))
    if isinstance(value, LambdaValue):
        return LambdaValue(value.node, tuple((k, map_dims(v, f)) for k, v in value.captured))
    if isinstance(value, EitherValue):
        return EitherValue(tuple(map_dims(o, f) for o in value.options))
    if isinstance(value, SumValue):
        return SumValue(map_dims(value.total, f))
    return value


def is_tensor(value) -> bool:
    return isinstance(value, TensorValue)
