# kind: vectorizable
# family: per-item-list
# origin: "ViT from scratch" tutorials: cutting an image into flattened p x p patches with two loops and torch.stack
# results: patches
# tags: function-param nested list-of-tensors
import torch


def patchify(img, p):
    C, H, W = img.shape
    patches = []
    for i in range(0, H, p):
        for j in range(0, W, p):
            patches.append(img[:, i:i + p, j:j + p].flatten())
    return torch.stack(patches)


image = torch.rand(3, 32, 32)
patches = patchify(image, 8)
# ---- vectorized ----
import torch


def patchify(img, p):
    C, H, W = img.shape
    grid = img.reshape(C, H // p, p, W // p, p).permute(1, 3, 0, 2, 4)
    return grid.reshape((H // p) * (W // p), C * p * p)


image = torch.rand(3, 32, 32)
patches = patchify(image, 8)
