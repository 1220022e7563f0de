# kind: vectorizable
# family: map
# origin: a function whose input shape is only known by rank
# results: norms
# tags: function-param rank-only
import torch


def row_norms(x):
    B, D = x.shape
    norms = torch.zeros(B)
    for b in range(B):
        norms[b] = x[b].norm()
    return norms


norms = row_norms(torch.randn(700, 24))
# ---- vectorized ----
import torch


def row_norms(x):
    return x.norm(dim=1)


norms = row_norms(torch.randn(700, 24))
