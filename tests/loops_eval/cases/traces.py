# kind: vectorizable
# family: diagonal-indexing
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: tr
# tags: module-level
import torch

mats = torch.randn(8, 5, 5)
tr = torch.stack([torch.trace(m) for m in mats])
# ---- vectorized ----
import torch

mats = torch.randn(8, 5, 5)
tr = mats.diagonal(dim1=1, dim2=2).sum(-1)
