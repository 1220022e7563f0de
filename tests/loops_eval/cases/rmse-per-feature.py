# kind: vectorizable
# family: column-indexing
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: rmse
# tags: module-level
import torch

pred = torch.randn(100, 3)
target = torch.randn(100, 3)
rmse = torch.zeros(3)
for k in range(3):
    rmse[k] = torch.sqrt(((pred[:, k] - target[:, k]) ** 2).mean())
# ---- vectorized ----
import torch

pred = torch.randn(100, 3)
target = torch.randn(100, 3)
rmse = torch.sqrt(((pred - target) ** 2).mean(dim=0))
