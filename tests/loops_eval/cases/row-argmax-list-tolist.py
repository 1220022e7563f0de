# kind: vectorizable
# family: item-accumulation
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: preds
# tags: module-level
import torch

scores = torch.randn(15, 9)
preds = []
for row in scores:
    preds.append(row.argmax().item())
# ---- vectorized ----
import torch

scores = torch.randn(15, 9)
preds = scores.argmax(dim=1).tolist()
