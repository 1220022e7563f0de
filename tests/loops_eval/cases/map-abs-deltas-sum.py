# kind: vectorizable
# family: builtin
# origin: a hand-written mean absolute error
# results: mae
# tags: module-level
import torch

pred = torch.randn(2000)
target = torch.randn(2000)
deltas = pred - target
mae = sum(map(torch.abs, deltas)) / len(deltas)
# ---- vectorized ----
import torch

pred = torch.randn(2000)
target = torch.randn(2000)
deltas = pred - target
mae = deltas.abs().sum() / len(deltas)
