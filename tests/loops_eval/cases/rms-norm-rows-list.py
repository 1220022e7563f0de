# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 29 as users write it (probe set): RMSNorm per hidden state, list then stack
# results: out
# tags: module-level list-of-tensors
import torch
import torch.nn.functional as F

hidden = torch.randn(64, 4, 128)
weight = torch.rand(128) + 0.5
rows = []
for h in hidden:
    rows.append(F.rms_norm(h, (128,), weight, eps=1e-6))
out = torch.stack(rows)
# ---- vectorized ----
import torch
import torch.nn.functional as F

hidden = torch.randn(64, 4, 128)
weight = torch.rand(128) + 0.5
out = F.rms_norm(hidden, (128,), weight, eps=1e-6)
