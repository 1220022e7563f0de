# kind: vectorizable
# family: map
# origin: clamping negatives in place, element by element
# results: x
# tags: module-level
import torch

x = torch.randn(3000)
for i in range(len(x)):
    if x[i] < 0:
        x[i] = 0
# ---- vectorized ----
import torch

x = torch.randn(3000)
x.clamp_(min=0)
