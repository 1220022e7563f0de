# kind: vectorizable
# family: column-indexing
# origin: z-scoring each feature column of a design matrix, in place
# results: X
# tags: module-level
import torch

X = torch.randn(3000, 10) * 5 + 2
for j in range(X.shape[1]):
    X[:, j] = (X[:, j] - X[:, j].mean()) / X[:, j].std()
# ---- vectorized ----
import torch

X = torch.randn(3000, 10) * 5 + 2
X = (X - X.mean(dim=0)) / X.std(dim=0)
