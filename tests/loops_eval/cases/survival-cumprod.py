# kind: vectorizable
# family: scan
# origin: survival probabilities from per-step hazards
# results: survival
# tags: function-param
import torch


def survival_curve(hazard):
    survival = torch.empty_like(hazard)
    alive = 1.0
    for t in range(len(hazard)):
        alive = alive * (1 - hazard[t])
        survival[t] = alive
    return survival


survival = survival_curve(torch.rand(100) * 0.05)
# ---- vectorized ----
import torch


def survival_curve(hazard):
    return torch.cumprod(1 - hazard, dim=0)


survival = survival_curve(torch.rand(100) * 0.05)
