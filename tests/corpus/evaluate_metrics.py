"""Evaluate a multi-class classifier: accuracy, per-class precision / recall / F1, a confusion matrix
and expected calibration error, all computed with tensor ops."""

from __future__ import annotations

import torch
import torch.nn as nn


def confusion_matrix(preds: torch.Tensor, targets: torch.Tensor, num_classes: int) -> torch.Tensor:
    index = targets * num_classes + preds
    return torch.bincount(index, minlength=num_classes ** 2).reshape(num_classes, num_classes)


def precision_recall_f1(cm: torch.Tensor, eps: float = 1e-12):
    tp = cm.diag().float()
    precision = tp / (cm.sum(dim=0).float() + eps)
    recall = tp / (cm.sum(dim=1).float() + eps)
    f1 = 2 * precision * recall / (precision + recall + eps)
    return precision, recall, f1


def expected_calibration_error(probs: torch.Tensor, targets: torch.Tensor, bins: int = 15) -> float:
    confidence, preds = probs.max(dim=1)
    correct = preds.eq(targets).float()
    edges = torch.linspace(0, 1, bins + 1, device=probs.device)
    bucket = torch.bucketize(confidence, edges[1:-1])
    counts = torch.bincount(bucket, minlength=bins).float()
    conf_sum = torch.bincount(bucket, weights=confidence, minlength=bins)
    acc_sum = torch.bincount(bucket, weights=correct, minlength=bins)
    nonempty = counts > 0
    gap = (conf_sum[nonempty] - acc_sum[nonempty]).abs()
    return (gap.sum() / counts.sum()).item()


@torch.no_grad()
def evaluate(model: nn.Module, loader, device: torch.device, num_classes: int) -> dict:
    model.eval()
    all_probs, all_targets = [], []
    for inputs, targets in loader:
        logits = model(inputs.to(device))
        all_probs.append(logits.softmax(dim=1).cpu())
        all_targets.append(targets)
    probs = torch.cat(all_probs)
    targets = torch.cat(all_targets)
    preds = probs.argmax(dim=1)
    cm = confusion_matrix(preds, targets, num_classes)
    precision, recall, f1 = precision_recall_f1(cm)
    return {
        "accuracy": preds.eq(targets).float().mean().item(),
        "macro_f1": f1.mean().item(),
        "precision": precision.tolist(),
        "recall": recall.tolist(),
        "confusion": cm.tolist(),
        "ece": expected_calibration_error(probs, targets),
    }


if __name__ == "__main__":
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(20, 3).to(device)
    data = TensorDataset(torch.randn(300, 20), torch.randint(0, 3, (300,)))
    metrics = evaluate(model, DataLoader(data, batch_size=64), device, num_classes=3)
    for name, value in metrics.items():
        print(f"{name:>10}: {value}")
