# kind: vectorizable
# family: shifted-indexing
# origin: written for stop 25 as users write it (probe set): rotary embedding's rotate-every-two, written per pair
# results: out
# tags: module-level
import torch

x = torch.randn(4, 10, 16)
out = torch.empty_like(x)
for i in range(0, x.shape[-1], 2):
    out[..., i] = -x[..., i + 1]
    out[..., i + 1] = x[..., i]
# ---- vectorized ----
import torch

x = torch.randn(4, 10, 16)
out = torch.stack([-x[..., 1::2], x[..., ::2]], dim=-1).flatten(-2)
