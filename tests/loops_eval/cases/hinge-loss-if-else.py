# kind: vectorizable
# family: reduction
# origin: written for stop 25 as users write it (probe set): SVM hinge loss with an if per sample
# results: loss
# tags: function-param
import torch


def hinge(scores, y):
    total = 0.0
    for s, t in zip(scores, y):
        margin = 1 - t * s
        if margin > 0:
            total += margin
    return total / len(y)


scores = torch.randn(128)
y = torch.randint(0, 2, (128,)).float() * 2 - 1
loss = hinge(scores, y)
# ---- vectorized ----
import torch

scores = torch.randn(128)
y = torch.randint(0, 2, (128,)).float() * 2 - 1
loss = (1 - y * scores).clamp(min=0).sum() / len(y)
