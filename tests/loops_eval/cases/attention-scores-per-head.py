# kind: vectorizable
# family: contraction
# origin: attention scores computed per head
# results: scores
# tags: module-level
import math

import torch

heads, seq, d = 8, 32, 16
q = torch.randn(heads, seq, d)
k = torch.randn(heads, seq, d)

scores = torch.empty(heads, seq, seq)
for h in range(heads):
    scores[h] = q[h] @ k[h].T / math.sqrt(d)
# ---- vectorized ----
import math

import torch

heads, seq, d = 8, 32, 16
q = torch.randn(heads, seq, d)
k = torch.randn(heads, seq, d)

scores = q @ k.transpose(-2, -1) / math.sqrt(d)
