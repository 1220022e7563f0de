# kind: vectorizable
# family: gather
# origin: written for stop 26 as users write it (second probe): an additive angular margin taken off each sample's target logit (CosFace)
# results: logits
# tags: function-param
import torch


def apply_margin(logits, labels, m=0.35):
    for i in range(logits.shape[0]):
        logits[i, labels[i]] -= m
    return logits


logits = apply_margin(torch.randn(64, 10), torch.randint(0, 10, (64,)))
# ---- vectorized ----
import torch


def apply_margin(logits, labels, m=0.35):
    logits[torch.arange(logits.shape[0]), labels] -= m
    return logits


logits = apply_margin(torch.randn(64, 10), torch.randint(0, 10, (64,)))
