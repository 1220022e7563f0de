# kind: vectorizable
# family: map
# origin: pytorch/examples reinforcement_learning/reinforce.py finish_episode: zip of a list and a tensor
# results: policy_loss
# tags: corpus-style module-level list-of-tensors
from collections import deque

import torch

gamma, eps = 0.99, 1e-8
T = 200
saved_log_probs = [torch.log(torch.rand(1)) for _ in range(T)]  # Categorical(probs).log_prob(action), shape (1,)
rewards = [1.0] * T

R = 0
returns = deque()
for r in rewards[::-1]:
    R = r + gamma * R
    returns.appendleft(R)
returns = torch.tensor(returns)
returns = (returns - returns.mean()) / (returns.std() + eps)

policy_loss = []
for log_prob, R in zip(saved_log_probs, returns):
    policy_loss.append(-log_prob * R)
policy_loss = torch.cat(policy_loss).sum()
# ---- vectorized ----
from collections import deque

import torch

gamma, eps = 0.99, 1e-8
T = 200
saved_log_probs = [torch.log(torch.rand(1)) for _ in range(T)]
rewards = [1.0] * T

R = 0
returns = deque()
for r in rewards[::-1]:
    R = r + gamma * R
    returns.appendleft(R)
returns = torch.tensor(returns)
returns = (returns - returns.mean()) / (returns.std() + eps)

policy_loss = (-torch.cat(saved_log_probs) * returns).sum()
