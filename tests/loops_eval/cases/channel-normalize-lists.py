# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: img
# tags: module-level
import torch

img = torch.rand(3, 32, 32)
mean = [0.485, 0.456, 0.406]
std = [0.229, 0.224, 0.225]
for c in range(3):
    img[c] = (img[c] - mean[c]) / std[c]
# ---- vectorized ----
import torch

img = torch.rand(3, 32, 32)
mean = [0.485, 0.456, 0.406]
std = [0.229, 0.224, 0.225]
img = (img - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None]
