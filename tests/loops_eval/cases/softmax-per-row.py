# kind: vectorizable
# family: per-row-softmax
# origin: classification post-processing, one row at a time
# results: probs
# tags: module-level
import torch

logits = torch.randn(512, 10)

probs = torch.zeros_like(logits)
for i in range(logits.size(0)):
    probs[i] = torch.softmax(logits[i], dim=0)
# ---- vectorized ----
import torch

logits = torch.randn(512, 10)

probs = torch.softmax(logits, dim=1)
