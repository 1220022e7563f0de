# kind: vectorizable
# family: scatter
# origin: written for stop 25 as users write it (probe set): ranks from an argsort (undo a shuffle)
# results: ranks
# tags: module-level
import torch

scores = torch.randn(100)
order = scores.argsort()
ranks = torch.empty_like(order)
for i in range(len(order)):
    ranks[order[i]] = i
# ---- vectorized ----
import torch

scores = torch.randn(100)
order = scores.argsort()
ranks = torch.empty_like(order)
ranks[order] = torch.arange(len(order))
