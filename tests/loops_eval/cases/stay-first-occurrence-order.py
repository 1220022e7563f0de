# kind: must-stay-loop
# family: python-data
# origin: written for stop 26 as users write it (probe set): the distinct token ids in order of first appearance, through a Python set
# why: the output is a Python list in first-seen order, built with a set (ragged and order dependent)
# tags: module-level
import torch

ids = torch.randint(0, 50, (200,))
seen = set()
order = []
for t in ids.tolist():
    if t not in seen:
        seen.add(t)
        order.append(t)
