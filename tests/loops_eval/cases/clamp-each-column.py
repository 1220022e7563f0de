# kind: vectorizable
# family: column-indexing
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: X
# tags: module-level
import torch

X = torch.randn(50, 3) * 5
lo = torch.tensor([-1.0, -2.0, 0.0])
hi = torch.tensor([1.0, 2.0, 3.0])
for j in range(3):
    X[:, j] = X[:, j].clamp(lo[j], hi[j])
# ---- vectorized ----
import torch

X = torch.randn(50, 3) * 5
lo = torch.tensor([-1.0, -2.0, 0.0])
hi = torch.tensor([1.0, 2.0, 3.0])
X = X.clamp(lo, hi)
