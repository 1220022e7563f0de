# kind: vectorizable
# family: per-item-list
# origin: timm data/loader.py:62 fast_collate: a batch of uint8 tensors copied into one
# results: images labels
# tags: corpus-style function-param list-of-tensors
import torch


def fast_collate(batch):
    batch_size = len(batch)
    targets = torch.tensor([b[1] for b in batch], dtype=torch.int64)
    assert len(targets) == batch_size
    tensor = torch.zeros((batch_size, *batch[0][0].shape), dtype=torch.uint8)
    for i in range(batch_size):
        tensor[i].copy_(batch[i][0])
    return tensor, targets


batch = [(torch.randint(0, 256, (3, 32, 32), dtype=torch.uint8), k % 10) for k in range(16)]
images, labels = fast_collate(batch)
# ---- vectorized ----
import torch


def fast_collate(batch):
    batch_size = len(batch)
    targets = torch.tensor([b[1] for b in batch], dtype=torch.int64)
    assert len(targets) == batch_size
    tensor = torch.stack([b[0] for b in batch])
    return tensor, targets


batch = [(torch.randint(0, 256, (3, 32, 32), dtype=torch.uint8), k % 10) for k in range(16)]
images, labels = fast_collate(batch)
