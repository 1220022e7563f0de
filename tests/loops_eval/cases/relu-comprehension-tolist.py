# kind: vectorizable
# family: comprehension
# origin: a ReLU through Python floats
# results: activated
# tags: module-level
import torch

x = torch.randn(1000)
activated = torch.tensor([max(0.0, v) for v in x.tolist()])
# ---- vectorized ----
import torch

x = torch.randn(1000)
activated = x.clamp(min=0)
