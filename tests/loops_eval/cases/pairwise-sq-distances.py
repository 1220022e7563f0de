# kind: vectorizable
# family: contraction
# origin: pairwise squared distances for a k-NN classifier
# results: dist
# tags: function-param nested
import torch


def pairwise_sq_dists(x, y):
    dist = torch.zeros(x.shape[0], y.shape[0])
    for i in range(x.shape[0]):
        for j in range(y.shape[0]):
            dist[i, j] = ((x[i] - y[j]) ** 2).sum()
    return dist


dist = pairwise_sq_dists(torch.randn(60, 5), torch.randn(40, 5))
# ---- vectorized ----
import torch


def pairwise_sq_dists(x, y):
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(dim=-1)


dist = pairwise_sq_dists(torch.randn(60, 5), torch.randn(40, 5))
