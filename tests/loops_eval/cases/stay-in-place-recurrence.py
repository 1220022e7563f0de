# kind: must-stay-loop
# family: recurrence
# origin: a first-order IIR filter written over its own input, in place
# why: x[i] reads x[i - 1] after the previous iteration changed it (x[1:] - 0.5 * x[:-1] would read the old values)
# tags: module-level near-miss
import torch

x = torch.randn(500)
for i in range(1, len(x)):
    x[i] = x[i] - 0.5 * x[i - 1]
