# kind: vectorizable
# family: gather
# origin: the hidden state at each sequence's last real token (sentence embeddings)
# results: last
# tags: function-param rank-only
import torch


def last_hidden(h, lengths):
    B, T, H = h.shape
    last = torch.empty(B, H)
    for b in range(B):
        last[b] = h[b, lengths[b] - 1]
    return last


h = torch.randn(24, 30, 16)
lengths = torch.randint(1, 31, (24,))
last = last_hidden(h, lengths)
# ---- vectorized ----
import torch


def last_hidden(h, lengths):
    return h[torch.arange(h.shape[0]), lengths - 1]


h = torch.randn(24, 30, 16)
lengths = torch.randint(1, 31, (24,))
last = last_hidden(h, lengths)
