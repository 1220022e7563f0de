# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: y
# tags: module-level
import torch
import torch.nn.functional as F

x = torch.randn(7, 9)
rows = []
for i in range(x.size(0)):
    rows.append(F.gelu(x[i]))
y = torch.stack(rows, dim=0)
# ---- vectorized ----
import torch
import torch.nn.functional as F

x = torch.randn(7, 9)
y = F.gelu(x)
