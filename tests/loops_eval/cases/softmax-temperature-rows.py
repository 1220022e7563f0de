# kind: vectorizable
# family: per-row-softmax
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: probs
# tags: module-level
import torch

logits = torch.randn(8, 50)
T = 0.7
probs = torch.zeros_like(logits)
for b in range(logits.shape[0]):
    probs[b] = torch.softmax(logits[b] / T, dim=-1)
# ---- vectorized ----
import torch

logits = torch.randn(8, 50)
T = 0.7
probs = torch.softmax(logits / T, dim=-1)
