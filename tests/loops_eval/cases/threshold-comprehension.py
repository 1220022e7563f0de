# kind: vectorizable
# family: comprehension
# origin: binarizing probabilities into hard predictions
# results: hard
# tags: module-level
import torch

probs = torch.rand(1000)
hard = torch.tensor([1 if p > 0.5 else 0 for p in probs])
# ---- vectorized ----
import torch

probs = torch.rand(1000)
hard = (probs > 0.5).long()
