# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 26 as users write it (probe set): rescale each image of a batch to [0, 1] by its own min and max
# results: imgs
# tags: module-level multi-statement
import torch

imgs = torch.randn(8, 3, 20, 20)
for i in range(imgs.shape[0]):
    lo = imgs[i].min()
    hi = imgs[i].max()
    imgs[i] = (imgs[i] - lo) / (hi - lo)
# ---- vectorized ----
import torch

imgs = torch.randn(8, 3, 20, 20)
lo = imgs.amin(dim=(1, 2, 3), keepdim=True)
hi = imgs.amax(dim=(1, 2, 3), keepdim=True)
imgs = (imgs - lo) / (hi - lo)
