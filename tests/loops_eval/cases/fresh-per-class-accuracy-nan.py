# kind: vectorizable
# family: per-class-metric
# origin: eval loops that report accuracy per class; a class absent from the batch gives nan (mean of an empty selection)
# results: class_acc
# tags: module-level near-miss
# note: class 4 never occurs in the labels, so its entry is nan in both programs
import torch

num_classes = 5
logits = torch.randn(200, num_classes)
labels = torch.randint(0, 4, (200,))
preds = logits.argmax(dim=1)
class_acc = torch.zeros(num_classes)
for c in range(num_classes):
    mask = labels == c
    class_acc[c] = (preds[mask] == c).float().mean()
# ---- vectorized ----
import torch

num_classes = 5
logits = torch.randn(200, num_classes)
labels = torch.randint(0, 4, (200,))
preds = logits.argmax(dim=1)
correct = torch.bincount(labels[preds == labels], minlength=num_classes).float()
total = torch.bincount(labels, minlength=num_classes).float()
class_acc = correct / total
