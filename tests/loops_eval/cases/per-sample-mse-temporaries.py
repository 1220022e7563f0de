# kind: vectorizable
# family: multi-statement-map
# origin: per-sample reconstruction error for anomaly scoring
# results: errors
# tags: module-level multi-statement
import torch

recon = torch.randn(400, 784)
images = torch.randn(400, 784)

errors = torch.empty(400)
for i in range(400):
    diff = recon[i] - images[i]
    sq = diff * diff
    errors[i] = sq.mean()
# ---- vectorized ----
import torch

recon = torch.randn(400, 784)
images = torch.randn(400, 784)

errors = ((recon - images) ** 2).mean(dim=1)
