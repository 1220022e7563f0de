# kind: vectorizable
# family: item-accumulation
# origin: beginner accuracy computation
# results: correct accuracy
# tags: module-level
import torch

logits = torch.randn(1000, 10)
labels = torch.randint(0, 10, (1000,))
preds = logits.argmax(dim=1)

correct = 0
for i in range(len(preds)):
    if preds[i].item() == labels[i].item():
        correct += 1
accuracy = correct / len(preds)
# ---- vectorized ----
import torch

logits = torch.randn(1000, 10)
labels = torch.randint(0, 10, (1000,))
preds = logits.argmax(dim=1)

correct = (preds == labels).sum().item()
accuracy = correct / len(preds)
