# kind: vectorizable
# family: gather
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: loss
# tags: module-level
import torch

probs = torch.softmax(torch.randn(40, 6), dim=1)
targets = torch.randint(0, 6, (40,))
loss = 0
for i in range(len(targets)):
    loss += -torch.log(probs[i, targets[i]])
loss = loss / len(targets)
# ---- vectorized ----
import torch

probs = torch.softmax(torch.randn(40, 6), dim=1)
targets = torch.randint(0, 6, (40,))
loss = -torch.log(probs[torch.arange(40), targets]).sum()
loss = loss / len(targets)
