# kind: must-stay-loop
# family: recurrence
# origin: written for stop 24 as users write it (probe set, outside the test families)
# tags: module-level near-miss
# why: `xt` is a view of `x`: row i reads column i, which earlier iterations already changed (a recurrence through memory)
import torch

x = torch.randn(6, 6)
xt = x.T
for i in range(6):
    x[i] = xt[i] * 2 + 1
