# kind: must-stay-loop
# family: io
# origin: debugging output inside an otherwise element-wise loop
# why: the loop prints every element; a vectorized form drops the output
# tags: module-level near-miss
import torch

x = torch.randn(20)
y = torch.empty(20)
for i in range(20):
    y[i] = x[i] * 2
    print(f"{i}: {x[i].item():.3f} -> {y[i].item():.3f}")
