# kind: vectorizable
# family: reduction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: correct
# tags: module-level
import torch

preds = torch.randint(0, 3, (64,))
labels = torch.randint(0, 3, (64,))
correct = 0
for p, y in zip(preds, labels):
    correct += int(p == y)
# ---- vectorized ----
import torch

preds = torch.randint(0, 3, (64,))
labels = torch.randint(0, 3, (64,))
correct = (preds == labels).sum().item()
