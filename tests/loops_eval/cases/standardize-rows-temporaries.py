# kind: vectorizable
# family: multi-statement-map
# origin: feature standardization per sample, research-code style
# results: z
# tags: function-param multi-statement
import torch


def standardize(x, eps=1e-5):
    z = torch.empty_like(x)
    for i in range(len(x)):
        mu = x[i].mean()
        sigma = x[i].std()
        z[i] = (x[i] - mu) / (sigma + eps)
    return z


z = standardize(torch.randn(300, 40))
# ---- vectorized ----
import torch


def standardize(x, eps=1e-5):
    return (x - x.mean(dim=1, keepdim=True)) / (x.std(dim=1, keepdim=True) + eps)


z = standardize(torch.randn(300, 40))
