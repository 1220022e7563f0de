# kind: vectorizable
# family: reduction
# origin: written for stop 25 as users write it (probe set): token accuracy that skips padding
# results: acc
# tags: function-param multi-statement
import torch


def token_accuracy(preds, targets, pad_id=0):
    correct = 0
    total = 0
    for p, t in zip(preds.view(-1), targets.view(-1)):
        if t != pad_id:
            total += 1
            if p == t:
                correct += 1
    return correct / total


preds = torch.randint(0, 5, (8, 30))
targets = torch.randint(0, 5, (8, 30))
acc = token_accuracy(preds, targets)
# ---- vectorized ----
import torch

preds = torch.randint(0, 5, (8, 30))
targets = torch.randint(0, 5, (8, 30))
keep = targets != 0
acc = (preds[keep] == targets[keep]).sum().item() / keep.sum().item()
