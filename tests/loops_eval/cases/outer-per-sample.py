# kind: vectorizable
# family: contraction
# origin: written for stop 26 as users write it (probe set): per-sample outer products (bilinear pooling)
# results: outers
# tags: module-level
import torch

u = torch.randn(32, 8)
v = torch.randn(32, 5)
outers = torch.zeros(32, 8, 5)
for i in range(32):
    outers[i] = torch.outer(u[i], v[i])
# ---- vectorized ----
import torch

u = torch.randn(32, 8)
v = torch.randn(32, 5)
outers = torch.einsum("bi,bj->bij", u, v)
