# kind: vectorizable
# family: map
# origin: top-5 scores per query, one query at a time
# results: top_vals top_idx
# tags: module-level
import torch

scores = torch.randn(200, 1000)

top_vals = torch.empty(200, 5)
top_idx = torch.empty(200, 5, dtype=torch.long)
for i in range(200):
    v, j = scores[i].topk(5)
    top_vals[i] = v
    top_idx[i] = j
# ---- vectorized ----
import torch

scores = torch.randn(200, 1000)

top_vals, top_idx = scores.topk(5, dim=1)
