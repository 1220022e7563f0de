# kind: vectorizable
# family: contraction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: ious
# tags: function-param nested
import torch

def iou_matrix(a, b):
    ious = torch.zeros(len(a), len(b))
    for i in range(len(a)):
        for j in range(len(b)):
            x1 = torch.max(a[i, 0], b[j, 0])
            y1 = torch.max(a[i, 1], b[j, 1])
            x2 = torch.min(a[i, 2], b[j, 2])
            y2 = torch.min(a[i, 3], b[j, 3])
            inter = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
            area_a = (a[i, 2] - a[i, 0]) * (a[i, 3] - a[i, 1])
            area_b = (b[j, 2] - b[j, 0]) * (b[j, 3] - b[j, 1])
            ious[i, j] = inter / (area_a + area_b - inter)
    return ious

xy = torch.rand(5, 2) * 10
boxes_a = torch.cat([xy, xy + torch.rand(5, 2) * 5 + 1], dim=1)
xy = torch.rand(3, 2) * 10
boxes_b = torch.cat([xy, xy + torch.rand(3, 2) * 5 + 1], dim=1)
ious = iou_matrix(boxes_a, boxes_b)
# ---- vectorized ----
import torch

xy = torch.rand(5, 2) * 10
boxes_a = torch.cat([xy, xy + torch.rand(5, 2) * 5 + 1], dim=1)
xy = torch.rand(3, 2) * 10
boxes_b = torch.cat([xy, xy + torch.rand(3, 2) * 5 + 1], dim=1)
lt = torch.max(boxes_a[:, None, :2], boxes_b[:, :2])
rb = torch.min(boxes_a[:, None, 2:], boxes_b[:, 2:])
wh = (rb - lt).clamp(min=0)
inter = wh[..., 0] * wh[..., 1]
area_a = (boxes_a[:, 2] - boxes_a[:, 0]) * (boxes_a[:, 3] - boxes_a[:, 1])
area_b = (boxes_b[:, 2] - boxes_b[:, 0]) * (boxes_b[:, 3] - boxes_b[:, 1])
ious = inter / (area_a[:, None] + area_b - inter)
