# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: binary
# tags: module-level
import torch

probs = torch.rand(200)
binary = torch.zeros(200, dtype=torch.long)
for i in range(len(probs)):
    if probs[i] >= 0.5:
        binary[i] = 1
# ---- vectorized ----
import torch

probs = torch.rand(200)
binary = (probs >= 0.5).long()
