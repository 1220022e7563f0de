# kind: vectorizable
# family: contraction
# origin: written for stop 25 as users write it (probe set): luminance from RGB with a list of weights
# results: gray
# tags: module-level
import torch

img = torch.rand(3, 48, 48)
gray = torch.zeros(48, 48)
for c, w in enumerate([0.299, 0.587, 0.114]):
    gray += w * img[c]
# ---- vectorized ----
import torch

img = torch.rand(3, 48, 48)
gray = (torch.tensor([0.299, 0.587, 0.114])[:, None, None] * img).sum(0)
