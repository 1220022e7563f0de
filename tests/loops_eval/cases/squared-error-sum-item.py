# kind: vectorizable
# family: item-accumulation
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: sse
# tags: function-param
import torch

def sum_squared_error(pred, target):
    sse = 0.0
    for i in range(len(pred)):
        sse += (pred[i] - target[i]).item() ** 2
    return sse

sse = sum_squared_error(torch.randn(100), torch.randn(100))
# ---- vectorized ----
import torch

pred = torch.randn(100)
target = torch.randn(100)
sse = ((pred - target) ** 2).sum().item()
