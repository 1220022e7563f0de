# kind: vectorizable
# family: reduction
# origin: the first step where a metric crosses a threshold (early exit that returns the index)
# results: step
# tags: function-param
import torch


def first_above(x, thr):
    for i in range(len(x)):
        if x[i] > thr:
            return i
    return -1


step = first_above(torch.rand(1000), 0.99)
# ---- vectorized ----
import torch


def first_above(x, thr):
    hits = (x > thr).nonzero()
    return int(hits[0]) if len(hits) else -1


step = first_above(torch.rand(1000), 0.99)
