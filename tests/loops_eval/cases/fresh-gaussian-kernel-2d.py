# kind: vectorizable
# family: index-grid
# origin: image-processing tutorials: a 2-d Gaussian blur kernel filled with math.exp, then normalised
# results: kernel
# tags: function-param nested
import math

import torch


def gaussian_kernel(size, sigma):
    kernel = torch.zeros(size, size)
    center = size // 2
    for i in range(size):
        for j in range(size):
            kernel[i, j] = math.exp(-((i - center) ** 2 + (j - center) ** 2) / (2 * sigma ** 2))
    return kernel / kernel.sum()


kernel = gaussian_kernel(7, 1.5)
# ---- vectorized ----
import math

import torch


def gaussian_kernel(size, sigma):
    coords = torch.arange(size, dtype=torch.float64) - size // 2
    kernel = torch.exp(-(coords[:, None] ** 2 + coords[None, :] ** 2) / (2 * sigma ** 2)).float()
    return kernel / kernel.sum()


kernel = gaussian_kernel(7, 1.5)
