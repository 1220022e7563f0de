# kind: vectorizable
# family: filter
# origin: the article's filter loop, verbatim
# results: result
# tags: article module-level
import torch

tensor = torch.randn(1000)

result = []
for x in tensor:
    if x > 0:
        result.append(x)
result = torch.tensor(result)
# ---- vectorized ----
import torch

tensor = torch.randn(1000)

result = tensor[tensor > 0]
