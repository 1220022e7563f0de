# kind: vectorizable
# family: multi-statement-map
# origin: pytorch/examples reinforcement_learning/actor_critic.py:114 finish_episode: actor and critic losses per step
# results: loss
# tags: corpus-style module-level list-of-tensors multi-statement
import torch
import torch.nn.functional as F

gamma, eps = 0.99, 1e-8
T = 120
# (Categorical(probs).log_prob(action), the critic's state value): shapes () and (1,)
saved_actions = [(torch.log(torch.rand(())), torch.randn(1)) for _ in range(T)]
rewards = [1.0] * T

R = 0
policy_losses = []  # list to save actor (policy) loss
value_losses = []  # list to save critic (value) loss
returns = []  # list to save the true values
for r in rewards[::-1]:
    R = r + gamma * R
    returns.insert(0, R)
returns = torch.tensor(returns)
returns = (returns - returns.mean()) / (returns.std() + eps)

for (log_prob, value), R in zip(saved_actions, returns):
    advantage = R - value.item()

    # calculate actor (policy) loss
    policy_losses.append(-log_prob * advantage)

    # calculate critic (value) loss using L1 smooth loss
    value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))

loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
# ---- vectorized ----
import torch
import torch.nn.functional as F

gamma, eps = 0.99, 1e-8
T = 120
saved_actions = [(torch.log(torch.rand(())), torch.randn(1)) for _ in range(T)]
rewards = [1.0] * T

R = 0
returns = []
for r in rewards[::-1]:
    R = r + gamma * R
    returns.insert(0, R)
returns = torch.tensor(returns)
returns = (returns - returns.mean()) / (returns.std() + eps)

log_probs = torch.stack([lp for lp, _ in saved_actions])
values = torch.cat([v for _, v in saved_actions])
advantage = returns - values.detach()
loss = (-log_probs * advantage).sum() + F.smooth_l1_loss(values, returns, reduction="none").sum()
