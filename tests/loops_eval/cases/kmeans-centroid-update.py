# kind: vectorizable
# family: per-class-metric
# origin: written for stop 26 as users write it (third probe): the k-means update step, one boolean mask per cluster
# results: centroids
# tags: module-level
import torch

x = torch.randn(500, 2)
k = 4
assign = torch.randint(0, k, (500,))
centroids = torch.zeros(k, 2)
for c in range(k):
    centroids[c] = x[assign == c].mean(0)
# ---- vectorized ----
import torch

x = torch.randn(500, 2)
k = 4
assign = torch.randint(0, k, (500,))
sums = torch.zeros(k, 2).index_add_(0, assign, x)
counts = torch.bincount(assign, minlength=k).float()
centroids = sums / counts[:, None]
