# kind: vectorizable
# family: scatter
# origin: timm naflexvit.py: the same embedding written to every sample of one grid size
# results: batch_embed
# tags: corpus-style module-level
import torch

batch_size, num_heads, max_len, dim = 12, 4, 64, 16
embed = torch.randn(num_heads, 49, dim)  # embeddings for a 7x7 grid
batch_indices = [0, 3, 4, 9, 11]  # the samples that have that grid size
actual_len = 49

batch_embed = torch.zeros(batch_size, num_heads, max_len, dim)
# Assign to batch indices
for bi in batch_indices:
    batch_embed[bi, :, :actual_len, :] = embed[:, :actual_len, :]
# ---- vectorized ----
import torch

batch_size, num_heads, max_len, dim = 12, 4, 64, 16
embed = torch.randn(num_heads, 49, dim)
batch_indices = [0, 3, 4, 9, 11]
actual_len = 49

batch_embed = torch.zeros(batch_size, num_heads, max_len, dim)
batch_embed[batch_indices, :, :actual_len, :] = embed[:, :actual_len, :]
