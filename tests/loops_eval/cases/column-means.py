# kind: vectorizable
# family: column-indexing
# origin: per-feature statistics over a data matrix
# results: col_means
# tags: module-level
import torch

X = torch.randn(5000, 20)

col_means = torch.zeros(X.shape[1])
for j in range(X.shape[1]):
    col_means[j] = X[:, j].mean()
# ---- vectorized ----
import torch

X = torch.randn(5000, 20)

col_means = X.mean(dim=0)
