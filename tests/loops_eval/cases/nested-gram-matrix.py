# kind: vectorizable
# family: contraction
# origin: a kernel (Gram) matrix of dot products between samples
# results: K
# tags: module-level nested
import torch

X = torch.randn(100, 8)

K = torch.empty(100, 100)
for i in range(100):
    for j in range(100):
        K[i, j] = torch.dot(X[i], X[j])
# ---- vectorized ----
import torch

X = torch.randn(100, 8)

K = X @ X.T
