# kind: vectorizable
# family: diagonal-indexing
# origin: written for stop 26 as users write it (third probe): a symmetric similarity matrix filled above the diagonal with a chained assignment
# results: sim
# tags: module-level nested
import torch

x = torch.randn(30, 8)
n = x.shape[0]
sim = torch.zeros(n, n)
for i in range(n):
    for j in range(i + 1, n):
        sim[i, j] = sim[j, i] = torch.dot(x[i], x[j])
# ---- vectorized ----
import torch

x = torch.randn(30, 8)
n = x.shape[0]
sim = (x @ x.T).triu(1)
sim = sim + sim.T
