"""TW504 on layers given float64 input with float32 weights (or the other way round), against real torch.

Generated programs build a layer (its dtype from the default, `dtype=`, `.double()` / `.float()`, `.to(...)`, or an
in-place `layer.double()` statement), an input of one float dtype, and call the layer at module level or inside a
module's `forward`. TW504 must fire only where torch raises, and, at module level, on every program where the
dtypes differ; the fix must make the program run. Inside `forward` it stays silent: `self.layer`'s dtype is not
known there (the module may have been converted since `__init__`, by this file or an importer).
"""

from __future__ import annotations

import random
import warnings

import pytest

torch = pytest.importorskip("torch")

from torchwise.engine import analyze  # noqa: E402
from torchwise.fixing import apply_edits  # noqa: E402

LAYERS = {  # constructor, input shape
    "Linear": ("nn.Linear(8, 3{})", (4, 8)),
    "Conv1d": ("nn.Conv1d(8, 3, 3{})", (2, 8, 6)),
    "Conv2d": ("nn.Conv2d(8, 3, 3{})", (2, 8, 6, 6)),
    "ConvTranspose2d": ("nn.ConvTranspose2d(8, 3, 3{})", (2, 8, 6, 6)),
    "LayerNorm": ("nn.LayerNorm(8{})", (4, 8)),
    "GroupNorm": ("nn.GroupNorm(2, 8{})", (2, 8, 5)),
    "BatchNorm1d": ("nn.BatchNorm1d(8{})", (4, 8)),
    "LSTM": ("nn.LSTM(8, 4{})", (5, 2, 8)),
    "GRU": ("nn.GRU(8, 4{})", (5, 2, 8)),
}


def _program(rng: random.Random) -> tuple[str, bool]:
    kind = rng.choice(sorted(LAYERS))
    make, shape = LAYERS[kind]
    weight64 = rng.random() < 0.4
    how = rng.choice(["ctor", "method", "to", "statement"]) if weight64 else rng.choice(["default", "ctor", "method"])
    dtype = "torch.float64" if weight64 else "torch.float32"
    layer = make.format(f", dtype={dtype}" if how == "ctor" else "")
    if how == "method":
        layer += ".double()" if weight64 else ".float()"
    elif how == "to":
        layer += f".to({dtype})"
    after = "layer.double()\n" if how == "statement" else ""
    input64 = rng.random() < 0.5
    x = f"torch.randn{shape}" + (".double()" if input64 else "")
    if rng.random() < 0.4:
        return f"import torch\nimport torch.nn as nn\nlayer = {layer}\n{after}x = {x}\ny = layer(x)\n", weight64 != input64
    # In a module: the layer itself, or in an nn.Sequential; converted in place in __init__ or from outside.
    wrapped = rng.random() < 0.3
    path = "self.seq[0]" if wrapped else "self.layer"
    held = f"self.seq = nn.Sequential({layer})" if wrapped else f"self.layer = {layer}"
    inside = outside = ""
    if after:
        where = rng.choice(["init", "instance", "attribute"])
        if where == "init":
            inside = f"        {path}.double()\n"
        elif where == "instance":
            outside = "m.double()\n"
        else:
            outside = f"m.{path[5:]}.double()\n"
    code = (f"import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
            f"        super().__init__()\n        {held}\n{inside}\n    def forward(self, x):\n"
            f"        return {path}(x)\n\n\nm = M()\n{outside}y = m({x})\n")
    return code, weight64 != input64


def _raises(code: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(code, "<layer>", "exec"), {})
        except (RuntimeError, ValueError):  # (recurrent layers raise ValueError)
            return True
    return False


def test_layer_dtypes_agree_with_torch():
    rng = random.Random(504)
    flagged = differing = 0
    for _ in range(400):
        code, differ = _program(rng)
        raises = _raises(code)
        findings = [f for f in analyze(code).findings if f.code == "TW504"]
        assert not findings or raises, f"TW504 where torch runs:\n{code}"
        if differ and code.startswith("import torch\nimport torch.nn as nn\nlayer") and "layer.double()" not in code:
            assert findings, f"no TW504 where the dtypes differ:\n{code}"
        for finding in findings:
            fixed = apply_edits(code, finding.fixes[0].edits)
            assert not _raises(fixed), f"the fix still raises:\n{fixed}"
        flagged += bool(findings)
        differing += differ
    assert flagged > 40, (flagged, differing)
