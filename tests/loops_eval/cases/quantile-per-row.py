# kind: vectorizable
# family: map
# origin: written for stop 25 as users write it (probe set): 90th-percentile clipping value per feature row
# results: q90
# tags: module-level
import torch

acts = torch.randn(16, 200)
q90 = torch.empty(16)
for i in range(acts.shape[0]):
    q90[i] = torch.quantile(acts[i], 0.9)
# ---- vectorized ----
import torch

acts = torch.randn(16, 200)
q90 = torch.quantile(acts, 0.9, dim=1)
