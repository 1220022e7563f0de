# kind: vectorizable
# family: comprehension
# origin: a 2-d table from nested list comprehensions
# results: M
# tags: module-level nested
import torch

a = torch.randn(20)
b = torch.randn(15)
M = torch.tensor([[a[i] * b[j] for j in range(len(b))] for i in range(len(a))])
# ---- vectorized ----
import torch

a = torch.randn(20)
b = torch.randn(15)
M = torch.outer(a, b)
