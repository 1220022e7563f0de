# kind: must-stay-loop
# family: data-dependent-branch
# origin: COCO/VOC-style mAP evaluation: detections, best score first, each claim the best still-unmatched ground-truth box
# why: a ground-truth box taken by a higher-scoring detection is no longer available to the later ones; the taken set is state carried from one detection to the next (greedy matching), so per-detection max IoU over all boxes gives different true positives
# tags: function-param nested
import torch


def match_detections(ious, scores, iou_thr=0.5):
    # ious: (num_detections, num_ground_truths)
    order = scores.argsort(descending=True)
    gt_taken = torch.zeros(ious.shape[1], dtype=torch.bool)
    tp = torch.zeros(len(scores))
    for d in order.tolist():
        best_iou, best_gt = iou_thr, -1
        for g in range(ious.shape[1]):
            if gt_taken[g]:
                continue
            if ious[d, g] >= best_iou:
                best_iou, best_gt = ious[d, g], g
        if best_gt >= 0:
            gt_taken[best_gt] = True
            tp[d] = 1.0
    return tp


ious = torch.rand(30, 8)
scores = torch.rand(30)
tp = match_detections(ious, scores)
