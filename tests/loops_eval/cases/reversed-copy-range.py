# kind: vectorizable
# family: shifted-indexing
# origin: written for stop 26 as users write it (probe set): reverse a signal with a descending range
# results: out
# tags: module-level
import torch

sig = torch.randn(300)
n = sig.shape[0]
out = torch.empty(n)
for i in range(n - 1, -1, -1):
    out[n - 1 - i] = sig[i]
# ---- vectorized ----
import torch

sig = torch.randn(300)
n = sig.shape[0]
out = sig.flip(0)
