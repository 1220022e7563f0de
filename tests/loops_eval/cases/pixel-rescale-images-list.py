# kind: vectorizable
# family: per-item-list
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: batch
# tags: module-level list-of-tensors
import torch

images = [torch.randint(0, 256, (3, 8, 8), dtype=torch.uint8) for _ in range(4)]
batch = torch.stack([img.float() / 255.0 for img in images])
# ---- vectorized ----
import torch

images = [torch.randint(0, 256, (3, 8, 8), dtype=torch.uint8) for _ in range(4)]
batch = torch.stack(images).float() / 255.0
