# kind: vectorizable
# family: gather
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: vecs
# tags: module-level
import torch

emb_table = torch.randn(100, 16)
token_ids = torch.tensor([5, 17, 3, 99, 0, 42])
vecs = torch.stack([emb_table[idx] for idx in token_ids])
# ---- vectorized ----
import torch

emb_table = torch.randn(100, 16)
token_ids = torch.tensor([5, 17, 3, 99, 0, 42])
vecs = emb_table[token_ids]
