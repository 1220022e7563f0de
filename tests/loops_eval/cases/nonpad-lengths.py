# kind: vectorizable
# family: reduction
# origin: written for stop 26 as users write it (probe set): sequence lengths from padded token ids
# results: lengths
# tags: function-param rank-only
import torch

PAD = 0


def lengths_of(input_ids):
    B, T = input_ids.shape
    lengths = torch.zeros(B, dtype=torch.long)
    for b in range(B):
        lengths[b] = (input_ids[b] != PAD).sum()
    return lengths


ids = torch.randint(0, 5, (32, 20))
lengths = lengths_of(ids)
# ---- vectorized ----
import torch

PAD = 0


def lengths_of(input_ids):
    return (input_ids != PAD).sum(1)


ids = torch.randint(0, 5, (32, 20))
lengths = lengths_of(ids)
