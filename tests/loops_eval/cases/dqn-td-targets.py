# kind: vectorizable
# family: reduction
# origin: written for stop 25 as users write it (probe set): DQN targets from the target network's q-values
# results: targets
# tags: function-param
import torch


def td_targets(rewards, next_q, dones, gamma=0.99):
    targets = torch.empty_like(rewards)
    for i in range(len(rewards)):
        best_next = next_q[i].max()
        targets[i] = rewards[i] + gamma * best_next * (1 - dones[i])
    return targets


rewards = torch.randn(64)
next_q = torch.randn(64, 6)
dones = torch.randint(0, 2, (64,)).float()
targets = td_targets(rewards, next_q, dones)
# ---- vectorized ----
import torch

rewards = torch.randn(64)
next_q = torch.randn(64, 6)
dones = torch.randint(0, 2, (64,)).float()
targets = rewards + 0.99 * next_q.max(dim=1).values * (1 - dones)
