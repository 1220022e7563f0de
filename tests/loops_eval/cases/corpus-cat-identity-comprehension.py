# kind: vectorizable
# family: comprehension
# origin: timm crossvit.py: torch.cat of a comprehension that copies the list
# results: merged
# tags: corpus-style function-param list-of-tensors
import torch


def merge_branches(xs):
    return torch.cat([x for x in xs], dim=1)


merged = merge_branches([torch.randn(8, 197, 192), torch.randn(8, 50, 192)])
# ---- vectorized ----
import torch


def merge_branches(xs):
    return torch.cat(xs, dim=1)


merged = merge_branches([torch.randn(8, 197, 192), torch.randn(8, 50, 192)])
