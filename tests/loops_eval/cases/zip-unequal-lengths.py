# kind: vectorizable
# family: reduction
# origin: zip of two tensors that may differ in length (zip stops at the shorter one)
# results: s
# tags: function-param near-miss
import torch


def overlap_dot(a, b):
    s = 0
    for x, y in zip(a, b):
        s += x * y
    return s


s = overlap_dot(torch.randn(100), torch.randn(80))
# ---- vectorized ----
import torch


def overlap_dot(a, b):
    n = min(len(a), len(b))
    return a[:n] @ b[:n]


s = overlap_dot(torch.randn(100), torch.randn(80))
