# kind: must-stay-loop
# family: early-exit
# origin: written for stop 25 as users write it (probe set): early stopping over recorded validation losses
# why: the patience counter resets on improvement and the loop breaks when it runs out: data-dependent exit
# tags: module-level
import torch

val_losses = torch.rand(40)
best, patience, wait, stop_epoch = float("inf"), 5, 0, None
for epoch, loss in enumerate(val_losses):
    if loss < best:
        best, wait = loss.item(), 0
    else:
        wait += 1
        if wait >= patience:
            stop_epoch = epoch
            break
