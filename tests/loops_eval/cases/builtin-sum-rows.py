# kind: vectorizable
# family: builtin
# origin: Python's sum() over the rows of a matrix (sums the columns)
# results: totals
# tags: function-param
import torch


def column_totals(m):
    return sum(m)


totals = column_totals(torch.randn(1000, 12))
# ---- vectorized ----
import torch


def column_totals(m):
    return m.sum(dim=0)


totals = column_totals(torch.randn(1000, 12))
