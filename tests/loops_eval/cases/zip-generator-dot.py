# kind: vectorizable
# family: builtin
# origin: a dot product as a generator expression over zip
# results: similarity
# tags: module-level
import torch

u = torch.randn(4096)
v = torch.randn(4096)
similarity = sum(a * b for a, b in zip(u, v))
# ---- vectorized ----
import torch

u = torch.randn(4096)
v = torch.randn(4096)
similarity = u @ v
