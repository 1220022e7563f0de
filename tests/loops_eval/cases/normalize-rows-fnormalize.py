# kind: vectorizable
# family: per-row-normalize
# origin: embedding post-processing, StackOverflow style
# results: embeddings_normed
# tags: module-level
import torch
import torch.nn.functional as F

embeddings = torch.randn(1000, 128)

# L2-normalize every embedding before the nearest-neighbour search
embeddings_normed = torch.empty_like(embeddings)
for idx, row in enumerate(embeddings):
    embeddings_normed[idx] = F.normalize(row, dim=0)
# ---- vectorized ----
import torch
import torch.nn.functional as F

embeddings = torch.randn(1000, 128)

embeddings_normed = F.normalize(embeddings, dim=1)
