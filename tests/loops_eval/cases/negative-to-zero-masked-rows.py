# kind: vectorizable
# family: map
# origin: written for stop 26 as users write it (probe set): zero the negative entries of each row with a boolean mask store
# results: acts
# tags: module-level
import torch

acts = torch.randn(64, 30)
for i in range(acts.shape[0]):
    acts[i][acts[i] < 0] = 0
# ---- vectorized ----
import torch

acts = torch.randn(64, 30)
acts[acts < 0] = 0
