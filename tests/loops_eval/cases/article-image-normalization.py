# kind: vectorizable
# family: per-item-list
# origin: the article's image normalization loop
# results: batch
# tags: article module-level list-of-tensors
import torch

# a batch of images as a dataset hands them out: a list of CHW tensors
images = [torch.rand(3, 64, 64) for _ in range(32)]
mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)

normalized = []
for img in images:
    normalized.append((img - mean) / std)
batch = torch.stack(normalized)
# ---- vectorized ----
import torch

images = [torch.rand(3, 64, 64) for _ in range(32)]
mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)

batch = (torch.stack(images) - mean) / std
