# kind: vectorizable
# family: contraction
# origin: a typed research codebase (jaxtyping annotations, only for type checkers)
# results: s
# tags: function-param jaxtyping
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from jaxtyping import Float
    from torch import Tensor


def linear_scores(x: Float[Tensor, "batch dim"], w: Float[Tensor, "dim"]) -> Float[Tensor, "batch"]:
    out = torch.empty(x.shape[0])
    for b in range(x.shape[0]):
        out[b] = (x[b] * w).sum()
    return out


s = linear_scores(torch.randn(800, 32), torch.randn(32))
# ---- vectorized ----
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from jaxtyping import Float
    from torch import Tensor


def linear_scores(x: Float[Tensor, "batch dim"], w: Float[Tensor, "dim"]) -> Float[Tensor, "batch"]:
    return x @ w


s = linear_scores(torch.randn(800, 32), torch.randn(32))
