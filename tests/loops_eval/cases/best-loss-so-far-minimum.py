# kind: vectorizable
# family: running-max
# origin: written for stop 29 as users write it (probe set): the best validation loss so far, per epoch, with torch.minimum
# results: best_so_far
# tags: module-level
import torch

val_losses = torch.rand(300) * torch.linspace(2.0, 0.5, 300)
best_so_far = torch.empty_like(val_losses)
best = val_losses[0]
for epoch in range(len(val_losses)):
    best = torch.minimum(best, val_losses[epoch])
    best_so_far[epoch] = best
# ---- vectorized ----
import torch

val_losses = torch.rand(300) * torch.linspace(2.0, 0.5, 300)
best_so_far = torch.cummin(val_losses, dim=0).values
