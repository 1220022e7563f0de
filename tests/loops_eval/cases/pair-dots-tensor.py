# kind: vectorizable
# family: reduction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: sims
# tags: module-level
import torch

A = torch.randn(10, 4)
B = torch.randn(10, 4)
sims = torch.tensor([torch.dot(a, b) for a, b in zip(A, B)])
# ---- vectorized ----
import torch

A = torch.randn(10, 4)
B = torch.randn(10, 4)
sims = (A * B).sum(dim=1)
