# kind: vectorizable
# family: scatter
# origin: written for stop 25 as users write it (probe set): dense symmetric adjacency from an edge list
# results: A
# tags: module-level
import torch

n = 15
edges = torch.randint(0, n, (40, 2))
A = torch.zeros(n, n)
for u, v in edges:
    A[u, v] = 1
    A[v, u] = 1
# ---- vectorized ----
import torch

n = 15
edges = torch.randint(0, n, (40, 2))
A = torch.zeros(n, n)
A[edges[:, 0], edges[:, 1]] = 1
A[edges[:, 1], edges[:, 0]] = 1
