# kind: vectorizable
# family: item-accumulation
# origin: written for stop 25 as users write it (probe set): sequence lengths from an attention mask
# results: lengths
# tags: module-level
import torch

mask = torch.rand(16, 40) > 0.4
lengths = []
for row in mask:
    lengths.append(int(row.sum()))
# ---- vectorized ----
import torch

mask = torch.rand(16, 40) > 0.4
lengths = mask.sum(1).tolist()
