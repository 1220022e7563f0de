# kind: vectorizable
# family: column-indexing
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: X
# tags: module-level
import torch

X = torch.randn(10, 4)
weights = torch.tensor([0.5, 1.0, 2.0, 4.0])
for j in range(X.shape[1]):
    X[:, j] *= weights[j]
# ---- vectorized ----
import torch

X = torch.randn(10, 4)
weights = torch.tensor([0.5, 1.0, 2.0, 4.0])
X *= weights
