# kind: vectorizable
# family: contraction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: out
# tags: function-param multi-statement
import torch

def attend(q, k, v):
    # q, k, v: (heads, T, d)
    outs = []
    for h in range(q.shape[0]):
        scores = q[h] @ k[h].T / (q.shape[-1] ** 0.5)
        weights = torch.softmax(scores, dim=-1)
        outs.append(weights @ v[h])
    return torch.stack(outs)

q = torch.randn(4, 10, 8)
k = torch.randn(4, 10, 8)
v = torch.randn(4, 10, 8)
out = attend(q, k, v)
# ---- vectorized ----
import torch

q = torch.randn(4, 10, 8)
k = torch.randn(4, 10, 8)
v = torch.randn(4, 10, 8)
out = torch.softmax(q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5), dim=-1) @ v
