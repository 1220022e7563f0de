# kind: vectorizable
# family: diagonal-indexing
# origin: a causal attention mask built with two loops
# results: mask
# tags: module-level nested
import torch

T = 64
mask = torch.zeros(T, T)
for i in range(T):
    for j in range(T):
        if j > i:
            mask[i, j] = float("-inf")
# ---- vectorized ----
import torch

T = 64
mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
