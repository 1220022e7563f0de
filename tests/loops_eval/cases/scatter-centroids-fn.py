# kind: vectorizable
# family: scatter
# origin: k-means update step, written in a function
# results: centroids
# tags: function-param multi-statement
import torch


def update_centroids(points, assign, k):
    totals = torch.zeros(k, points.shape[1])
    counts = torch.zeros(k)
    for p, c in zip(points, assign):
        totals[c] += p
        counts[c] += 1
    return totals / counts.clamp(min=1)[:, None]


points = torch.randn(1000, 2)
assign = torch.randint(0, 8, (1000,))
centroids = update_centroids(points, assign, 8)
# ---- vectorized ----
import torch


def update_centroids(points, assign, k):
    totals = torch.zeros(k, points.shape[1]).index_add_(0, assign, points)
    counts = torch.bincount(assign, minlength=k).float()
    return totals / counts.clamp(min=1)[:, None]


points = torch.randn(1000, 2)
assign = torch.randint(0, 8, (1000,))
centroids = update_centroids(points, assign, 8)
