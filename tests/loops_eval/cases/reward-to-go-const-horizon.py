# kind: vectorizable
# family: scan
# origin: written for stop 25 as users write it (probe set): undiscounted reward-to-go (a reversed cumulative sum)
# results: rtg
# tags: module-level
import torch

rewards = torch.randn(100)
rtg = torch.zeros(100)
for t in range(100):
    rtg[t] = rewards[t:].sum()
# ---- vectorized ----
import torch

rewards = torch.randn(100)
rtg = rewards.flip(0).cumsum(0).flip(0)
