# kind: vectorizable
# family: reduction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: acc
# tags: module-level
import torch

logits = torch.randn(100, 10)
labels = torch.randint(0, 10, (100,))
correct = 0
for i in range(len(labels)):
    if logits[i].argmax() == labels[i]:
        correct += 1
acc = correct / len(labels)
# ---- vectorized ----
import torch

logits = torch.randn(100, 10)
labels = torch.randint(0, 10, (100,))
correct = (logits.argmax(dim=1) == labels).sum().item()
acc = correct / len(labels)
