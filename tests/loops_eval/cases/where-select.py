# kind: vectorizable
# family: map
# origin: choosing between two predictions per element
# results: merged
# tags: module-level
import torch

a = torch.randn(1000)
b = torch.randn(1000)
use_a = torch.rand(1000) > 0.3

merged = torch.empty(1000)
for i in range(1000):
    merged[i] = a[i] if use_a[i] else b[i]
# ---- vectorized ----
import torch

a = torch.randn(1000)
b = torch.randn(1000)
use_a = torch.rand(1000) > 0.3

merged = torch.where(use_a, a, b)
