# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: sims
# tags: module-level
import torch
import torch.nn.functional as F

query = torch.randn(64)
keys = torch.randn(20, 64)
sims = []
for k in keys:
    sims.append(F.cosine_similarity(query, k, dim=0))
sims = torch.stack(sims)
# ---- vectorized ----
import torch
import torch.nn.functional as F

query = torch.randn(64)
keys = torch.randn(20, 64)
sims = F.cosine_similarity(query[None], keys, dim=1)
