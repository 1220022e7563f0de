# kind: vectorizable
# family: running-max
# origin: checkpoint selection: the epoch with the lowest validation loss, where diverged evaluations logged nan
# results: best best_epoch
# tags: module-level near-miss
# note: `loss < best` is False for nan, so the loop skips them; a plain argmin() would pick a nan
import torch

val_losses = torch.rand(50) + 0.2
val_losses[[4, 20, 33]] = float("nan")
best = float("inf")
best_epoch = -1
for epoch, loss in enumerate(val_losses):
    if loss < best:
        best = loss
        best_epoch = epoch
# ---- vectorized ----
import torch

val_losses = torch.rand(50) + 0.2
val_losses[[4, 20, 33]] = float("nan")
clean = torch.where(val_losses.isnan(), float("inf"), val_losses)
best_epoch = int(clean.argmin())
best = val_losses[best_epoch]
