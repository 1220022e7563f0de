# kind: vectorizable
# family: one-hot
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: oh
# tags: function-param
import torch

def one_hot(labels, num_classes):
    out = torch.zeros(len(labels), num_classes)
    for i, l in enumerate(labels):
        out[i, l] = 1.0
    return out

oh = one_hot(torch.randint(0, 5, (12,)), 5)
# ---- vectorized ----
import torch
import torch.nn.functional as F

oh = F.one_hot(torch.randint(0, 5, (12,)), 5).float()
