# kind: vectorizable
# family: per-item-list
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: loss
# tags: function-param
import torch
import torch.nn.functional as F

def per_sample_loss(preds, targets):
    losses = []
    for pred, target in zip(preds, targets):
        losses.append(F.mse_loss(pred, target))
    return torch.stack(losses).mean()

preds = torch.randn(16, 3)
targets = torch.randn(16, 3)
loss = per_sample_loss(preds, targets)
# ---- vectorized ----
import torch
import torch.nn.functional as F

preds = torch.randn(16, 3)
targets = torch.randn(16, 3)
loss = ((preds - targets) ** 2).mean(dim=1).mean()
