# kind: vectorizable
# family: scan
# origin: a running total (cumulative rewards, CDFs)
# results: cums
# tags: module-level
import torch

x = torch.rand(2000)

running = 0.0
cums = torch.empty(len(x))
for i in range(len(x)):
    running += x[i]
    cums[i] = running
# ---- vectorized ----
import torch

x = torch.rand(2000)

cums = torch.cumsum(x, dim=0)
