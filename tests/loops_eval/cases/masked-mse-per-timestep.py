# kind: vectorizable
# family: column-indexing
# origin: written for stop 25 as users write it (probe set): masked sequence regression loss, step by step
# results: loss
# tags: module-level
import torch

B, T = 8, 50
pred = torch.randn(B, T)
y = torch.randn(B, T)
mask = (torch.rand(B, T) > 0.2).float()

loss = 0
for t in range(T):
    loss = loss + (((pred[:, t] - y[:, t]) ** 2) * mask[:, t]).sum()
loss = loss / mask.sum()
# ---- vectorized ----
import torch

B, T = 8, 50
pred = torch.randn(B, T)
y = torch.randn(B, T)
mask = (torch.rand(B, T) > 0.2).float()

loss = (((pred - y) ** 2) * mask).sum() / mask.sum()
