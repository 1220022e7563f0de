# kind: vectorizable
# family: ragged-mask
# origin: mean-pooling token states over each sequence's real tokens
# results: pooled
# tags: function-param rank-only
import torch


def mean_pool(hidden, lengths):
    B, T, H = hidden.shape
    pooled = torch.zeros(B, H)
    for b in range(B):
        pooled[b] = hidden[b, :lengths[b]].mean(dim=0)
    return pooled


hidden = torch.randn(16, 40, 32)
lengths = torch.randint(1, 41, (16,))
pooled = mean_pool(hidden, lengths)
# ---- vectorized ----
import torch


def mean_pool(hidden, lengths):
    mask = (torch.arange(hidden.shape[1])[None, :] < lengths[:, None]).to(hidden.dtype)
    return (hidden * mask[:, :, None]).sum(dim=1) / lengths[:, None].to(hidden.dtype)


hidden = torch.randn(16, 40, 32)
lengths = torch.randint(1, 41, (16,))
pooled = mean_pool(hidden, lengths)
