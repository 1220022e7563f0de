# kind: vectorizable
# family: item-accumulation
# origin: summing per-batch losses that were collected in a tensor
# results: total
# tags: module-level
import torch

batch_losses = torch.rand(500)

total = 0.0
for loss in batch_losses:
    total += loss.item()
# ---- vectorized ----
import torch

batch_losses = torch.rand(500)

total = batch_losses.double().sum().item()
