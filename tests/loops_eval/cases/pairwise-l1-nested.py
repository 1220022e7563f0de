# kind: vectorizable
# family: contraction
# origin: written for stop 26 as users write it (probe set): pairwise L1 (Manhattan) distances between two point sets
# results: D
# tags: function-param nested
import torch


def manhattan(a, b):
    D = torch.zeros(a.shape[0], b.shape[0])
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            D[i, j] = (a[i] - b[j]).abs().sum()
    return D


D = manhattan(torch.randn(20, 3), torch.randn(15, 3))
# ---- vectorized ----
import torch


def manhattan(a, b):
    return (a[:, None, :] - b[None, :, :]).abs().sum(-1)


D = manhattan(torch.randn(20, 3), torch.randn(15, 3))
