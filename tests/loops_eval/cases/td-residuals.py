# kind: vectorizable
# family: shifted-indexing
# origin: written for stop 25 as users write it (probe set): one-step TD errors for a rollout
# results: deltas
# tags: module-level
import torch

T = 128
gamma = 0.99
rewards = torch.randn(T)
values = torch.randn(T + 1)
dones = (torch.rand(T) < 0.05).float()

deltas = torch.zeros(T)
for t in range(T):
    deltas[t] = rewards[t] + gamma * values[t + 1] * (1 - dones[t]) - values[t]
# ---- vectorized ----
import torch

T = 128
gamma = 0.99
rewards = torch.randn(T)
values = torch.randn(T + 1)
dones = (torch.rand(T) < 0.05).float()

deltas = rewards + gamma * values[1:] * (1 - dones) - values[:-1]
