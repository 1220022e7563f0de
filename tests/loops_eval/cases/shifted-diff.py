# kind: vectorizable
# family: shifted-indexing
# origin: finite differences of a time series
# results: diffs
# tags: module-level
import torch

prices = torch.randn(1000).cumsum(0)

diffs = torch.empty(len(prices) - 1)
for i in range(len(prices) - 1):
    diffs[i] = prices[i + 1] - prices[i]
# ---- vectorized ----
import torch

prices = torch.randn(1000).cumsum(0)

diffs = prices[1:] - prices[:-1]
