# kind: vectorizable
# family: map
# origin: written for stop 25 as users write it (probe set): interpolate between two latents for a video
# results: frames
# tags: module-level
import torch

z0, z1 = torch.randn(64), torch.randn(64)
alphas = torch.linspace(0, 1, 24)
frames = torch.empty(24, 64)
for t in range(len(alphas)):
    frames[t] = (1 - alphas[t]) * z0 + alphas[t] * z1
# ---- vectorized ----
import torch

z0, z1 = torch.randn(64), torch.randn(64)
alphas = torch.linspace(0, 1, 24)
frames = (1 - alphas[:, None]) * z0 + alphas[:, None] * z1
