# kind: vectorizable
# family: per-row-softmax
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: logp
# tags: module-level list-of-tensors
import torch

logits = torch.randn(6, 11)
logp = torch.stack([torch.log_softmax(row, dim=0) for row in logits])
# ---- vectorized ----
import torch

logits = torch.randn(6, 11)
logp = torch.log_softmax(logits, dim=1)
