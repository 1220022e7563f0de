# kind: vectorizable
# family: scan
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: cums
# tags: module-level
import torch

x = torch.rand(25)
cums = torch.zeros(25)
total = 0.0
for i in range(25):
    total = total + x[i]
    cums[i] = total
# ---- vectorized ----
import torch

x = torch.rand(25)
cums = torch.cumsum(x, dim=0)
