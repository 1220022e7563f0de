# kind: vectorizable
# family: column-indexing
# origin: written for stop 26 as users write it (probe set): cosine similarity of every query to each class prototype, a column per prototype
# results: sims
# tags: module-level
import torch
import torch.nn.functional as F

feats = torch.randn(64, 32)
protos = torch.randn(5, 32)
sims = torch.zeros(64, 5)
for k in range(protos.shape[0]):
    sims[:, k] = F.cosine_similarity(feats, protos[k].unsqueeze(0), dim=1)
# ---- vectorized ----
import torch
import torch.nn.functional as F

feats = torch.randn(64, 32)
protos = torch.randn(5, 32)
sims = F.cosine_similarity(feats[:, None, :], protos[None, :, :], dim=2)
