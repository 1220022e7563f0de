# kind: vectorizable
# family: column-indexing
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: means
# tags: module-level
import torch

X = torch.randn(200, 7)
means = [X[:, j].mean() for j in range(X.shape[1])]
means = torch.stack(means)
# ---- vectorized ----
import torch

X = torch.randn(200, 7)
means = X.mean(dim=0)
