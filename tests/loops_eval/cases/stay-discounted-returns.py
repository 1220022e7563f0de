# kind: must-stay-loop
# family: recurrence
# origin: REINFORCE discounted returns over a tensor of rewards
# why: R_t = r_t + gamma * R_{t+1}, a reverse linear recurrence; the matrix-of-powers form is not the same floating-point result
# tags: function-param
import torch


def discounted_returns(rewards, gamma=0.99):
    returns = torch.empty_like(rewards)
    R = 0.0
    for t in reversed(range(len(rewards))):
        R = rewards[t] + gamma * R
        returns[t] = R
    return returns


returns = discounted_returns(torch.rand(300))
