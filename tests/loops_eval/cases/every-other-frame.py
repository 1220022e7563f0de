# kind: vectorizable
# family: per-item-list
# origin: written for stop 26 as users write it (probe set): keep every other frame of a clip (temporal subsampling)
# results: kept
# tags: module-level
import torch

clip = torch.randn(30, 3, 8, 8)
frames = []
for t in range(0, clip.shape[0], 2):
    frames.append(clip[t])
kept = torch.stack(frames)
# ---- vectorized ----
import torch

clip = torch.randn(30, 3, 8, 8)
kept = clip[::2].clone()
