# kind: must-stay-loop
# family: recurrence
# origin: written for stop 25 as users write it (probe set): generalized advantage estimation (PPO)
# why: the advantage at t is the next advantage times gamma*lam, cut by done: a reversed linear recurrence
# tags: function-param
import torch


def gae(rewards, values, dones, gamma=0.99, lam=0.95):
    T = len(rewards)
    adv = torch.zeros(T)
    last = 0.0
    for t in reversed(range(T)):
        delta = rewards[t] + gamma * values[t + 1] * (1 - dones[t]) - values[t]
        last = delta + gamma * lam * (1 - dones[t]) * last
        adv[t] = last
    return adv


adv = gae(torch.randn(64), torch.randn(65), (torch.rand(64) < 0.1).float())
