# kind: vectorizable
# family: map
# origin: active-learning / uncertainty sampling: the entropy of each prediction
# results: entropy
# tags: module-level multi-statement
import torch

probs = torch.softmax(torch.randn(1000, 10), dim=1)
entropy = torch.zeros(1000)
for i in range(len(probs)):
    p = probs[i]
    entropy[i] = -(p * torch.log(p + 1e-12)).sum()
# ---- vectorized ----
import torch

probs = torch.softmax(torch.randn(1000, 10), dim=1)
entropy = -(probs * torch.log(probs + 1e-12)).sum(dim=1)
