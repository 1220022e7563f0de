# kind: vectorizable
# family: map
# origin: written for stop 26 as users write it (probe set): robust per-sensor baseline: the median of each row
# results: baseline
# tags: module-level
import torch

readings = torch.randn(12, 101)
baseline = torch.zeros(12)
for s in range(12):
    baseline[s] = readings[s].median()
# ---- vectorized ----
import torch

readings = torch.randn(12, 101)
baseline = readings.median(dim=1).values
