# kind: vectorizable
# family: map
# origin: pytorch/examples distributed/rpc/rl/main.py:201 Agent.finish_episode: the policy loss of one episode
# results: loss
# tags: corpus-style function-param list-of-tensors
import torch


class Agent:
    def __init__(self, gamma=0.99):
        self.gamma = gamma
        self.eps = 1e-8

    def finish_episode(self, probs, rewards):
        R, policy_loss, returns = 0, [], []
        for r in rewards[::-1]:
            R = r + self.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + self.eps)
        for log_prob, R in zip(probs, returns):
            policy_loss.append(-log_prob * R)
        policy_loss = torch.cat(policy_loss).sum()
        return policy_loss


probs = [torch.log(torch.rand(1)) for _ in range(50)]
loss = Agent().finish_episode(probs, [float(i % 3) for i in range(50)])
# ---- vectorized ----
import torch


class Agent:
    def __init__(self, gamma=0.99):
        self.gamma = gamma
        self.eps = 1e-8

    def finish_episode(self, probs, rewards):
        R, returns = 0, []
        for r in rewards[::-1]:
            R = r + self.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + self.eps)
        return (-torch.cat(probs) * returns).sum()


probs = [torch.log(torch.rand(1)) for _ in range(50)]
loss = Agent().finish_episode(probs, [float(i % 3) for i in range(50)])
