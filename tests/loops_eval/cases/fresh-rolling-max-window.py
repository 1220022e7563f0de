# kind: vectorizable
# family: sliding-window
# origin: time-series feature engineering: the maximum over a trailing window of w readings
# results: peaks
# tags: function-param
import torch


def rolling_max(signal, w):
    out = torch.empty(signal.numel() - w + 1)
    for i in range(signal.numel() - w + 1):
        out[i] = signal[i:i + w].max()
    return out


readings = torch.randn(300).cumsum(0)
peaks = rolling_max(readings, 10)
# ---- vectorized ----
import torch


def rolling_max(signal, w):
    return signal.unfold(0, w, 1).max(dim=1).values


readings = torch.randn(300).cumsum(0)
peaks = rolling_max(readings, 10)
