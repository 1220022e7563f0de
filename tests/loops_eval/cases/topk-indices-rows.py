# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: idx
# tags: module-level
import torch

scores = torch.randn(10, 20)
idx = torch.zeros(10, 3, dtype=torch.long)
for i in range(10):
    idx[i] = torch.topk(scores[i], 3).indices
# ---- vectorized ----
import torch

scores = torch.randn(10, 20)
idx = torch.topk(scores, 3, dim=1).indices
