# kind: vectorizable
# family: shifted-indexing
# origin: signal-processing snippets: 2x linear upsampling by inserting the midpoint between neighbouring samples
# results: up
# tags: function-param multi-statement
import torch


def upsample_linear(x):
    n = len(x)
    out = torch.empty(2 * n - 1)
    for i in range(n - 1):
        out[2 * i] = x[i]
        out[2 * i + 1] = (x[i] + x[i + 1]) / 2
    out[-1] = x[-1]
    return out


samples = torch.randn(200)
up = upsample_linear(samples)
# ---- vectorized ----
import torch


def upsample_linear(x):
    n = len(x)
    out = torch.empty(2 * n - 1)
    out[0::2] = x
    out[1::2] = (x[:-1] + x[1:]) / 2
    return out


samples = torch.randn(200)
up = upsample_linear(samples)
