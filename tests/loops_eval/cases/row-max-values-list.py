# kind: vectorizable
# family: reduction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: best
# tags: module-level
import torch

q_values = torch.randn(32, 4)
best = torch.tensor([q.max().item() for q in q_values])
# ---- vectorized ----
import torch

q_values = torch.randn(32, 4)
best = q_values.max(dim=1).values.double().float()
