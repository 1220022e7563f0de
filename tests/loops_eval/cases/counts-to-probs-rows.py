# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 26 as users write it (probe set): turn co-occurrence counts into transition probabilities row by row
# results: P
# tags: module-level
import torch

counts = torch.randint(1, 20, (40, 40)).float()
P = torch.empty_like(counts)
for i in range(counts.size(0)):
    P[i] = counts[i] / counts[i].sum()
# ---- vectorized ----
import torch

counts = torch.randint(1, 20, (40, 40)).float()
P = counts / counts.sum(1, keepdim=True)
