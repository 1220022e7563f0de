# kind: vectorizable
# family: column-indexing
# origin: written for stop 26 as users write it (probe set): per-feature variance and standard deviation collected in lists
# results: variances stds
# tags: module-level multi-statement
import torch

X = torch.randn(256, 10)
variances = []
stds = []
for j in range(X.shape[1]):
    col = X[:, j]
    variances.append(col.var())
    stds.append(col.std())
variances = torch.stack(variances)
stds = torch.stack(stds)
# ---- vectorized ----
import torch

X = torch.randn(256, 10)
variances = X.var(dim=0)
stds = X.std(dim=0)
