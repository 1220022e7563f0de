# kind: vectorizable
# family: contraction
# origin: the article's first loop, verbatim
# results: results_loop
# tags: article module-level
import torch

batch_size = 1000
feature_dim = 256

data = torch.randn(batch_size, feature_dim)
weight = torch.randn(feature_dim)
bias = torch.randn(1)

results_loop = torch.empty(batch_size)
for i in range(batch_size):
    results_loop[i] = torch.dot(data[i], weight) + bias
# ---- vectorized ----
import torch

batch_size = 1000
feature_dim = 256

data = torch.randn(batch_size, feature_dim)
weight = torch.randn(feature_dim)
bias = torch.randn(1)

results_loop = data @ weight + bias
