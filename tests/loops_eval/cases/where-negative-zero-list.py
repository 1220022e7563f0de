# kind: vectorizable
# family: comprehension
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: cleaned
# tags: module-level
import torch

values = torch.randn(30)
cleaned = torch.stack([v if v > 0 else torch.zeros_like(v) for v in values])
# ---- vectorized ----
import torch

values = torch.randn(30)
cleaned = torch.where(values > 0, values, torch.zeros_like(values))
