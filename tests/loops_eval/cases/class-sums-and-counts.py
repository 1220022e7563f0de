# kind: vectorizable
# family: scatter
# origin: written for stop 26 as users write it (probe set): per-class feature means with two accumulators (sums and counts) in one walk
# results: sums counts
# tags: module-level multi-statement
import torch

num_classes = 10
feats = torch.randn(300, 32)
labels = torch.randint(0, num_classes, (300,))
sums = torch.zeros(num_classes, 32)
counts = torch.zeros(num_classes)
for i in range(feats.shape[0]):
    sums[labels[i]] += feats[i]
    counts[labels[i]] += 1
# ---- vectorized ----
import torch

num_classes = 10
feats = torch.randn(300, 32)
labels = torch.randint(0, num_classes, (300,))
sums = torch.zeros(num_classes, 32).index_add_(0, labels, feats)
counts = torch.bincount(labels, minlength=num_classes).float()
