# kind: vectorizable
# family: contraction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: out
# tags: module-level
import torch

A = torch.randn(32, 5, 4)
v = torch.randn(32, 4)
out = torch.empty(32, 5)
for i in range(A.size(0)):
    out[i] = A[i] @ v[i]
# ---- vectorized ----
import torch

A = torch.randn(32, 5, 4)
v = torch.randn(32, 4)
out = torch.bmm(A, v.unsqueeze(2)).squeeze(2)
