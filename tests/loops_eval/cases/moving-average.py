# kind: vectorizable
# family: sliding-window
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: out
# tags: module-level
import torch

x = torch.randn(100)
k = 5
out = torch.zeros(len(x) - k + 1)
for t in range(len(x) - k + 1):
    out[t] = x[t:t + k].mean()
# ---- vectorized ----
import torch

x = torch.randn(100)
k = 5
out = x.unfold(0, k, 1).mean(dim=1)
