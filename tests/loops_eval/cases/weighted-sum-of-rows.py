# kind: vectorizable
# family: contraction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: out
# tags: module-level
import torch

X = torch.randn(30, 5)
alpha = torch.softmax(torch.randn(30), dim=0)
out = torch.zeros(5)
for i in range(X.shape[0]):
    out += alpha[i] * X[i]
# ---- vectorized ----
import torch

X = torch.randn(30, 5)
alpha = torch.softmax(torch.randn(30), dim=0)
out = alpha @ X
