# kind: vectorizable
# family: column-indexing
# origin: max-scaling each feature column, in a preprocessing function
# results: X_scaled
# tags: function-param
import torch


def max_scale(X):
    X_scaled = torch.empty_like(X)
    for j in range(X.shape[1]):
        X_scaled[:, j] = X[:, j] / X[:, j].abs().max()
    return X_scaled


X_scaled = max_scale(torch.randn(2000, 16))
# ---- vectorized ----
import torch


def max_scale(X):
    return X / X.abs().max(dim=0).values


X_scaled = max_scale(torch.randn(2000, 16))
