"""Python source that makes a value like the one the analysis inferred.

``Tensor[float32, (10000, 512)]`` -> ``torch.randn(_tw_n, 512, dtype=torch.float32, device=DEVICE)``
(the first dimension written as the scale variable when it is the loop's trip count). Integer
tensors used as indices get ``torch.randint(0, <the indexed size>, ...)``. Symbolic dimensions
take their value from ``sizes`` (``--size n=1000``); anything still unknown raises
:class:`Unknown` with the exact thing that is missing, so the caller can ask for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from torchwise.analysis.dims import Sym
from torchwise.analysis.dtypes import Category, DType, category
from torchwise.analysis.values import (
    DeviceValue, DtypeValue, InstanceValue, ModuleValue, NdarrayValue, ScalarValue, SeqValue, TensorValue,
)

SCALE_VAR = "_tw_n"
_DEFAULT_INT_HIGH = 10


class Unknown(Exception):
    """What cannot be synthesized: ``what`` for the message, ``sizes`` the symbols ``--size`` can give."""

    def __init__(self, what: str, sizes: tuple = ()):
        super().__init__(what)
        self.what = what
        self.sizes = tuple(sizes)


@dataclass
class Synth:
    sizes: Mapping[str, int] = field(default_factory=dict)
    full: Optional[int] = None  # the trip count, written as SCALE_VAR wherever a dimension equals it
    notes: list = field(default_factory=list)
    scaled: bool = False  # SCALE_VAR was used

    # -- dimensions
    def dim(self, dim, what: str) -> int:
        if isinstance(dim, Sym):
            value = dim.subs({k: v for k, v in self.sizes.items()})
            if isinstance(value, Sym):
                fresh = sorted(s for s in value.symbols if "#" in s)
                missing = sorted(s for s in value.symbols if "#" not in s)
                if fresh:
                    raise Unknown(f"a dimension of {what} that depends on data (torchwise cannot know it)")
                raise Unknown(f"the size {', '.join(missing)} (of {what})", missing)
            dim = value
        if not isinstance(dim, int) or dim < 0:
            raise Unknown(f"a dimension of {what}")
        return dim

    def dim_text(self, dim, what: str) -> str:
        value = self.dim(dim, what)
        if self.full is not None and value == self.full and value >= 16:
            self.scaled = True
            return SCALE_VAR
        return str(value)

    def shape_text(self, shape, what: str) -> str:
        """A size tuple: ``(_tw_n, 512)``, ``(64,)``, ``()``."""
        dims = [self.dim_text(d, what) for d in shape]
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"

    def size_args(self, shape, what: str) -> str:
        """Sizes as factory arguments: ``_tw_n, 512``; ``()`` for a 0-d tensor."""
        dims = [self.dim_text(d, what) for d in shape]
        return ", ".join(dims) if dims else "()"

    # -- values
    def value(self, value, name: str, index_bound=None, dtype_hint: Optional[DType] = None) -> str:
        """Source text for ``name``'s value; raises Unknown."""
        what = f"`{name}`"
        if name in self.sizes and (value is None or isinstance(value, ScalarValue) and value.kind in ("int", "float")):
            return repr(self.sizes[name])
        if isinstance(value, TensorValue):
            return self.tensor(value, what, index_bound, dtype_hint)
        if isinstance(value, ScalarValue):
            return self.scalar(value, name)
        if isinstance(value, NdarrayValue):
            return self.ndarray(value, what)
        if isinstance(value, SeqValue):
            return self.sequence(value, name)
        if isinstance(value, DeviceValue):
            return "DEVICE"
        if isinstance(value, DtypeValue) and value.dtype is not None:
            return value.dtype.torch_name
        if isinstance(value, ModuleValue):
            raise Unknown(f"{what} is an nn.{value.kind}: torchwise builds layers only from plain setup code "
                          f"(write `{name} = nn.{value.kind}(...)` with constant arguments before the loop)")
        if isinstance(value, InstanceValue):
            raise Unknown(f"{what} is an instance of {value.class_name}")
        raise Unknown(f"the value of {what}")

    def tensor(self, value: TensorValue, what: str, index_bound=None, dtype_hint: Optional[DType] = None) -> str:
        if value.shape is None:
            raise Unknown(f"the shape of {what}")
        dtype = value.dtype
        if dtype is None:
            if dtype_hint is not None:
                dtype = dtype_hint
            elif index_bound is not None:
                dtype = DType.int64
                self.notes.append(f"{what}: dtype unknown, int64 used (it is used as an index)")
            else:
                dtype = DType.float32
                self.notes.append(f"{what}: dtype unknown, float32 used")
        kind = category(dtype)
        if kind is Category.BOOL:
            return f"torch.rand({self.size_args(value.shape, what)}, device=DEVICE) > 0.5"
        if kind is Category.INTEGRAL:
            if index_bound is not None:
                high = self.dim_text(index_bound, f"the dimension {what} indexes")
                if high == "0":
                    high = "1"
            else:
                high = str(_DEFAULT_INT_HIGH)
                self.notes.append(f"{what}: integer values drawn from [0, {_DEFAULT_INT_HIGH})")
            return (f"torch.randint(0, {high}, {self.shape_text(value.shape, what)}, dtype={dtype.torch_name}, "
                    f"device=DEVICE)")
        text = f"torch.randn({self.size_args(value.shape, what)}, dtype={dtype.torch_name}, device=DEVICE)"
        if value.requires_grad:
            text += ".requires_grad_()"
        return text

    def ndarray(self, value: NdarrayValue, what: str) -> str:
        if value.shape is None:
            raise Unknown(f"the shape of {what}")
        shape = self.shape_text(value.shape, what)
        dtype = value.dtype.short if value.dtype is not None else "float64"
        kind = category(value.dtype) if value.dtype is not None else Category.FLOATING
        if kind is Category.INTEGRAL:
            return f"_tw_np.random.default_rng(0).integers(0, {_DEFAULT_INT_HIGH}, {shape}).astype({dtype!r})"
        if kind is Category.BOOL:
            return f"_tw_np.random.default_rng(0).random({shape}) > 0.5"
        return f"_tw_np.random.default_rng(0).standard_normal({shape}).astype({dtype!r})"

    def scalar(self, value: ScalarValue, name: str) -> str:
        what = f"`{name}`"
        if value.kind == "none":
            return "None"
        if value.kind == "int":
            if value.value is None:
                raise Unknown(f"the value of {what}", (name,))
            return self.dim_text(value.value, what)
        if value.kind == "float":
            if value.value is None:
                self.notes.append(f"{what}: value unknown, 1.0 used")
                return "1.0"
            return repr(float(value.value))
        if value.kind in ("bool", "str", "complex") and value.value is not None:
            return repr(value.value)
        raise Unknown(f"the value of {what}")

    def sequence(self, value: SeqValue, name: str) -> str:
        what = f"`{name}`"
        if value.items is None:
            raise Unknown(f"the length of {what}")
        if value.kind == "size":
            return "torch.Size([" + ", ".join(self.dim_text(d.value if isinstance(d, ScalarValue) else d, what)
                                              for d in value.items) + "])"
        items = [self.value(item, f"{name}[{i}]") for i, item in enumerate(value.items)]
        open_, close = ("[", "]") if value.kind == "list" else ("(", ")")
        if len(items) >= 2 and all(item == items[0] for item in items):
            count = self.dim_text(len(items), f"the length of {what}")
            text = f"[{items[0]} for _ in range({count})]"
            return text if value.kind == "list" else f"tuple({text})"
        if value.kind == "tuple" and len(items) == 1:
            return f"({items[0]},)"
        return open_ + ", ".join(items) + close
