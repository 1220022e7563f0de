# kind: vectorizable
# family: reduction
# origin: counting positive labels for class balancing
# results: n_pos
# tags: module-level
import torch

y = torch.randint(0, 2, (5000,))

n_pos = 0
for v in y:
    if v == 1:
        n_pos += 1
# ---- vectorized ----
import torch

y = torch.randint(0, 2, (5000,))

n_pos = int((y == 1).sum())
