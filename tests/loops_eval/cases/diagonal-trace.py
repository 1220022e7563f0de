# kind: vectorizable
# family: diagonal-indexing
# origin: a trace written out by hand
# results: tr
# tags: module-level
import torch

A = torch.randn(200, 200)

tr = 0.0
for i in range(A.shape[0]):
    tr += A[i, i]
# ---- vectorized ----
import torch

A = torch.randn(200, 200)

tr = torch.trace(A)
