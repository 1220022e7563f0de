# kind: vectorizable
# family: one-hot
# origin: one-hot targets for an MSE-trained classifier
# results: one_hot
# tags: module-level
import torch

num_classes = 10
labels = torch.randint(0, num_classes, (256,))

one_hot = torch.zeros(len(labels), num_classes)
for i in range(len(labels)):
    one_hot[i, labels[i]] = 1
# ---- vectorized ----
import torch
import torch.nn.functional as F

num_classes = 10
labels = torch.randint(0, num_classes, (256,))

one_hot = F.one_hot(labels, num_classes).float()
