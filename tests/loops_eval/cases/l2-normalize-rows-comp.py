# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: normed
# tags: module-level
import torch

emb = torch.randn(32, 64)
normed = torch.stack([e / e.norm() for e in emb])
# ---- vectorized ----
import torch

emb = torch.randn(32, 64)
normed = emb / emb.norm(dim=1, keepdim=True)
