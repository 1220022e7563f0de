# kind: vectorizable
# family: diagonal-indexing
# origin: an identity matrix filled by hand
# results: eye
# tags: module-level
import torch

n = 128
eye = torch.zeros(n, n)
for i in range(n):
    eye[i, i] = 1.0
# ---- vectorized ----
import torch

n = 128
eye = torch.eye(n)
