# kind: vectorizable
# family: builtin
# origin: functional-style Python applied to a tensor
# results: abs_err
# tags: module-level
import torch

pred = torch.randn(2000)
target = torch.randn(2000)
deltas = pred - target
abs_err = torch.stack(list(map(torch.abs, deltas)))
# ---- vectorized ----
import torch

pred = torch.randn(2000)
target = torch.randn(2000)
deltas = pred - target
abs_err = deltas.abs()
