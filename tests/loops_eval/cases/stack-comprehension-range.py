# kind: vectorizable
# family: comprehension
# origin: scaling rows through an index comprehension
# results: scaled
# tags: module-level
import torch

x = torch.randn(500, 20)
gain = torch.randn(20)
scaled = torch.stack([x[i] * gain for i in range(len(x))])
# ---- vectorized ----
import torch

x = torch.randn(500, 20)
gain = torch.randn(20)
scaled = x * gain
