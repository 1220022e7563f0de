# kind: vectorizable
# family: reduction
# origin: forum answer "how to compute the mean and std of my dataset": per-image channel sums accumulated over a batch
# results: mean std
# tags: module-level multi-statement
import torch

images = torch.rand(16, 3, 24, 24)
psum = torch.zeros(3)
psum_sq = torch.zeros(3)
count = 0
for img in images:
    psum += img.sum(dim=[1, 2])
    psum_sq += (img ** 2).sum(dim=[1, 2])
    count += img.shape[1] * img.shape[2]
mean = psum / count
std = torch.sqrt(psum_sq / count - mean ** 2)
# ---- vectorized ----
import torch

images = torch.rand(16, 3, 24, 24)
count = images.shape[0] * images.shape[2] * images.shape[3]
mean = images.sum(dim=[0, 2, 3]) / count
std = torch.sqrt((images ** 2).sum(dim=[0, 2, 3]) / count - mean ** 2)
