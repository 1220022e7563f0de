# kind: vectorizable
# family: ragged-mask
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: scores
# tags: module-level
import torch

scores = torch.randn(4, 10)
valid = torch.tensor([10, 6, 3, 8])
for b in range(4):
    scores[b, valid[b]:] = float('-inf')
# ---- vectorized ----
import torch

scores = torch.randn(4, 10)
valid = torch.tensor([10, 6, 3, 8])
scores = scores.masked_fill(torch.arange(10) >= valid[:, None], float('-inf'))
