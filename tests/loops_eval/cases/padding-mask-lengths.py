# kind: vectorizable
# family: ragged-mask
# origin: NLP batching: a padding mask from sequence lengths
# results: mask
# tags: module-level
import torch

batch, max_len = 64, 50
lengths = torch.randint(1, max_len + 1, (batch,))

mask = torch.zeros(batch, max_len, dtype=torch.bool)
for b in range(batch):
    mask[b, :lengths[b]] = True
# ---- vectorized ----
import torch

batch, max_len = 64, 50
lengths = torch.randint(1, max_len + 1, (batch,))

mask = torch.arange(max_len)[None, :] < lengths[:, None]
