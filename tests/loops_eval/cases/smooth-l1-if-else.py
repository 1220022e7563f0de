# kind: vectorizable
# family: multi-statement-map
# origin: written for stop 26 as users write it (probe set): smooth L1 (Huber) loss per element with an if/else
# results: loss
# tags: module-level multi-statement
import torch

pred = torch.randn(500)
target = torch.randn(500)
beta = 1.0
loss = torch.zeros(500)
for i in range(500):
    d = (pred[i] - target[i]).abs()
    if d < beta:
        loss[i] = 0.5 * d ** 2 / beta
    else:
        loss[i] = d - 0.5 * beta
# ---- vectorized ----
import torch
import torch.nn.functional as F

pred = torch.randn(500)
target = torch.randn(500)
beta = 1.0
loss = F.smooth_l1_loss(pred, target, reduction="none", beta=beta)
