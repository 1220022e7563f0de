# kind: vectorizable
# family: map
# origin: written for stop 26 as users write it (probe set): reverse every sequence in a batch (backward direction of a bidirectional model)
# results: rev
# tags: function-param
import torch


def reverse_time(x):
    rev = torch.empty_like(x)
    for b in range(x.shape[0]):
        rev[b] = x[b].flip(0)
    return rev


rev = reverse_time(torch.randn(4, 25, 7))
# ---- vectorized ----
import torch


def reverse_time(x):
    return x.flip(1)


rev = reverse_time(torch.randn(4, 25, 7))
