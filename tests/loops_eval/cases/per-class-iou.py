# kind: vectorizable
# family: per-class-metric
# origin: written for stop 25 as users write it (probe set): segmentation mIoU per class
# results: ious
# tags: module-level multi-statement
import torch

num_classes = 5
pred = torch.randint(0, num_classes, (4, 32, 32))
target = torch.randint(0, num_classes, (4, 32, 32))

ious = torch.zeros(num_classes)
for c in range(num_classes):
    inter = ((pred == c) & (target == c)).sum()
    union = ((pred == c) | (target == c)).sum()
    ious[c] = inter / union
# ---- vectorized ----
import torch

num_classes = 5
pred = torch.randint(0, num_classes, (4, 32, 32))
target = torch.randint(0, num_classes, (4, 32, 32))

classes = torch.arange(num_classes).view(-1, 1, 1, 1)
p, t = pred == classes, target == classes
ious = (p & t).sum((1, 2, 3)) / (p | t).sum((1, 2, 3))
