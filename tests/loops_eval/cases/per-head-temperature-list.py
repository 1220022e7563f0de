# kind: vectorizable
# family: comprehension
# origin: written for stop 25 as users write it (probe set): per-head temperature scaling
# results: scaled
# tags: module-level list-of-tensors
import torch

attn = torch.randn(8, 20, 20)
temps = torch.rand(8) + 0.5
scaled = torch.stack([a / t for a, t in zip(attn, temps)])
# ---- vectorized ----
import torch

attn = torch.randn(8, 20, 20)
temps = torch.rand(8) + 0.5
scaled = attn / temps[:, None, None]
