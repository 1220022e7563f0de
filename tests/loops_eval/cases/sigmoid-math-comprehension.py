# kind: vectorizable
# family: comprehension
# origin: a sigmoid with the math module, from a beginner's notebook
# results: out
# tags: module-level
import math

import torch

x = torch.randn(500)
out = torch.tensor([1 / (1 + math.exp(-v)) for v in x])
# ---- vectorized ----
import math

import torch

x = torch.randn(500)
out = torch.sigmoid(x)
