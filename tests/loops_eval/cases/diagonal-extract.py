# kind: vectorizable
# family: diagonal-indexing
# origin: reading the per-class accuracies off a confusion matrix's diagonal
# results: hits
# tags: module-level
import torch

confusion = torch.randint(0, 50, (10, 10))

hits = torch.zeros(10, dtype=torch.long)
for c in range(10):
    hits[c] = confusion[c, c]
# ---- vectorized ----
import torch

confusion = torch.randint(0, 50, (10, 10))

hits = torch.diagonal(confusion).clone()
