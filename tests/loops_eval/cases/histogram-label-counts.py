# kind: vectorizable
# family: histogram
# origin: class frequencies for a weighted loss
# results: counts
# tags: module-level
import torch

num_classes = 5
targets = torch.randint(0, num_classes, (10000,))

counts = torch.zeros(num_classes)
for t in targets:
    counts[t] += 1
# ---- vectorized ----
import torch

num_classes = 5
targets = torch.randint(0, num_classes, (10000,))

counts = torch.bincount(targets, minlength=num_classes).float()
