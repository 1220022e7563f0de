# kind: vectorizable
# family: sliding-window
# origin: smoothing a training curve with a moving average
# results: smoothed
# tags: function-param
import torch


def moving_average(x, k):
    out = torch.empty(len(x) - k + 1)
    for i in range(len(x) - k + 1):
        out[i] = x[i:i + k].mean()
    return out


smoothed = moving_average(torch.rand(1000), 20)
# ---- vectorized ----
import torch


def moving_average(x, k):
    return x.unfold(0, k, 1).mean(dim=1)


smoothed = moving_average(torch.rand(1000), 20)
