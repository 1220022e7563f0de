# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 29 as users write it (probe set): layer norm applied token by token with F.layer_norm
# results: normed
# tags: function-param multi-statement
import torch
import torch.nn.functional as F


def norm_tokens(tokens, gamma, beta):
    n, d = tokens.shape
    normed = torch.empty_like(tokens)
    for t in range(n):
        normed[t] = F.layer_norm(tokens[t], (d,), gamma, beta, eps=1e-5)
    return normed


tokens = torch.randn(128, 64)
gamma = torch.ones(64)
beta = torch.zeros(64)
normed = norm_tokens(tokens, gamma, beta)
# ---- vectorized ----
import torch
import torch.nn.functional as F

tokens = torch.randn(128, 64)
gamma = torch.ones(64)
beta = torch.zeros(64)
normed = F.layer_norm(tokens, (64,), gamma, beta, eps=1e-5)
