# kind: vectorizable
# family: multi-statement-map
# origin: pose-estimation inference code: (x, y) of the peak of each keypoint heatmap
# results: coords
# tags: function-param multi-statement
import torch


def heatmaps_to_coords(heatmaps):
    K, H, W = heatmaps.shape
    coords = torch.zeros(K, 2, dtype=torch.long)
    for k in range(K):
        idx = heatmaps[k].argmax()
        coords[k, 0] = idx % W
        coords[k, 1] = idx // W
    return coords


heatmaps = torch.randn(17, 48, 36)
coords = heatmaps_to_coords(heatmaps)
# ---- vectorized ----
import torch


def heatmaps_to_coords(heatmaps):
    K, H, W = heatmaps.shape
    idx = heatmaps.flatten(1).argmax(dim=1)
    return torch.stack([idx % W, idx // W], dim=1)


heatmaps = torch.randn(17, 48, 36)
coords = heatmaps_to_coords(heatmaps)
