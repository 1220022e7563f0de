# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: pooled
# tags: function-param
import torch

def average(summed, lengths):
    pooled = summed.clone()
    for i in range(len(lengths)):
        pooled[i] /= lengths[i]
    return pooled

pooled = average(torch.randn(6, 4), torch.tensor([3.0, 1.0, 2.0, 5.0, 4.0, 2.0]))
# ---- vectorized ----
import torch

summed = torch.randn(6, 4)
lengths = torch.tensor([3.0, 1.0, 2.0, 5.0, 4.0, 2.0])
pooled = summed / lengths[:, None]
