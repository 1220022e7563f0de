# kind: vectorizable
# family: scatter
# origin: written for stop 25 as users write it (probe set): confusion matrix from predictions
# results: cm
# tags: module-level
import torch

num_classes = 10
preds = torch.randint(0, num_classes, (500,))
targets = torch.randint(0, num_classes, (500,))

cm = torch.zeros(num_classes, num_classes, dtype=torch.long)
for t, p in zip(targets, preds):
    cm[t, p] += 1
# ---- vectorized ----
import torch

num_classes = 10
preds = torch.randint(0, num_classes, (500,))
targets = torch.randint(0, num_classes, (500,))

cm = torch.bincount(targets * num_classes + preds, minlength=num_classes ** 2).view(num_classes, num_classes)
