# kind: vectorizable
# family: one-hot
# origin: written for stop 26 as users write it (probe set): one-hot targets with chained indexing, in a function
# results: y_onehot
# tags: function-param
import torch


def to_onehot(y, num_classes):
    out = torch.zeros(len(y), num_classes)
    for i in range(len(y)):
        out[i][y[i]] = 1
    return out


y_onehot = to_onehot(torch.randint(0, 5, (100,)), 5)
# ---- vectorized ----
import torch
import torch.nn.functional as F


def to_onehot(y, num_classes):
    return F.one_hot(y, num_classes).float()


y_onehot = to_onehot(torch.randint(0, 5, (100,)), 5)
