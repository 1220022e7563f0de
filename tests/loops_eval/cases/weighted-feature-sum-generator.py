# kind: vectorizable
# family: builtin
# origin: written for stop 26 as users write it (second probe): a linear score as a sum over feature columns with a generator
# results: score
# tags: module-level
import torch

feats = torch.randn(300, 6)
w = torch.randn(6)
score = sum(w[k] * feats[:, k] for k in range(feats.shape[1]))
# ---- vectorized ----
import torch

feats = torch.randn(300, 6)
w = torch.randn(6)
score = feats @ w
