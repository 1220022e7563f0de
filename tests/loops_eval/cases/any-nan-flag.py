# kind: vectorizable
# family: reduction
# origin: a NaN guard before the optimizer step
# results: has_nan
# tags: module-level
import torch

grads = torch.randn(64, 64)
grads[3, 7] = float("nan")

has_nan = False
for v in grads.flatten():
    if torch.isnan(v):
        has_nan = True
        break
# ---- vectorized ----
import torch

grads = torch.randn(64, 64)
grads[3, 7] = float("nan")

has_nan = bool(torch.isnan(grads).any())
