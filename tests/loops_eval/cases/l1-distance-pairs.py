# kind: vectorizable
# family: map
# origin: written for stop 26 as users write it (second probe): L1 distance between matched embeddings with torch.norm(p=1)
# results: d
# tags: module-level
import torch

a = torch.randn(200, 16)
b = torch.randn(200, 16)
d = torch.zeros(200)
for i in range(200):
    d[i] = torch.norm(a[i] - b[i], p=1)
# ---- vectorized ----
import torch

a = torch.randn(200, 16)
b = torch.randn(200, 16)
d = torch.norm(a - b, p=1, dim=1)
