# kind: vectorizable
# family: one-hot
# origin: timm pos_embed_rel.py generate_lookup_tensor: one-hot relative positions within a band
# results: lookup
# tags: corpus-style function-param nested
import torch


def generate_lookup_tensor(length, max_relative_position=None):
    if max_relative_position is None:
        max_relative_position = length - 1
    # Return the cached lookup tensor, otherwise compute it and cache it.
    vocab_size = 2 * max_relative_position + 1
    ret = torch.zeros(length, length, vocab_size)
    for i in range(length):
        for x in range(length):
            v = x - i + max_relative_position
            if abs(x - i) > max_relative_position:
                continue
            ret[i, x, v] = 1
    return ret


lookup = generate_lookup_tensor(24, max_relative_position=7)
# ---- vectorized ----
import torch
import torch.nn.functional as F


def generate_lookup_tensor(length, max_relative_position=None):
    if max_relative_position is None:
        max_relative_position = length - 1
    vocab_size = 2 * max_relative_position + 1
    rel = torch.arange(length)[None, :] - torch.arange(length)[:, None]  # x - i
    inside = rel.abs() <= max_relative_position
    ret = F.one_hot((rel + max_relative_position).clamp(0, vocab_size - 1), vocab_size).float()
    return ret * inside[..., None]


lookup = generate_lookup_tensor(24, max_relative_position=7)
