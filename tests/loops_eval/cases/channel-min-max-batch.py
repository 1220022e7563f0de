# kind: vectorizable
# family: column-indexing
# origin: written for stop 26 as users write it (probe set): per-channel min and max over a batch of images (quantization calibration)
# results: lo hi
# tags: module-level multi-statement
import torch

x = torch.randn(8, 4, 16, 16)
C = x.shape[1]
lo = torch.empty(C)
hi = torch.empty(C)
for c in range(C):
    lo[c] = x[:, c].min()
    hi[c] = x[:, c].max()
# ---- vectorized ----
import torch

x = torch.randn(8, 4, 16, 16)
lo = x.amin(dim=(0, 2, 3))
hi = x.amax(dim=(0, 2, 3))
