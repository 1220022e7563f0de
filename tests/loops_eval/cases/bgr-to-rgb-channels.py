# kind: vectorizable
# family: shifted-indexing
# origin: written for stop 25 as users write it (probe set): OpenCV images are BGR
# results: rgb
# tags: module-level
import torch

img = torch.rand(3, 64, 64)
rgb = torch.empty_like(img)
for c in range(3):
    rgb[c] = img[2 - c]
# ---- vectorized ----
import torch

img = torch.rand(3, 64, 64)
rgb = img.flip(0)
