# kind: vectorizable
# family: builtin
# origin: counting matches with a generator
# results: n_correct
# tags: module-level
import torch

preds = torch.randint(0, 10, (2000,))
targets = torch.randint(0, 10, (2000,))
n_correct = sum(1 for p, t in zip(preds, targets) if p == t)
# ---- vectorized ----
import torch

preds = torch.randint(0, 10, (2000,))
targets = torch.randint(0, 10, (2000,))
n_correct = int((preds == targets).sum())
