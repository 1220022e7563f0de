# kind: vectorizable
# family: builtin
# origin: Python's max() on a tensor of scores
# results: top
# tags: module-level
import torch

scores = torch.randn(10000)
top = max(scores)
# ---- vectorized ----
import torch

scores = torch.randn(10000)
top = scores.max()
