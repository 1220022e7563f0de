# kind: vectorizable
# family: column-indexing
# origin: a covariance matrix from centred columns, nested loops
# results: cov
# tags: module-level nested
import torch

X = torch.randn(500, 6)
mu = X.mean(dim=0)

cov = torch.zeros(6, 6)
for i in range(6):
    for j in range(6):
        cov[i, j] = ((X[:, i] - mu[i]) * (X[:, j] - mu[j])).sum() / (X.shape[0] - 1)
# ---- vectorized ----
import torch

X = torch.randn(500, 6)
mu = X.mean(dim=0)

Xc = X - mu
cov = Xc.T @ Xc / (X.shape[0] - 1)
