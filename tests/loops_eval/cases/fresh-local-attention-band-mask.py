# kind: vectorizable
# family: diagonal-indexing
# origin: local (sliding-window) attention implementations: positions farther apart than the window are masked out
# results: mask
# tags: function-param nested
import torch


def local_attention_mask(seq_len, window):
    mask = torch.zeros(seq_len, seq_len)
    for i in range(seq_len):
        for j in range(seq_len):
            if abs(i - j) > window:
                mask[i, j] = float("-inf")
    return mask


mask = local_attention_mask(16, 3)
# ---- vectorized ----
import torch


def local_attention_mask(seq_len, window):
    idx = torch.arange(seq_len)
    far = (idx[:, None] - idx[None, :]).abs() > window
    return torch.zeros(seq_len, seq_len).masked_fill(far, float("-inf"))


mask = local_attention_mask(16, 3)
