# kind: vectorizable
# family: contraction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: G
# tags: module-level nested
import torch

F = torch.randn(10, 16)
n = F.shape[0]
G = torch.zeros(n, n)
for i in range(n):
    for j in range(n):
        G[i, j] = (F[i] * F[j]).sum()
# ---- vectorized ----
import torch

F = torch.randn(10, 16)
G = F @ F.T
