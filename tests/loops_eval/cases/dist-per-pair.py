# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 29 as users write it (probe set): distance between matched embeddings, torch.dist per pair
# results: dists
# tags: function-param
import torch


def matched_distances(anchors, positives):
    dists = torch.zeros(anchors.shape[0])
    for i in range(anchors.shape[0]):
        dists[i] = torch.dist(anchors[i], positives[i])
    return dists


anchors = torch.randn(256, 64)
positives = anchors + 0.1 * torch.randn(256, 64)
dists = matched_distances(anchors, positives)
# ---- vectorized ----
import torch

anchors = torch.randn(256, 64)
positives = anchors + 0.1 * torch.randn(256, 64)
dists = (anchors - positives).norm(dim=1)
