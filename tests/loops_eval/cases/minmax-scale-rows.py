# kind: vectorizable
# family: multi-statement-map
# origin: min-max scaling each sample, with temporaries
# results: scaled
# tags: module-level multi-statement
import torch

x = torch.randn(256, 50)

scaled = torch.empty_like(x)
for i, row in enumerate(x):
    lo = row.min()
    hi = row.max()
    scaled[i] = (row - lo) / (hi - lo)
# ---- vectorized ----
import torch

x = torch.randn(256, 50)

lo = x.min(dim=1, keepdim=True).values
hi = x.max(dim=1, keepdim=True).values
scaled = (x - lo) / (hi - lo)
