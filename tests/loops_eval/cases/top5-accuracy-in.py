# kind: vectorizable
# family: reduction
# origin: written for stop 25 as users write it (probe set): top-5 accuracy with `in`
# results: top5
# tags: module-level
import torch

logits = torch.randn(200, 100)
labels = torch.randint(0, 100, (200,))
top = logits.topk(5, dim=1).indices

hits = 0
for i in range(len(labels)):
    if labels[i] in top[i]:
        hits += 1
top5 = hits / len(labels)
# ---- vectorized ----
import torch

logits = torch.randn(200, 100)
labels = torch.randint(0, 100, (200,))
top = logits.topk(5, dim=1).indices

top5 = (top == labels[:, None]).any(1).sum().item() / len(labels)
