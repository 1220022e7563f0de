# kind: vectorizable
# family: map
# origin: written for stop 26 as users write it (probe set): position ids clamped to the table size (the loop index as a value)
# results: pos
# tags: module-level
import torch

seq_len = 80
max_pos = 64
pos = torch.zeros(seq_len, dtype=torch.long)
for i in range(seq_len):
    pos[i] = min(i, max_pos - 1)
# ---- vectorized ----
import torch

seq_len = 80
max_pos = 64
pos = torch.arange(seq_len).clamp(max=max_pos - 1)
