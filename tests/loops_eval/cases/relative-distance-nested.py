# kind: vectorizable
# family: diagonal-indexing
# origin: written for stop 25 as users write it (probe set): clipped relative position buckets
# results: rel
# tags: module-level nested
import torch

L, max_dist = 16, 4
rel = torch.zeros(L, L, dtype=torch.long)
for i in range(L):
    for j in range(L):
        rel[i, j] = min(max(j - i, -max_dist), max_dist) + max_dist
# ---- vectorized ----
import torch

L, max_dist = 16, 4
pos = torch.arange(L)
rel = (pos[None, :] - pos[:, None]).clamp(-max_dist, max_dist) + max_dist
