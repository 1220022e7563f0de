# kind: vectorizable
# family: ragged-mask
# origin: written for stop 26 as users write it (third probe): mean of each bag of embeddings given by offsets (an EmbeddingBag by hand)
# results: pooled
# tags: module-level
import torch

emb = torch.randn(100, 16)
offsets = torch.tensor([0, 3, 7, 7, 12, 20])
pooled = torch.zeros(len(offsets) - 1, 16)
for i in range(len(offsets) - 1):
    pooled[i] = emb[offsets[i]:offsets[i + 1]].mean(0)
# ---- vectorized ----
import torch

emb = torch.randn(100, 16)
offsets = torch.tensor([0, 3, 7, 7, 12, 20])
lengths = offsets[1:] - offsets[:-1]
bag = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
sums = torch.zeros(len(lengths), 16).index_add_(0, bag, emb[offsets[0]:offsets[-1]])
pooled = sums / lengths[:, None]
