# kind: vectorizable
# family: histogram
# origin: written for stop 25 as users write it (probe set): node degrees of an undirected edge list
# results: deg
# tags: module-level
import torch

num_nodes = 20
edge_index = torch.randint(0, num_nodes, (2, 60))

deg = torch.zeros(num_nodes, dtype=torch.long)
for e in range(edge_index.shape[1]):
    deg[edge_index[0, e]] += 1
    deg[edge_index[1, e]] += 1
# ---- vectorized ----
import torch

num_nodes = 20
edge_index = torch.randint(0, num_nodes, (2, 60))

deg = torch.bincount(edge_index.flatten(), minlength=num_nodes)
