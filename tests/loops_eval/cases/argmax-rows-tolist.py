# kind: vectorizable
# family: comprehension
# origin: predictions as a Python list, one row at a time
# results: preds
# tags: module-level
import torch

logits = torch.randn(300, 5)
preds = [row.argmax().item() for row in logits]
# ---- vectorized ----
import torch

logits = torch.randn(300, 5)
preds = logits.argmax(dim=1).tolist()
