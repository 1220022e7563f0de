# kind: vectorizable
# family: gather
# origin: written for stop 26 as users write it (probe set): distance of each point to its assigned centroid (k-means inertia)
# results: dist inertia
# tags: function-param
import torch


def point_dists(x, centroids, assign):
    dist = torch.zeros(x.shape[0])
    for i in range(x.shape[0]):
        dist[i] = (x[i] - centroids[assign[i]]).norm()
    return dist


x = torch.randn(300, 4)
centroids = torch.randn(6, 4)
assign = torch.cdist(x, centroids).argmin(1)
dist = point_dists(x, centroids, assign)
inertia = (dist ** 2).sum()
# ---- vectorized ----
import torch


def point_dists(x, centroids, assign):
    return (x - centroids[assign]).norm(dim=1)


x = torch.randn(300, 4)
centroids = torch.randn(6, 4)
assign = torch.cdist(x, centroids).argmin(1)
dist = point_dists(x, centroids, assign)
inertia = (dist ** 2).sum()
