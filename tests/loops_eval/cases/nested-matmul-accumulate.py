# kind: vectorizable
# family: contraction
# origin: a textbook triple loop matrix product
# results: C
# tags: module-level nested
import torch

n, k, m = 24, 16, 20
A = torch.randn(n, k)
B = torch.randn(k, m)

C = torch.zeros(n, m)
for i in range(n):
    for j in range(m):
        for p in range(k):
            C[i, j] += A[i, p] * B[p, j]
# ---- vectorized ----
import torch

n, k, m = 24, 16, 20
A = torch.randn(n, k)
B = torch.randn(k, m)

C = A @ B
