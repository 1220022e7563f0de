# kind: vectorizable
# family: per-item-list
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: feats
# tags: module-level list-of-tensors
import torch

outputs = [torch.randn(4, 16) for _ in range(5)]
feats = torch.cat([o.detach() for o in outputs], dim=0)
# ---- vectorized ----
import torch

outputs = [torch.randn(4, 16) for _ in range(5)]
feats = torch.cat(outputs, dim=0).detach()
