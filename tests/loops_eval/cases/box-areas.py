# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: areas
# tags: module-level
import torch

boxes = torch.rand(25, 4) * 100
areas = torch.stack([(b[2] - b[0]) * (b[3] - b[1]) for b in boxes])
# ---- vectorized ----
import torch

boxes = torch.rand(25, 4) * 100
areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
