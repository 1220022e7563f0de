# kind: vectorizable
# family: reduction
# origin: written for stop 25 as users write it (probe set): bin ages into buckets for an embedding
# results: bucket
# tags: module-level
import torch

ages = torch.rand(300) * 90
boundaries = torch.tensor([18.0, 30.0, 45.0, 60.0, 75.0])
bucket = torch.zeros(300, dtype=torch.long)
for i, a in enumerate(ages):
    bucket[i] = (a > boundaries).sum()
# ---- vectorized ----
import torch

ages = torch.rand(300) * 90
boundaries = torch.tensor([18.0, 30.0, 45.0, 60.0, 75.0])
bucket = (ages[:, None] > boundaries).sum(1)
