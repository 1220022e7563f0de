# kind: vectorizable
# family: histogram
# origin: classification eval scripts: a confusion matrix built one (true class, predicted class) cell at a time
# results: cm
# tags: function-param nested
import torch


def confusion_matrix(y_true, y_pred, num_classes):
    cm = torch.zeros(num_classes, num_classes, dtype=torch.long)
    for i in range(num_classes):
        for j in range(num_classes):
            # how many samples of class i were predicted as class j
            cm[i, j] = ((y_true == i) & (y_pred == j)).sum()
    return cm


logits = torch.randn(500, 6)
labels = torch.randint(0, 6, (500,))
preds = logits.argmax(dim=1)
cm = confusion_matrix(labels, preds, 6)
# ---- vectorized ----
import torch


def confusion_matrix(y_true, y_pred, num_classes):
    flat = y_true * num_classes + y_pred
    return torch.bincount(flat, minlength=num_classes * num_classes).reshape(num_classes, num_classes)


logits = torch.randn(500, 6)
labels = torch.randint(0, 6, (500,))
preds = logits.argmax(dim=1)
cm = confusion_matrix(labels, preds, 6)
