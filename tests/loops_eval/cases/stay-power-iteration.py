# kind: must-stay-loop
# family: recurrence
# origin: written for stop 26 as users write it (probe set): the top eigenvector by power iteration
# why: each iterate is computed from the previous one
# tags: module-level
import torch

A = torch.randn(30, 30)
A = A @ A.T
v = torch.ones(30)
for _ in range(100):
    v = A @ v
    v = v / v.norm()
