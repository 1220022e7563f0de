# kind: must-stay-loop
# family: recurrence
# origin: written for stop 24 as users write it (probe set, outside the test families)
# tags: module-level near-miss
# why: each row is centred by a running mean that the earlier rows updated (an EMA carried from one row to the next)
import torch

x = torch.randn(50, 8)
running_mean = torch.zeros(8)
for i in range(x.shape[0]):
    running_mean = 0.9 * running_mean + 0.1 * x[i]
    x[i] = x[i] - running_mean
