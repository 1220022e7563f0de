# kind: vectorizable
# family: gather
# origin: written for stop 25 as users write it (probe set): class-balanced loss from per-sample losses
# results: loss
# tags: module-level
import torch

class_weights = torch.tensor([0.2, 1.0, 3.5, 0.8])
losses = torch.rand(256)
y = torch.randint(0, 4, (256,))

loss = 0.0
for i in range(len(y)):
    loss += class_weights[y[i]] * losses[i]
loss = loss / len(y)
# ---- vectorized ----
import torch

class_weights = torch.tensor([0.2, 1.0, 3.5, 0.8])
losses = torch.rand(256)
y = torch.randint(0, 4, (256,))

loss = (class_weights[y] * losses).sum() / len(y)
