# kind: vectorizable
# family: index-grid
# origin: "Transformer from scratch" blog posts: sinusoidal positional encoding filled entry by entry with math.sin/math.cos
# results: pe
# tags: module-level nested multi-statement
import math

import torch

max_len, d_model = 64, 32
pe = torch.zeros(max_len, d_model)
for pos in range(max_len):
    for i in range(0, d_model, 2):
        pe[pos, i] = math.sin(pos / (10000 ** (i / d_model)))
        pe[pos, i + 1] = math.cos(pos / (10000 ** (i / d_model)))
# ---- vectorized ----
import math

import torch

max_len, d_model = 64, 32
pe = torch.zeros(max_len, d_model)
position = torch.arange(max_len, dtype=torch.float64)[:, None]
div_term = 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
pe[:, 0::2] = torch.sin(position / div_term).float()
pe[:, 1::2] = torch.cos(position / div_term).float()
