# kind: vectorizable
# family: shifted-indexing
# origin: written for stop 26 as users write it (probe set): similarity of consecutive frame embeddings (shot boundary detection)
# results: sims
# tags: module-level
import torch
import torch.nn.functional as F

emb = torch.randn(120, 64)
sims = torch.zeros(119)
for t in range(119):
    sims[t] = F.cosine_similarity(emb[t], emb[t + 1], dim=0)
# ---- vectorized ----
import torch
import torch.nn.functional as F

emb = torch.randn(120, 64)
sims = F.cosine_similarity(emb[:-1], emb[1:], dim=1)
