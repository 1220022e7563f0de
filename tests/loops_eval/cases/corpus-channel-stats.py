# kind: vectorizable
# family: column-indexing
# origin: timm csatv2.py: per-channel mean and variance of DCT coefficients
# results: mean_list var_list
# tags: corpus-style module-level
import torch

x = torch.randn(512, 3, 64)

mean_list = torch.zeros([3, 64])
var_list = torch.zeros([3, 64])
for i in range(3):
    mean_list[i] = torch.mean(x[:, i], dim=0)
    var_list[i] = torch.var(x[:, i], dim=0)
# ---- vectorized ----
import torch

x = torch.randn(512, 3, 64)

mean_list = x.mean(dim=0)
var_list = x.var(dim=0)
