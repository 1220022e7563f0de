# kind: vectorizable
# family: vmap-user-function
# origin: a scoring function of two vectors applied pair by pair
# results: scores
# tags: module-level
import torch


def score(q, k):
    return (q * k).sum() / (q.norm() + 1e-6)


Q = torch.randn(300, 32)
K = torch.randn(300, 32)
scores = torch.stack([score(Q[i], K[i]) for i in range(len(Q))])
# ---- vectorized ----
import torch


def score(q, k):
    return (q * k).sum() / (q.norm() + 1e-6)


Q = torch.randn(300, 32)
K = torch.randn(300, 32)
scores = torch.vmap(score)(Q, K)
