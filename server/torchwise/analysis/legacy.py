"""PyTorch's legacy typed constructors: ``torch.FloatTensor`` and friends."""

from __future__ import annotations

# Legacy type name -> the dtype it makes (None: the default dtype, for torch.Tensor).
_LEGACY_DTYPES = {
    "Tensor": None, "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8", "CharTensor": "int8",
    "ShortTensor": "int16", "IntTensor": "int32", "LongTensor": "int64", "BoolTensor": "bool",
}
# qualified name -> (dtype name or None, device or None)
LEGACY_CONSTRUCTORS = {f"torch.{name}": (dtype, None) for name, dtype in _LEGACY_DTYPES.items()}
LEGACY_CONSTRUCTORS.update(
    {f"torch.cuda.{name}": (dtype, "cuda") for name, dtype in _LEGACY_DTYPES.items() if name != "Tensor"})
