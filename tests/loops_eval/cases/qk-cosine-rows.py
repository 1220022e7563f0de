# kind: vectorizable
# family: per-row-normalize
# origin: retrieval evaluation code: similarity of each query to its own key
# results: scores
# tags: module-level
import torch
import torch.nn.functional as F

num_pairs, dim = 256, 64
q = torch.randn(num_pairs, dim)
k = torch.randn(num_pairs, dim)

scores = torch.zeros(num_pairs)
for i in range(num_pairs):
    scores[i] = F.cosine_similarity(q[i], k[i], dim=0)
# ---- vectorized ----
import torch
import torch.nn.functional as F

num_pairs, dim = 256, 64
q = torch.randn(num_pairs, dim)
k = torch.randn(num_pairs, dim)

scores = F.cosine_similarity(q, k, dim=1)
