# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: x
# tags: module-level
import torch

x = torch.randn(30, 5)
for i in range(len(x)):
    x[i] = x[i].clamp(min=0)
# ---- vectorized ----
import torch

x = torch.randn(30, 5)
x = x.clamp(min=0)
