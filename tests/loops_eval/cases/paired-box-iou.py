# kind: vectorizable
# family: multi-statement-map
# origin: written for stop 26 as users write it (probe set): IoU of each predicted box with its matched ground-truth box
# results: ious
# tags: function-param multi-statement
import torch


def matched_iou(pred, gt):
    ious = torch.zeros(pred.shape[0])
    for i in range(pred.shape[0]):
        x1 = torch.max(pred[i, 0], gt[i, 0])
        y1 = torch.max(pred[i, 1], gt[i, 1])
        x2 = torch.min(pred[i, 2], gt[i, 2])
        y2 = torch.min(pred[i, 3], gt[i, 3])
        inter = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
        area_p = (pred[i, 2] - pred[i, 0]) * (pred[i, 3] - pred[i, 1])
        area_g = (gt[i, 2] - gt[i, 0]) * (gt[i, 3] - gt[i, 1])
        ious[i] = inter / (area_p + area_g - inter)
    return ious


xy = torch.rand(50, 2)
pred = torch.cat([xy, xy + torch.rand(50, 2)], dim=1)
gt = torch.cat([xy + 0.1, xy + 0.1 + torch.rand(50, 2)], dim=1)
ious = matched_iou(pred, gt)
# ---- vectorized ----
import torch


def matched_iou(pred, gt):
    lt = torch.max(pred[:, :2], gt[:, :2])
    rb = torch.min(pred[:, 2:], gt[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, 0] * wh[:, 1]
    area_p = (pred[:, 2] - pred[:, 0]) * (pred[:, 3] - pred[:, 1])
    area_g = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
    return inter / (area_p + area_g - inter)


xy = torch.rand(50, 2)
pred = torch.cat([xy, xy + torch.rand(50, 2)], dim=1)
gt = torch.cat([xy + 0.1, xy + 0.1 + torch.rand(50, 2)], dim=1)
ious = matched_iou(pred, gt)
