# kind: must-stay-loop
# family: recurrence
# origin: written for stop 26 as users write it (probe set): a one-sided CUSUM change detector on a signal
# why: the statistic is clipped at zero every step, s = max(0, s + x - k). Its closed form (Lindley: the running sum minus
# why: its running minimum, cumsum then cummin) subtracts two running sums whose rounding grows with the signal's length,
# why: while the loop's error stays bounded: the values drift apart on long float32 signals, so it stays a loop
# tags: function-param near-miss
import torch


def cusum(x, k=0.5):
    s = torch.zeros_like(x)
    for t in range(1, x.shape[0]):
        s[t] = torch.clamp(s[t - 1] + x[t] - k, min=0)
    return s


s = cusum(torch.randn(400) + 0.3)
