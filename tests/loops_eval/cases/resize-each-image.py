# kind: vectorizable
# family: batch-of-one
# origin: data-augmentation code: each image resized alone by making it a batch of one
# results: small
# tags: module-level list-of-tensors
import torch
import torch.nn.functional as F

images = torch.rand(64, 3, 32, 32)
small = torch.stack([F.interpolate(img.unsqueeze(0), size=(16, 16), mode="bilinear", align_corners=False).squeeze(0)
                     for img in images])
# ---- vectorized ----
import torch
import torch.nn.functional as F

images = torch.rand(64, 3, 32, 32)
small = F.interpolate(images, size=(16, 16), mode="bilinear", align_corners=False)
