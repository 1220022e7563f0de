# kind: vectorizable
# family: vmap-user-function
# origin: the article's torch.stack([f(x) for x in tensor_list])
# results: outputs
# tags: article module-level list-of-tensors
import torch


def f(x):
    # some per-sample computation
    return torch.sin(x) * x + x ** 2


tensor_list = [torch.randn(64) for _ in range(200)]
outputs = torch.stack([f(x) for x in tensor_list])
# ---- vectorized ----
import torch


def f(x):
    # some per-sample computation
    return torch.sin(x) * x + x ** 2


tensor_list = [torch.randn(64) for _ in range(200)]
outputs = torch.vmap(f)(torch.stack(tensor_list))
