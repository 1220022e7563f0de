# kind: must-stay-loop
# family: recurrence
# origin: Kadane's maximum subarray sum over daily returns
# why: dynamic programming: best_ending_here depends on its previous value through max()
# tags: function-param
import torch


def max_subarray(x):
    best = cur = x[0]
    for v in x[1:]:
        cur = torch.maximum(v, cur + v)
        best = torch.maximum(best, cur)
    return best


best = max_subarray(torch.randn(1000))
