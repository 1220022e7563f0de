# kind: vectorizable
# family: ragged-mask
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: mask
# tags: module-level
import torch

lengths = [5, 3, 7, 1]
max_len = max(lengths)
mask = torch.zeros(len(lengths), max_len, dtype=torch.bool)
for i, l in enumerate(lengths):
    mask[i, :l] = True
# ---- vectorized ----
import torch

lengths = [5, 3, 7, 1]
max_len = max(lengths)
mask = torch.arange(max_len) < torch.tensor(lengths)[:, None]
