# kind: vectorizable
# family: reduction
# origin: nearest database entry to a query, distances in a Python list
# results: nearest
# tags: module-level
import torch

db = torch.randn(2000, 16)
query = torch.randn(16)

dists = [torch.norm(db[i] - query) for i in range(len(db))]
nearest = torch.argmin(torch.stack(dists))
# ---- vectorized ----
import torch

db = torch.randn(2000, 16)
query = torch.randn(16)

nearest = torch.argmin(torch.norm(db - query, dim=1))
