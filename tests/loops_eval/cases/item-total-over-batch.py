# kind: vectorizable
# family: item-accumulation
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: total
# tags: module-level
import torch

batch = torch.randn(20, 30)
total = 0.0
for x in batch:
    total += x.sum().item()
# ---- vectorized ----
import torch

batch = torch.randn(20, 30)
total = batch.sum(dim=1).sum().item()
