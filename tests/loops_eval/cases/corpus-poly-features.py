# kind: vectorizable
# family: comprehension
# origin: pytorch/examples regression/main.py make_features: powers of x concatenated
# results: feats
# tags: corpus-style function-param
import torch

POLY_DEGREE = 4


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)


feats = make_features(torch.randn(32))
# ---- vectorized ----
import torch

POLY_DEGREE = 4


def make_features(x):
    return x.unsqueeze(1) ** torch.arange(1, POLY_DEGREE + 1)


feats = make_features(torch.randn(32))
