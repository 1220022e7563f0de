# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: out
# tags: function-param multi-statement
import torch

def standardize(x, eps=1e-5):
    out = torch.empty_like(x)
    for i in range(x.size(0)):
        mu = x[i].mean()
        sigma = x[i].std()
        out[i] = (x[i] - mu) / (sigma + eps)
    return out

out = standardize(torch.randn(16, 32))
# ---- vectorized ----
import torch

x = torch.randn(16, 32)
out = (x - x.mean(dim=1, keepdim=True)) / (x.std(dim=1, keepdim=True) + 1e-5)
