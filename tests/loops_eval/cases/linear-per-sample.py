# kind: vectorizable
# family: contraction
# origin: a linear layer applied one sample at a time
# results: out
# tags: function-param rank-only
import torch


def apply_linear(x, W, b):
    N, D_in = x.shape
    out = torch.empty(N, W.shape[0])
    for n in range(N):
        out[n] = W @ x[n] + b
    return out


W = torch.randn(16, 32)
b = torch.randn(16)
out = apply_linear(torch.randn(400, 32), W, b)
# ---- vectorized ----
import torch


def apply_linear(x, W, b):
    return x @ W.T + b


W = torch.randn(16, 32)
b = torch.randn(16)
out = apply_linear(torch.randn(400, 32), W, b)
