# kind: vectorizable
# family: scatter
# origin: written for stop 25 as users write it (probe set): weighted sum of neighbour features (GCN-style)
# results: out
# tags: function-param multi-statement
import torch


def propagate(x, edge_index, edge_weight):
    out = torch.zeros_like(x)
    for e in range(edge_index.shape[1]):
        src, dst = edge_index[0, e], edge_index[1, e]
        out[dst] += edge_weight[e] * x[src]
    return out


x = torch.randn(12, 8)
edge_index = torch.randint(0, 12, (2, 40))
edge_weight = torch.rand(40)
out = propagate(x, edge_index, edge_weight)
# ---- vectorized ----
import torch

x = torch.randn(12, 8)
edge_index = torch.randint(0, 12, (2, 40))
edge_weight = torch.rand(40)
out = torch.zeros_like(x).index_add_(0, edge_index[1], edge_weight[:, None] * x[edge_index[0]])
