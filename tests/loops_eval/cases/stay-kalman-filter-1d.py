# kind: must-stay-loop
# family: recurrence
# origin: written for stop 29 as users write it (probe set): a scalar Kalman filter over noisy measurements
# why: the gain of each step depends on the variance the previous step left, which the step updates twice (predict, then update): no scan gives it
# tags: function-param near-miss
import torch


def kalman_1d(measurements, q=1e-3, r=0.1):
    x, p = 0.0, 1.0
    estimates = torch.zeros(len(measurements))
    for t in range(len(measurements)):
        p = p + q
        k = p / (p + r)
        x = x + k * (measurements[t].item() - x)
        p = (1 - k) * p
        estimates[t] = x
    return estimates


z = torch.linspace(0, 1, 200) + 0.1 * torch.randn(200)
est = kalman_1d(z)
