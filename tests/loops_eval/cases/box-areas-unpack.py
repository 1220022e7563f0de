# kind: vectorizable
# family: multi-statement-map
# origin: object-detection utility (boxes as x1, y1, x2, y2)
# results: areas
# tags: module-level multi-statement
import torch

xy = torch.rand(300, 2) * 100
wh = torch.rand(300, 2) * 50
boxes = torch.cat([xy, xy + wh], dim=1)

areas = torch.zeros(len(boxes))
for i in range(len(boxes)):
    x1, y1, x2, y2 = boxes[i]
    areas[i] = (x2 - x1) * (y2 - y1)
# ---- vectorized ----
import torch

xy = torch.rand(300, 2) * 100
wh = torch.rand(300, 2) * 50
boxes = torch.cat([xy, xy + wh], dim=1)

areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
