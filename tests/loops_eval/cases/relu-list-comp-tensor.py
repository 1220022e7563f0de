# kind: vectorizable
# family: comprehension
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: out
# tags: module-level
import torch

x = torch.randn(40)
out = torch.tensor([max(v.item(), 0.0) for v in x])
# ---- vectorized ----
import torch

x = torch.randn(40)
out = x.clamp(min=0)
