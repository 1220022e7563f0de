# kind: vectorizable
# family: reduction
# origin: written for stop 25 as users write it (probe set): a perceptron's outputs, one sample at a time
# results: outputs
# tags: module-level
import torch

X = torch.randn(50, 3)
w = torch.randn(3)
b = torch.randn(1)
outputs = []
for x in X:
    z = (x * w).sum() + b
    outputs.append(torch.sigmoid(z).item())
# ---- vectorized ----
import torch

X = torch.randn(50, 3)
w = torch.randn(3)
b = torch.randn(1)
outputs = torch.sigmoid((X * w).sum(1) + b).tolist()
