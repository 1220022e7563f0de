# kind: vectorizable
# family: scan
# origin: written for stop 26 as users write it (probe set): running peak of an equity curve (drawdown)
# results: peak drawdown
# tags: module-level
import torch

equity = torch.randn(500).cumsum(0) + 100.0
peak = torch.empty_like(equity)
peak[0] = equity[0]
for t in range(1, len(equity)):
    peak[t] = torch.maximum(peak[t - 1], equity[t])
drawdown = (peak - equity) / peak
# ---- vectorized ----
import torch

equity = torch.randn(500).cumsum(0) + 100.0
peak = torch.cummax(equity, dim=0).values
drawdown = (peak - equity) / peak
