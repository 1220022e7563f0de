# kind: vectorizable
# family: multi-statement-map
# origin: timm data/mixup.py:315 FastCollateMixup._mix_batch_collate: each image mixed with its mirror in the batch
# results: output
# tags: corpus-style function-param list-of-tensors multi-statement
import torch


def mix_batch_collate(output, batch, lam):
    batch_size = len(batch)
    for i in range(batch_size):
        j = batch_size - i - 1
        mixed = batch[i][0]
        if lam != 1.:
            mixed = mixed.float() * lam + batch[j][0].float() * (1 - lam)
            torch.round(mixed, out=mixed)
        output[i] += mixed.byte()
    return lam


batch = [(torch.randint(0, 256, (3, 32, 32), dtype=torch.uint8), k % 10) for k in range(16)]
output = torch.zeros((16, 3, 32, 32), dtype=torch.uint8)
mix_batch_collate(output, batch, 0.7)
# ---- vectorized ----
import torch


def mix_batch_collate(output, batch, lam):
    imgs = torch.stack([b[0] for b in batch])
    mixed = imgs
    if lam != 1.:
        mixed = (imgs.float() * lam + imgs.flip(0).float() * (1 - lam)).round()
    output += mixed.byte()
    return lam


batch = [(torch.randint(0, 256, (3, 32, 32), dtype=torch.uint8), k % 10) for k in range(16)]
output = torch.zeros((16, 3, 32, 32), dtype=torch.uint8)
mix_batch_collate(output, batch, 0.7)
