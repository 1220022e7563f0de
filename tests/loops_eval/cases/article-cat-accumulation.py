# kind: vectorizable
# family: cat-accumulation
# origin: the article's torch.cat accumulation
# results: result
# tags: article module-level list-of-tensors
import torch

chunks = [torch.randn(256) for _ in range(100)]

result = torch.tensor([])
for x in chunks:
    result = torch.cat([result, x])
# ---- vectorized ----
import torch

chunks = [torch.randn(256) for _ in range(100)]

result = torch.cat(chunks)
