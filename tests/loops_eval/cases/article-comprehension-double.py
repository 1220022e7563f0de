# kind: vectorizable
# family: comprehension
# origin: the article's list comprehension, verbatim
# results: doubled
# tags: article module-level
import torch

tensor = torch.randn(1000)
doubled = torch.tensor([x * 2 for x in tensor])
# ---- vectorized ----
import torch

tensor = torch.randn(1000)
doubled = tensor * 2
