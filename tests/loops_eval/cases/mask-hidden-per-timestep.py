# kind: vectorizable
# family: column-indexing
# origin: written for stop 26 as users write it (probe set): zero the hidden states of padded time steps, one step at a time
# results: h
# tags: function-param
import torch


def mask_states(h, mask):
    for t in range(h.shape[1]):
        h[:, t] = h[:, t] * mask[:, t].unsqueeze(-1)
    return h


h = mask_states(torch.randn(4, 10, 16), (torch.rand(4, 10) > 0.3).float())
# ---- vectorized ----
import torch


def mask_states(h, mask):
    h *= mask.unsqueeze(-1)
    return h


h = mask_states(torch.randn(4, 10, 16), (torch.rand(4, 10) > 0.3).float())
