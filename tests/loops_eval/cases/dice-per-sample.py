# kind: vectorizable
# family: per-row-normalize
# origin: written for stop 25 as users write it (probe set): soft Dice score per image
# results: dice
# tags: function-param multi-statement
import torch


def dice_scores(probs, masks, eps=1e-6):
    scores = []
    for p, m in zip(probs, masks):
        inter = (p * m).sum()
        scores.append((2 * inter + eps) / (p.sum() + m.sum() + eps))
    return torch.stack(scores)


probs = torch.rand(6, 1, 32, 32)
masks = (torch.rand(6, 1, 32, 32) > 0.5).float()
dice = dice_scores(probs, masks)
# ---- vectorized ----
import torch

probs = torch.rand(6, 1, 32, 32)
masks = (torch.rand(6, 1, 32, 32) > 0.5).float()
dims = (1, 2, 3)
dice = (2 * (probs * masks).sum(dims) + 1e-6) / (probs.sum(dims) + masks.sum(dims) + 1e-6)
