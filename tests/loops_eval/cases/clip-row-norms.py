# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: W
# tags: module-level
import torch

W = torch.randn(20, 6) * 3
max_norm = 2.0
for i in range(W.shape[0]):
    n = W[i].norm()
    if n > max_norm:
        W[i] = W[i] * max_norm / n
# ---- vectorized ----
import torch

W = torch.randn(20, 6) * 3
max_norm = 2.0
n = W.norm(dim=1, keepdim=True)
W = torch.where(n > max_norm, W * max_norm / n, W)
