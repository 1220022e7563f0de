# kind: vectorizable
# family: map
# origin: per-sample regression losses for hard-example mining
# results: losses
# tags: module-level
import torch
import torch.nn.functional as F

pred = torch.randn(256, 8)
target = torch.randn(256, 8)

losses = torch.zeros(256)
for i in range(256):
    losses[i] = F.mse_loss(pred[i], target[i])
# ---- vectorized ----
import torch
import torch.nn.functional as F

pred = torch.randn(256, 8)
target = torch.randn(256, 8)

losses = F.mse_loss(pred, target, reduction="none").mean(dim=1)
