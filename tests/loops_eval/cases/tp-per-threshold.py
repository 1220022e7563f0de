# kind: vectorizable
# family: per-class-metric
# origin: written for stop 25 as users write it (probe set): true positives at each threshold for a PR curve
# results: tp fp
# tags: module-level multi-statement
import torch

scores = torch.rand(1000)
labels = torch.randint(0, 2, (1000,)).bool()
thresholds = torch.linspace(0, 1, 21)

tp = torch.zeros(len(thresholds))
fp = torch.zeros(len(thresholds))
for i, th in enumerate(thresholds):
    predicted = scores >= th
    tp[i] = (predicted & labels).sum()
    fp[i] = (predicted & ~labels).sum()
# ---- vectorized ----
import torch

scores = torch.rand(1000)
labels = torch.randint(0, 2, (1000,)).bool()
thresholds = torch.linspace(0, 1, 21)

predicted = scores[None, :] >= thresholds[:, None]
tp = (predicted & labels).sum(1).float()
fp = (predicted & ~labels).sum(1).float()
