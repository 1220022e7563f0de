# kind: must-stay-loop
# family: side-effect
# origin: written for stop 24 as users write it (probe set, outside the test families)
# tags: module-level
# why: one random offset is drawn per image, in order; a batched draw consumes the generator differently
import torch

images = torch.rand(8, 3, 40, 40)
crops = torch.empty(8, 3, 32, 32)
for i in range(images.shape[0]):
    top = torch.randint(0, 9, (1,)).item()
    left = torch.randint(0, 9, (1,)).item()
    crops[i] = images[i, :, top:top + 32, left:left + 32]
