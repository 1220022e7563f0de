# kind: vectorizable
# family: comprehension
# origin: vit-pytorch cct.py sinusoidal_embedding: a nested comprehension over positions and channels
# results: pos
# tags: corpus-style function-param nested
import torch
from einops import rearrange


def sinusoidal_embedding(n_channels, dim):
    pe = torch.FloatTensor([[p / (10000 ** (2 * (i // 2) / dim)) for i in range(dim)]
                            for p in range(n_channels)])
    pe[:, 0::2] = torch.sin(pe[:, 0::2])
    pe[:, 1::2] = torch.cos(pe[:, 1::2])
    return rearrange(pe, '... -> 1 ...')


pos = sinusoidal_embedding(64, 128)
# ---- vectorized ----
import torch
from einops import rearrange


def sinusoidal_embedding(n_channels, dim):
    p = torch.arange(n_channels, dtype=torch.float64)[:, None]
    i = torch.arange(dim, dtype=torch.float64)
    pe = (p / 10000 ** (2 * (i // 2) / dim)).float()
    pe[:, 0::2] = torch.sin(pe[:, 0::2])
    pe[:, 1::2] = torch.cos(pe[:, 1::2])
    return rearrange(pe, '... -> 1 ...')


pos = sinusoidal_embedding(64, 128)
