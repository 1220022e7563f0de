# kind: vectorizable
# family: one-hot
# origin: written for stop 26 as users write it (probe set): hard predictions as one-hot rows (argmax per row)
# results: hard
# tags: module-level
import torch

logits = torch.randn(40, 7)
hard = torch.zeros_like(logits)
for i in range(logits.shape[0]):
    hard[i, logits[i].argmax()] = 1.0
# ---- vectorized ----
import torch
import torch.nn.functional as F

logits = torch.randn(40, 7)
hard = F.one_hot(logits.argmax(1), 7).float()
