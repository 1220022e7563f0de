# kind: vectorizable
# family: contraction
# origin: written for stop 26 as users write it (probe set): luma of a float64 image from literal channel weights
# results: luma
# tags: function-param
import torch


def to_luma(img):
    luma = torch.zeros(img.shape[1:], dtype=img.dtype)
    for c, w in enumerate([0.2126, 0.7152, 0.0722]):
        luma += w * img[c]
    return luma


luma = to_luma(torch.rand(3, 32, 32, dtype=torch.float64))
# ---- vectorized ----
import torch


def to_luma(img):
    w = torch.tensor([0.2126, 0.7152, 0.0722], dtype=img.dtype)
    return (w[:, None, None] * img).sum(0)


luma = to_luma(torch.rand(3, 32, 32, dtype=torch.float64))
