# kind: vectorizable
# family: contraction
# origin: written for stop 26 as users write it (second probe): the Gram matrix of each image's feature maps (style loss)
# results: G
# tags: function-param
import torch


def gram(feats):
    B, C, H, W = feats.shape
    flat = feats.view(B, C, H * W)
    G = torch.zeros(B, C, C)
    for b in range(B):
        G[b] = flat[b] @ flat[b].T / (C * H * W)
    return G


G = gram(torch.randn(4, 8, 6, 6))
# ---- vectorized ----
import torch


def gram(feats):
    B, C, H, W = feats.shape
    flat = feats.view(B, C, H * W)
    return flat @ flat.transpose(1, 2) / (C * H * W)


G = gram(torch.randn(4, 8, 6, 6))
