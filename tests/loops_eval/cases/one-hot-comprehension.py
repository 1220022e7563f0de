# kind: vectorizable
# family: one-hot
# origin: one-hot rows built per label then stacked
# results: targets
# tags: module-level
import torch
import torch.nn.functional as F

labels = torch.randint(0, 7, (300,))
targets = torch.stack([F.one_hot(y, num_classes=7) for y in labels])
# ---- vectorized ----
import torch
import torch.nn.functional as F

labels = torch.randint(0, 7, (300,))
targets = F.one_hot(labels, num_classes=7)
