# kind: vectorizable
# family: reduction
# origin: a mean written out by hand
# results: mean
# tags: function-param
import torch


def average(t):
    s = 0
    for x in t:
        s += x
    return s / len(t)


mean = average(torch.randn(4096))
# ---- vectorized ----
import torch


def average(t):
    return t.sum() / len(t)


mean = average(torch.randn(4096))
