# kind: vectorizable
# family: map
# origin: per-sample loss weighting in research code
# results: out
# tags: module-level
import torch

x = torch.randn(1024, 32)
w = torch.rand(1024)  # one weight per sample

out = torch.empty(1024, 32)
for i, row in enumerate(x):
    out[i] = row * w[i]
# ---- vectorized ----
import torch

x = torch.randn(1024, 32)
w = torch.rand(1024)

out = x * w[:, None]
