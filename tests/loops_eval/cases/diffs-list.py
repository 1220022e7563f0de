# kind: vectorizable
# family: shifted-indexing
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: diffs
# tags: module-level
import torch

x = torch.cumsum(torch.randn(60, 2), dim=0)
diffs = torch.stack([x[t] - x[t - 1] for t in range(1, len(x))])
# ---- vectorized ----
import torch

x = torch.cumsum(torch.randn(60, 2), dim=0)
diffs = x[1:] - x[:-1]
