# kind: vectorizable
# family: map
# origin: written for stop 25 as users write it (probe set): center crop every image of a batch
# results: crops
# tags: module-level list-of-tensors
import torch

imgs = torch.rand(5, 3, 40, 40)
size = 32
top = (imgs.shape[2] - size) // 2
left = (imgs.shape[3] - size) // 2
crops = []
for img in imgs:
    crops.append(img[:, top:top + size, left:left + size])
crops = torch.stack(crops)
# ---- vectorized ----
import torch

imgs = torch.rand(5, 3, 40, 40)
size = 32
top = (imgs.shape[2] - size) // 2
left = (imgs.shape[3] - size) // 2
crops = imgs[:, :, top:top + size, left:left + size].contiguous()
