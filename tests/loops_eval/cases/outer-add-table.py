# kind: vectorizable
# family: map
# origin: a cost table from row and column costs
# results: table
# tags: module-level nested
import torch

row_cost = torch.rand(40)
col_cost = torch.rand(30)

table = torch.empty(40, 30)
for i in range(40):
    for j in range(30):
        table[i, j] = row_cost[i] + col_cost[j]
# ---- vectorized ----
import torch

row_cost = torch.rand(40)
col_cost = torch.rand(30)

table = row_cost[:, None] + col_cost
