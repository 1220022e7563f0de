# kind: vectorizable
# family: reduction
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: l1
# tags: function-param
import torch

def l1_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    total = torch.tensor(0.0)
    for i in range(a.shape[0]):
        total = total + torch.abs(a[i] - b[i]).sum()
    return total

l1 = l1_distance(torch.randn(12, 4), torch.randn(12, 4))
# ---- vectorized ----
import torch

l1 = torch.abs(torch.randn(12, 4) - torch.randn(12, 4)).sum()
