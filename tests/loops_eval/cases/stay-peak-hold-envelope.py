# kind: must-stay-loop
# family: recurrence
# origin: an audio envelope follower with decay
# why: a running maximum with decay (max(x[i], 0.9 * env[i - 1])) is a non-linear recurrence with no torch scan
# tags: module-level
import torch

signal = torch.randn(2000).abs()
env = signal.clone()
for i in range(1, len(env)):
    env[i] = torch.maximum(env[i], env[i - 1] * 0.9)
