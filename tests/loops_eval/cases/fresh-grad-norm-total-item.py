# kind: vectorizable
# family: item-accumulation
# origin: training scripts that log the global gradient norm before clipping: per-parameter norms squared and summed with .item()
# results: total_norm
# tags: module-level list-of-tensors
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
x = torch.randn(64, 10)
loss = model(x).pow(2).mean()
loss.backward()

total_norm = 0.0
for p in model.parameters():
    if p.grad is not None:
        param_norm = p.grad.data.norm(2)
        total_norm += param_norm.item() ** 2
total_norm = total_norm ** 0.5
# ---- vectorized ----
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
x = torch.randn(64, 10)
loss = model(x).pow(2).mean()
loss.backward()

grads = [p.grad for p in model.parameters() if p.grad is not None]
total_norm = torch.nn.utils.get_total_norm(grads, 2.0).item()
