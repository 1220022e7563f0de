# kind: vectorizable
# family: column-indexing
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: channel_means
# tags: module-level
import torch

images = torch.rand(16, 3, 24, 24)
channel_means = []
for c in range(images.shape[1]):
    channel_means.append(images[:, c].mean())
channel_means = torch.stack(channel_means)
# ---- vectorized ----
import torch

images = torch.rand(16, 3, 24, 24)
channel_means = images.mean(dim=(0, 2, 3))
