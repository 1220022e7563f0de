# kind: must-stay-loop
# family: recurrence
# origin: written for stop 26 as users write it (probe set): all-pairs shortest paths, relaxing through one node at a time
# why: the update through node k reads the distances updated through nodes before k
# tags: module-level near-miss
import torch

n = 12
D = torch.rand(n, n) * 10
D.fill_diagonal_(0)
for k in range(n):
    D = torch.minimum(D, D[:, k : k + 1] + D[k : k + 1, :])
