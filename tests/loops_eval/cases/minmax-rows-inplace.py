# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: x
# tags: module-level
import torch

x = torch.rand(64, 10)
for i in range(x.shape[0]):
    lo = x[i].min()
    hi = x[i].max()
    x[i] = (x[i] - lo) / (hi - lo)
# ---- vectorized ----
import torch

x = torch.rand(64, 10)
lo = x.min(dim=1, keepdim=True).values
hi = x.max(dim=1, keepdim=True).values
x = (x - lo) / (hi - lo)
