# kind: vectorizable
# family: item-accumulation
# origin: written for stop 25 as users write it (probe set): a validation MSE in plain Python numbers
# results: mse
# tags: module-level
import torch

preds = torch.randn(500)
targets = torch.randn(500)
total = 0.0
for p, t in zip(preds.tolist(), targets.tolist()):
    total += (p - t) ** 2
mse = total / len(preds)
# ---- vectorized ----
import torch

preds = torch.randn(500)
targets = torch.randn(500)
mse = ((preds.double() - targets.double()) ** 2).sum().item() / len(preds)
