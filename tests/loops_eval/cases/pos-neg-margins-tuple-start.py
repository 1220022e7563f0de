# kind: vectorizable
# family: reduction
# origin: written for stop 29 as users write it (probe set): positive and negative parts of residuals, started as a tuple
# results: pos_total neg_total
# tags: function-param multi-statement
import torch


def split_residuals(pred, target):
    pos_total, neg_total = 0.0, 0.0
    for p, t in zip(pred, target):
        r = p - t
        pos_total += r.clamp(min=0)
        neg_total += r.clamp(max=0)
    return pos_total, neg_total


pred = torch.randn(512)
target = torch.randn(512)
pos_total, neg_total = split_residuals(pred, target)
# ---- vectorized ----
import torch

pred = torch.randn(512)
target = torch.randn(512)
r = pred - target
pos_total, neg_total = r.clamp(min=0).sum(), r.clamp(max=0).sum()
