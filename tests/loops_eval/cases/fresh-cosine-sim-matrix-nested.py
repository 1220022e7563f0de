# kind: vectorizable
# family: contraction
# origin: retrieval notebooks: cosine similarity of every query embedding against every document embedding
# results: sim
# tags: module-level nested
import torch
import torch.nn.functional as F

queries = torch.randn(8, 64)
docs = torch.randn(20, 64)
sim = torch.zeros(len(queries), len(docs))
for i in range(len(queries)):
    for j in range(len(docs)):
        sim[i, j] = F.cosine_similarity(queries[i], docs[j], dim=0)
# ---- vectorized ----
import torch
import torch.nn.functional as F

queries = torch.randn(8, 64)
docs = torch.randn(20, 64)
sim = F.cosine_similarity(queries[:, None, :], docs[None, :, :], dim=-1)
