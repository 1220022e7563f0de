# kind: vectorizable
# family: vmap-user-function
# origin: a per-sample loss then the mean (the batched loss does both)
# results: loss
# tags: module-level
import torch
import torch.nn.functional as F

logits = torch.randn(128, 10)
y = torch.randint(0, 10, (128,))

losses = [F.cross_entropy(logits[i:i + 1], y[i:i + 1]) for i in range(len(y))]
loss = torch.stack(losses).mean()
# ---- vectorized ----
import torch
import torch.nn.functional as F

logits = torch.randn(128, 10)
y = torch.randint(0, 10, (128,))

loss = F.cross_entropy(logits, y)
