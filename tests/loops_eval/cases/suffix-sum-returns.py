# kind: vectorizable
# family: scan
# origin: written for stop 26 as users write it (probe set): undiscounted reward-to-go as a suffix sum, walked backwards
# results: togo
# tags: function-param
import torch


def reward_to_go(rewards):
    n = rewards.shape[0]
    togo = torch.zeros_like(rewards)
    togo[n - 1] = rewards[n - 1]
    for t in range(n - 2, -1, -1):
        togo[t] = togo[t + 1] + rewards[t]
    return togo


togo = reward_to_go(torch.rand(200))
# ---- vectorized ----
import torch


def reward_to_go(rewards):
    return rewards.flip(0).cumsum(0).flip(0)


togo = reward_to_go(torch.rand(200))
