# kind: vectorizable
# family: builtin
# origin: a unit test comparing two implementations row by row
# results: same
# tags: module-level
import torch

a = torch.randn(200, 16)
b = a + 1e-9 * torch.randn(200, 16)
same = all(torch.allclose(a[i], b[i]) for i in range(len(a)))
# ---- vectorized ----
import torch

a = torch.randn(200, 16)
b = a + 1e-9 * torch.randn(200, 16)
same = torch.allclose(a, b)
