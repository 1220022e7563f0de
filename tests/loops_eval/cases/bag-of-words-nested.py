# kind: vectorizable
# family: histogram
# origin: written for stop 25 as users write it (probe set): bag-of-words counts per document
# results: counts
# tags: module-level nested
import torch

vocab_size = 30
docs = torch.randint(0, vocab_size, (6, 25))
counts = torch.zeros(6, vocab_size)
for i in range(docs.shape[0]):
    for tok in docs[i]:
        counts[i, tok] += 1
# ---- vectorized ----
import torch

vocab_size = 30
docs = torch.randint(0, vocab_size, (6, 25))
counts = torch.zeros(6, vocab_size).scatter_add_(1, docs, torch.ones(6, 25))
