# kind: must-stay-loop
# family: data-dependent-branch
# origin: written for stop 25 as users write it (probe set): greedy non-maximum suppression
# why: whether a box is kept depends on the boxes kept before it
# tags: function-param
import torch


def nms(boxes, scores, thr=0.5):
    order = scores.argsort(descending=True)
    keep = []
    suppressed = torch.zeros(len(boxes), dtype=torch.bool)
    for i in order.tolist():
        if suppressed[i]:
            continue
        keep.append(i)
        x1 = torch.maximum(boxes[i, 0], boxes[:, 0])
        y1 = torch.maximum(boxes[i, 1], boxes[:, 1])
        x2 = torch.minimum(boxes[i, 2], boxes[:, 2])
        y2 = torch.minimum(boxes[i, 3], boxes[:, 3])
        inter = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
        area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        iou = inter / (area[i] + area - inter)
        suppressed |= iou > thr
    return keep


xy = torch.rand(40, 2) * 50
boxes = torch.cat([xy, xy + 10 + torch.rand(40, 2) * 20], dim=1)
keep = nms(boxes, torch.rand(40))
