# kind: vectorizable
# family: gather
# origin: an embedding lookup done token by token
# results: embedded
# tags: module-level
import torch

vocab_size, dim = 1000, 32
table = torch.randn(vocab_size, dim)
token_ids = torch.randint(0, vocab_size, (128,))

embedded = torch.stack([table[t] for t in token_ids])
# ---- vectorized ----
import torch

vocab_size, dim = 1000, 32
table = torch.randn(vocab_size, dim)
token_ids = torch.randint(0, vocab_size, (128,))

embedded = table[token_ids]
