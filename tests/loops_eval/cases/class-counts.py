# kind: vectorizable
# family: histogram
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: counts
# tags: module-level
import torch

labels = torch.randint(0, 4, (500,))
counts = torch.zeros(4)
for y in labels:
    counts[y] += 1
# ---- vectorized ----
import torch

labels = torch.randint(0, 4, (500,))
counts = torch.bincount(labels, minlength=4).float()
