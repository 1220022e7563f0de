# kind: must-stay-loop
# family: early-exit
# origin: written for stop 24 as users write it (probe set, outside the test families)
# tags: module-level
# why: the loop stops at the first residual under the tolerance; the rows after it are never updated
import torch

residuals = torch.rand(100)
weights = torch.ones(100)
tol = 0.05
for i in range(len(residuals)):
    if residuals[i] < tol:
        break
    weights[i] = 1.0 / (residuals[i] + 1e-3)
