# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: out
# tags: module-level
import torch

a = torch.randn(100)
b = torch.randn(100)
mask = torch.rand(100) > 0.5
out = torch.empty(100)
for i in range(100):
    if mask[i]:
        out[i] = a[i]
    else:
        out[i] = b[i]
# ---- vectorized ----
import torch

a = torch.randn(100)
b = torch.randn(100)
mask = torch.rand(100) > 0.5
out = torch.where(mask, a, b)
