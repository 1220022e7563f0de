# kind: vectorizable
# family: map
# origin: written for stop 26 as users write it (probe set): an attention mask from padded ids, cell by cell
# results: mask
# tags: function-param nested
import torch


def padding_mask(ids, pad_id):
    mask = torch.zeros(ids.shape, dtype=torch.bool)
    for i in range(ids.shape[0]):
        for j in range(ids.shape[1]):
            mask[i, j] = ids[i, j] != pad_id
    return mask


mask = padding_mask(torch.randint(0, 4, (16, 12)), 0)
# ---- vectorized ----
import torch


def padding_mask(ids, pad_id):
    return ids != pad_id


mask = padding_mask(torch.randint(0, 4, (16, 12)), 0)
