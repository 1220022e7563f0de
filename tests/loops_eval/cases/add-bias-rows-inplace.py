# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: scores
# tags: module-level
import torch

scores = torch.randn(12, 12)
row_bias = torch.randn(12)
for i in range(scores.shape[0]):
    scores[i] += row_bias[i]
# ---- vectorized ----
import torch

scores = torch.randn(12, 12)
row_bias = torch.randn(12)
scores += row_bias[:, None]
