# kind: vectorizable
# family: scatter
# origin: written for stop 26 as users write it (probe set): undo a random shuffle of a batch (inverse permutation)
# results: restored inv
# tags: function-param
import torch


def invert(perm):
    inv = torch.zeros_like(perm)
    for i in range(perm.numel()):
        inv[perm[i]] = i
    return inv


x = torch.randn(64, 8)
perm = torch.randperm(64)
shuffled = x[perm]
inv = invert(perm)
restored = shuffled[inv]
# ---- vectorized ----
import torch


def invert(perm):
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(perm.numel())
    return inv


x = torch.randn(64, 8)
perm = torch.randperm(64)
shuffled = x[perm]
inv = invert(perm)
restored = shuffled[inv]
