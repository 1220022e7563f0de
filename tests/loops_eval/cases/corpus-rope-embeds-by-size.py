# kind: vectorizable
# family: scatter
# origin: timm models/naflexvit.py:1536: each unique grid's rotary embedding written to the samples of that size
# results: rope_embeds
# tags: corpus-style module-level nested
import torch

B, seq_len, dim = 8, 64, 32
unique_sizes = [(8, 8), (6, 6), (4, 8)]
unique_embeds = [torch.randn(h * w, dim * 2) for h, w in unique_sizes]
size_to_indices = {(8, 8): [0, 3, 5], (6, 6): [1, 2, 7], (4, 8): [4, 6]}

# Axial mode: [batch_size, seq_len, dim*2]
rope_embeds = torch.zeros(B, seq_len, dim * 2)
for grid_size, embed, batch_indices in zip(unique_sizes, unique_embeds, size_to_indices.values()):
    h, w = grid_size
    actual_len = h * w
    for bi in batch_indices:
        rope_embeds[bi, :actual_len] = embed[:actual_len]
# ---- vectorized ----
import torch

B, seq_len, dim = 8, 64, 32
unique_sizes = [(8, 8), (6, 6), (4, 8)]
unique_embeds = [torch.randn(h * w, dim * 2) for h, w in unique_sizes]
size_to_indices = {(8, 8): [0, 3, 5], (6, 6): [1, 2, 7], (4, 8): [4, 6]}

rope_embeds = torch.zeros(B, seq_len, dim * 2)
for grid_size, embed, batch_indices in zip(unique_sizes, unique_embeds, size_to_indices.values()):
    h, w = grid_size
    actual_len = h * w
    rope_embeds[batch_indices, :actual_len] = embed[:actual_len]
