# kind: vectorizable
# family: gather
# origin: written for stop 25 as users write it (probe set): the RNN output at each sequence's last real step
# results: last
# tags: module-level
import torch

B, T, H = 6, 12, 16
outputs = torch.randn(B, T, H)
lengths = torch.randint(1, T + 1, (B,))
last = torch.stack([outputs[b, lengths[b] - 1] for b in range(B)])
# ---- vectorized ----
import torch

B, T, H = 6, 12, 16
outputs = torch.randn(B, T, H)
lengths = torch.randint(1, T + 1, (B,))
last = outputs[torch.arange(B), lengths - 1]
