# kind: vectorizable
# family: contraction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: assign
# tags: module-level nested
import torch

points = torch.randn(100, 2)
centroids = torch.randn(4, 2)
dists = torch.zeros(100, 4)
for i in range(100):
    for k in range(4):
        dists[i, k] = ((points[i] - centroids[k]) ** 2).sum()
assign = dists.argmin(dim=1)
# ---- vectorized ----
import torch

points = torch.randn(100, 2)
centroids = torch.randn(4, 2)
dists = ((points[:, None] - centroids[None]) ** 2).sum(-1)
assign = dists.argmin(dim=1)
