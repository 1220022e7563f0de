# kind: vectorizable
# family: scan
# origin: prefix sums computed in place over the input (a near-miss of a recurrence: it is a scan)
# results: counts
# tags: module-level near-miss
import torch

counts = torch.randint(0, 10, (500,))
for i in range(1, len(counts)):
    counts[i] += counts[i - 1]
# ---- vectorized ----
import torch

counts = torch.randint(0, 10, (500,))
counts = counts.cumsum(0)
