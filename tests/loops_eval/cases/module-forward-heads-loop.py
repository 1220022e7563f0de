# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: out
# tags: function-param
import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim) * 0.5)

    def forward(self, x):
        out = torch.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = x[i] * self.gamma
        return out


with torch.no_grad():
    out = Scale(8)(torch.randn(4, 8))
# ---- vectorized ----
import torch

with torch.no_grad():
    out = torch.randn(4, 8) * (torch.ones(8) * 0.5)
