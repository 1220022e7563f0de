# kind: vectorizable
# family: column-indexing
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: X
# tags: module-level
import torch

X = torch.randn(40, 6)
for j in range(X.shape[1]):
    X[:, j] = X[:, j] - X[:, j].mean()
# ---- vectorized ----
import torch

X = torch.randn(40, 6)
X = X - X.mean(dim=0)
