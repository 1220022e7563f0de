# kind: vectorizable
# family: ragged-mask
# origin: written for stop 26 as users write it (second probe): a mask over each example's answer span (start and end per row)
# results: span_mask
# tags: module-level
import torch

seq_len = 40
starts = torch.randint(0, 20, (12,))
ends = starts + torch.randint(1, 20, (12,))
span_mask = torch.zeros(12, seq_len, dtype=torch.bool)
for i in range(12):
    span_mask[i, starts[i]:ends[i]] = True
# ---- vectorized ----
import torch

seq_len = 40
starts = torch.randint(0, 20, (12,))
ends = starts + torch.randint(1, 20, (12,))
pos = torch.arange(seq_len)
span_mask = (pos >= starts[:, None]) & (pos < ends[:, None])
