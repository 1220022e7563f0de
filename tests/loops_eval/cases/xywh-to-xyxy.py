# kind: vectorizable
# family: multi-statement-map
# origin: written for stop 25 as users write it (probe set): COCO boxes to corner form
# results: xyxy
# tags: module-level multi-statement
import torch

boxes = torch.rand(30, 4) * 100

xyxy = torch.zeros_like(boxes)
for i in range(len(boxes)):
    x, y, w, h = boxes[i]
    xyxy[i] = torch.stack([x, y, x + w, y + h])
# ---- vectorized ----
import torch

boxes = torch.rand(30, 4) * 100

xyxy = torch.cat([boxes[:, :2], boxes[:, :2] + boxes[:, 2:]], dim=1)
