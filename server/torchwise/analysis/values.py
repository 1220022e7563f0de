"""What the analysis knows about a value. ``None`` everywhere means "unknown".

Values are immutable; joining two (after an ``if``/``else``, around a loop) keeps
only what both agree on, so a fact survives only when it holds on every path.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
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
    kind: str  # "list" | "tuple" | "size" (torch.Size)
    items: Optional[tuple] = None  # None: length unknown


@dataclass(frozen=True)
class DeviceValue:
    device: Optional[str] = None


@dataclass(frozen=True)
class DtypeValue:
    dtype: Any = None


@dataclass(frozen=True)
class ModuleValue:
    """An ``nn.Module`` of a known layer type, with its parameters' facts and its settings."""

    kind: str  # "Linear", "Conv2d", "Sequential", ...
    params: tuple = ()  # ((name, TensorValue), ...)
    config: tuple = ()  # ((name, value), ...): in_features, kernel_size, ...
    children: tuple = ()  # sub-modules of containers, in order

    def param(self, name: str):
        return dict(self.params).get(name)

    def setting(self, name: str, default=None):
        return dict(self.config).get(name, default)


@dataclass(frozen=True)
class InstanceValue:
    """``self`` inside a class of this file."""

    class_name: str


Value = Union[TensorValue, NdarrayValue, ScalarValue, SeqValue, DeviceValue, DtypeValue, ModuleValue,
              InstanceValue]


def join(a, b):
    """What holds on both paths: equal values stay, same-kind values keep the fields they agree on."""
    if a is None or b is None:
        return None
    if a == b:
        return a
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
            return SeqValue(a.kind, tuple(join(x, y) for x, y in zip(a.items, b.items)))
        return SeqValue(a.kind)
    if isinstance(a, DeviceValue):
        return DeviceValue()
    if isinstance(a, DtypeValue):
        return DtypeValue()
    return None


def is_tensor(value) -> bool:
    return isinstance(value, TensorValue)
