# kind: must-stay-loop
# family: ragged-output
# origin: written for stop 24 as users write it (probe set, outside the test families)
# tags: module-level
# why: each row keeps a different number of values: the result is a list of tensors of different lengths
import torch

scores = torch.randn(6, 10)
kept = []
for row in scores:
    kept.append(row[row > 0])
