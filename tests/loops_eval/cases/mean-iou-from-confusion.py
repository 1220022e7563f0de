# kind: vectorizable
# family: per-class-metric
# origin: written for stop 26 as users write it (probe set): per-class IoU read off a confusion matrix (segmentation eval)
# results: iou
# tags: function-param
import torch


def class_iou(cm):
    n = cm.shape[0]
    iou = torch.zeros(n)
    for c in range(n):
        tp = cm[c, c]
        iou[c] = tp / (cm[c, :].sum() + cm[:, c].sum() - tp)
    return iou


cm = torch.randint(1, 50, (6, 6)).float()
iou = class_iou(cm)
# ---- vectorized ----
import torch


def class_iou(cm):
    tp = cm.diagonal()
    return tp / (cm.sum(1) + cm.sum(0) - tp)


cm = torch.randint(1, 50, (6, 6)).float()
iou = class_iou(cm)
