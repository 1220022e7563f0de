# kind: must-stay-loop
# family: python-data
# origin: grouping sample indices by class for a balanced sampler
# why: the result is a dict of Python lists of different lengths
# tags: module-level
import torch

labels = torch.randint(0, 5, (500,))

groups = {c: [] for c in range(5)}
for i, y in enumerate(labels):
    groups[int(y)].append(i)
