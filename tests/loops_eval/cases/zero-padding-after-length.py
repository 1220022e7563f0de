# kind: vectorizable
# family: ragged-mask
# origin: zeroing the padded time steps of a batch of sequences (in place)
# results: x
# tags: function-param
import torch


def zero_pad(x, lengths):
    for i, L in enumerate(lengths):
        x[i, L:] = 0
    return x


x = torch.randn(32, 100, 16)
lengths = torch.randint(1, 101, (32,))
x = zero_pad(x, lengths)
# ---- vectorized ----
import torch


def zero_pad(x, lengths):
    pad = torch.arange(x.shape[1])[None, :] >= lengths[:, None]
    return x.masked_fill_(pad[:, :, None], 0)


x = torch.randn(32, 100, 16)
lengths = torch.randint(1, 101, (32,))
x = zero_pad(x, lengths)
