# kind: must-stay-loop
# family: recurrence
# origin: augmentation / simulation code: a brightness (or gain) level that drifts by random steps but stays within [0, 1]
# why: the level is clamped to [0, 1] after every step; once the walk touches a bound, (0.5 + steps.cumsum(0)).clamp(0, 1) differs from it, and torch has no cumulative op for a sum clamped at both ends
# tags: module-level near-miss
import torch

steps = 0.1 * torch.randn(300)
level = torch.empty(300)
level[0] = 0.5
for t in range(1, 300):
    level[t] = (level[t - 1] + steps[t]).clamp(0.0, 1.0)
