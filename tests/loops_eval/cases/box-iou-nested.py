# kind: vectorizable
# family: contraction
# origin: object-detection tutorials: IoU of every pair of boxes, (x1, y1, x2, y2), two nested loops
# results: ious
# tags: function-param nested multi-statement
import torch


def box_iou(boxes_a, boxes_b):
    ious = torch.zeros(len(boxes_a), len(boxes_b))
    for i in range(len(boxes_a)):
        for j in range(len(boxes_b)):
            a, b = boxes_a[i], boxes_b[j]
            w = (torch.min(a[2], b[2]) - torch.max(a[0], b[0])).clamp(min=0)
            h = (torch.min(a[3], b[3]) - torch.max(a[1], b[1])).clamp(min=0)
            inter = w * h
            ious[i, j] = inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)
    return ious


xy = torch.rand(40, 2) * 50
boxes = torch.cat([xy, xy + torch.rand(40, 2) * 20 + 1], dim=1)
ious = box_iou(boxes, boxes[:25])
# ---- vectorized ----
import torch


def box_iou(boxes_a, boxes_b):
    lt = torch.max(boxes_a[:, None, :2], boxes_b[:, :2])
    rb = torch.min(boxes_a[:, None, 2:], boxes_b[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=2)
    area_a = (boxes_a[:, 2] - boxes_a[:, 0]) * (boxes_a[:, 3] - boxes_a[:, 1])
    area_b = (boxes_b[:, 2] - boxes_b[:, 0]) * (boxes_b[:, 3] - boxes_b[:, 1])
    return inter / (area_a[:, None] + area_b - inter)


xy = torch.rand(40, 2) * 50
boxes = torch.cat([xy, xy + torch.rand(40, 2) * 20 + 1], dim=1)
ious = box_iou(boxes, boxes[:25])
