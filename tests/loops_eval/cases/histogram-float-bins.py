# kind: vectorizable
# family: histogram
# origin: a hand-written histogram of probabilities (calibration plots)
# results: hist
# tags: module-level multi-statement
import torch

probs = torch.rand(4000)
n_bins = 10

hist = torch.zeros(n_bins, dtype=torch.long)
for p in probs:
    b = int(p * n_bins)
    b = min(b, n_bins - 1)
    hist[b] += 1
# ---- vectorized ----
import torch

probs = torch.rand(4000)
n_bins = 10

hist = torch.bincount((probs * n_bins).long().clamp(max=n_bins - 1), minlength=n_bins)
