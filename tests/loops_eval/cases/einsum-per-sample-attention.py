# kind: vectorizable
# family: contraction
# origin: written for stop 29 as users write it (probe set): attention scores per sample with einsum in a loop
# results: scores
# tags: module-level
import torch

batch, heads, seq, dim = 8, 4, 16, 32
q = torch.randn(batch, heads, seq, dim)
k = torch.randn(batch, heads, seq, dim)
scores = torch.empty(batch, heads, seq, seq)
for b in range(batch):
    scores[b] = torch.einsum("hqd,hkd->hqk", q[b], k[b]) / dim ** 0.5
# ---- vectorized ----
import torch

batch, heads, seq, dim = 8, 4, 16, 32
q = torch.randn(batch, heads, seq, dim)
k = torch.randn(batch, heads, seq, dim)
scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / dim ** 0.5
