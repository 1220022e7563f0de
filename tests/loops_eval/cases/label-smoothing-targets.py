# kind: vectorizable
# family: one-hot
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: targets
# tags: module-level
import torch

labels = torch.randint(0, 10, (32,))
num_classes = 10
eps = 0.1
targets = torch.full((32, num_classes), eps / (num_classes - 1))
for i in range(32):
    targets[i, labels[i]] = 1.0 - eps
# ---- vectorized ----
import torch

labels = torch.randint(0, 10, (32,))
num_classes = 10
eps = 0.1
targets = torch.full((32, num_classes), eps / (num_classes - 1))
targets[torch.arange(32), labels] = 1.0 - eps
