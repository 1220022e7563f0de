# kind: vectorizable
# family: contraction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: D
# tags: module-level
import torch

X = torch.randn(50, 8)
Y = torch.randn(40, 8)
D = torch.zeros(50, 40)
for i in range(X.shape[0]):
    for j in range(Y.shape[0]):
        D[i, j] = torch.norm(X[i] - Y[j])
# ---- vectorized ----
import torch

X = torch.randn(50, 8)
Y = torch.randn(40, 8)
D = torch.cdist(X, Y)
