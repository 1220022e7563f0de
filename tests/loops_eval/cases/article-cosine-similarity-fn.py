# kind: vectorizable
# family: per-row-normalize
# origin: the article's cosine_similarity_loop(a, b)
# results: sims
# tags: article function-param
import torch
import torch.nn.functional as F


def cosine_similarity_loop(a, b):
    result = torch.empty(a.shape[0])
    for i in range(a.shape[0]):
        result[i] = F.cosine_similarity(a[i], b[i], dim=0)
    return result


a = torch.randn(512, 128)
b = torch.randn(512, 128)
sims = cosine_similarity_loop(a, b)
# ---- vectorized ----
import torch
import torch.nn.functional as F


def cosine_similarity_vec(a, b):
    return F.cosine_similarity(a, b, dim=1)


a = torch.randn(512, 128)
b = torch.randn(512, 128)
sims = cosine_similarity_vec(a, b)
