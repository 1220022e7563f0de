# kind: must-stay-loop
# family: recurrence
# origin: exponential moving average of a signal (TensorBoard-style smoothing)
# why: each output reads the previous output (a linear recurrence); torch has no scan for it, and the closed form via powers of alpha is not the same floating-point result
# tags: module-level near-miss
import torch

x = torch.randn(1000)
alpha = 0.9

out = torch.empty_like(x)
out[0] = x[0]
for i in range(1, len(x)):
    out[i] = out[i - 1] * alpha + x[i] * (1 - alpha)
