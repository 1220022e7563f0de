# kind: vectorizable
# family: per-item-list
# origin: timm data/loader.py:55 fast_collate: a batch of uint8 ndarrays into one tensor
# results: images labels
# tags: corpus-style function-param
import numpy as np
import torch


def fast_collate(batch):
    batch_size = len(batch)
    targets = torch.tensor([b[1] for b in batch], dtype=torch.int64)
    assert len(targets) == batch_size
    tensor = torch.zeros((batch_size, *batch[0][0].shape), dtype=torch.uint8)
    for i in range(batch_size):
        tensor[i] += torch.from_numpy(batch[i][0])
    return tensor, targets


rng = np.random.default_rng(0)
batch = [(rng.integers(0, 256, (3, 32, 32), dtype=np.uint8), k % 10) for k in range(16)]
images, labels = fast_collate(batch)
# ---- vectorized ----
import numpy as np
import torch


def fast_collate(batch):
    batch_size = len(batch)
    targets = torch.tensor([b[1] for b in batch], dtype=torch.int64)
    assert len(targets) == batch_size
    tensor = torch.from_numpy(np.stack([b[0] for b in batch]))
    return tensor, targets


rng = np.random.default_rng(0)
batch = [(rng.integers(0, 256, (3, 32, 32), dtype=np.uint8), k % 10) for k in range(16)]
images, labels = fast_collate(batch)
