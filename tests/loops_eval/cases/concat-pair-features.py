# kind: vectorizable
# family: map
# origin: written for stop 26 as users write it (second probe): the features of each (user, item) pair concatenated for a scoring MLP
# results: pairs
# tags: module-level
import torch

users = torch.randn(128, 16)
items = torch.randn(128, 24)
pairs = torch.zeros(128, 40)
for i in range(128):
    pairs[i] = torch.cat([users[i], items[i]])
# ---- vectorized ----
import torch

users = torch.randn(128, 16)
items = torch.randn(128, 24)
pairs = torch.cat([users, items], dim=1)
