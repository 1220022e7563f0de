# kind: must-stay-loop
# family: early-exit
# origin: summing a stream until the first outlier
# why: the break makes this a prefix sum up to a data-dependent point; the result's type depends on the data (an int 0 when the first value is an outlier, else a tensor), and dropping the break gives the full sum
# tags: module-level near-miss
import torch

stream = torch.randn(1000)

total = 0
for v in stream:
    if v.abs() > 2.5:
        break
    total += v
