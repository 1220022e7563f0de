# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: y
# tags: module-level
import torch

x = torch.randn(50, 3)
w = torch.randn(3)
b = 0.1
y = torch.zeros(50)
for i in range(50):
    y[i] = torch.sigmoid(x[i] @ w + b)
# ---- vectorized ----
import torch

x = torch.randn(50, 3)
w = torch.randn(3)
b = 0.1
y = torch.sigmoid(x @ w + b)
