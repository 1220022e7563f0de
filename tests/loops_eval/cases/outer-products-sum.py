# kind: vectorizable
# family: contraction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: C
# tags: module-level
import torch

X = torch.randn(20, 4)
C = torch.zeros(4, 4)
for x in X:
    C += torch.outer(x, x)
C /= X.shape[0]
# ---- vectorized ----
import torch

X = torch.randn(20, 4)
C = X.T @ X / X.shape[0]
