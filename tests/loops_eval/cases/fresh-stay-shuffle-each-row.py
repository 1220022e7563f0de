# kind: must-stay-loop
# family: side-effect
# origin: data augmentation: shuffle the order of the items inside each sample (set-style inputs), one permutation per row
# why: one torch.randperm draw per row; a vectorized shuffle (torch.rand(n, d).argsort(dim=1)) consumes the random generator differently, so the rows come out in other orders
# tags: module-level near-miss
import torch

items = torch.randn(8, 6, 4)
for i in range(items.size(0)):
    items[i] = items[i][torch.randperm(items.size(1))]
