# kind: vectorizable
# family: multi-statement-map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: out
# tags: module-level multi-statement
import torch

x = torch.randn(5, 16)
w = torch.randn(16, 16) * 0.1
out = torch.zeros(5, 16)
for i in range(5):
    h = x[i] @ w
    h = torch.relu(h)
    out[i] = x[i] + h
# ---- vectorized ----
import torch

x = torch.randn(5, 16)
w = torch.randn(16, 16) * 0.1
out = x + torch.relu(x @ w)
