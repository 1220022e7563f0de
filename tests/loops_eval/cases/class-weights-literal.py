# kind: vectorizable
# family: map
# origin: written for stop 26 as users write it (probe set): per-class weights written as a literal list, applied to a float64 loss per sample
# results: weighted
# tags: module-level
import torch

losses = torch.rand(50, dtype=torch.float64)
weights = [0.1, 0.7, 0.2]
labels = torch.randint(0, 3, (50,))
weighted = torch.zeros(50, dtype=torch.float64)
for i in range(50):
    weighted[i] = losses[i] * torch.tensor(weights)[labels[i]]
# ---- vectorized ----
import torch

losses = torch.rand(50, dtype=torch.float64)
weights = [0.1, 0.7, 0.2]
labels = torch.randint(0, 3, (50,))
weighted = losses * torch.tensor(weights)[labels]
