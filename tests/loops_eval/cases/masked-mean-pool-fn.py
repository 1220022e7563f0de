# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: pooled
# tags: function-param
import torch

def mean_pool(h, mask):
    B = h.shape[0]
    pooled = torch.zeros(B, h.shape[2])
    for i in range(B):
        n = mask[i].sum()
        pooled[i] = (h[i] * mask[i, :, None]).sum(0) / n
    return pooled

h = torch.randn(4, 12, 8)
mask = (torch.rand(4, 12) > 0.3).float()
pooled = mean_pool(h, mask)
# ---- vectorized ----
import torch

h = torch.randn(4, 12, 8)
mask = (torch.rand(4, 12) > 0.3).float()
pooled = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
