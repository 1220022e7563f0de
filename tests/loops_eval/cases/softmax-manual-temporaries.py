# kind: vectorizable
# family: per-row-softmax
# origin: a numerically stable softmax written out by hand, in a function
# results: attn
# tags: function-param multi-statement
import torch


def stable_softmax_rows(scores):
    out = torch.empty_like(scores)
    for i in range(scores.shape[0]):
        row = scores[i]
        shifted = row - row.max()
        e = torch.exp(shifted)
        out[i] = e / e.sum()
    return out


attn = stable_softmax_rows(torch.randn(256, 49))
# ---- vectorized ----
import torch


def stable_softmax_rows(scores):
    return torch.softmax(scores, dim=1)


attn = stable_softmax_rows(torch.randn(256, 49))
