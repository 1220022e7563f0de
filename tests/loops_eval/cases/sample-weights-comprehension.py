# kind: vectorizable
# family: gather
# origin: written for stop 26 as users write it (probe set): per-sample weights looked up from class weights in a comprehension
# results: sample_w
# tags: module-level
import torch

labels = torch.randint(0, 4, (200,))
class_w = torch.tensor([1.0, 2.5, 0.5, 4.0])
sample_w = torch.stack([class_w[y] for y in labels])
# ---- vectorized ----
import torch

labels = torch.randint(0, 4, (200,))
class_w = torch.tensor([1.0, 2.5, 0.5, 4.0])
sample_w = class_w[labels]
