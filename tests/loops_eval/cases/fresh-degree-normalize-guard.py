# kind: vectorizable
# family: per-row-normalize
# origin: GNN tutorials: row-normalising an adjacency matrix by node degree, skipping isolated nodes
# results: norm_adj
# tags: module-level multi-statement
import torch

n = 30
adj = (torch.rand(n, n) < 0.08).float()
adj[3] = 0.0
adj[17] = 0.0
norm_adj = torch.zeros(n, n)
for i in range(n):
    deg = adj[i].sum()
    if deg > 0:
        norm_adj[i] = adj[i] / deg
# ---- vectorized ----
import torch

n = 30
adj = (torch.rand(n, n) < 0.08).float()
adj[3] = 0.0
adj[17] = 0.0
deg = adj.sum(dim=1, keepdim=True)
norm_adj = torch.where(deg > 0, adj / deg, torch.zeros(()))
