# kind: vectorizable
# family: scatter
# origin: text-generation code (CTRL-style repetition penalty): each token already generated has its logit pushed down once
# results: logits
# tags: function-param python-set
import torch


def apply_repetition_penalty(logits, prev_tokens, penalty=1.2):
    for tok in set(prev_tokens.tolist()):
        if logits[tok] < 0:
            logits[tok] *= penalty
        else:
            logits[tok] /= penalty
    return logits


logits = torch.randn(100)
generated = torch.randint(0, 100, (30,))
logits = apply_repetition_penalty(logits, generated)
# ---- vectorized ----
import torch


def apply_repetition_penalty(logits, prev_tokens, penalty=1.2):
    idx = torch.unique(prev_tokens)
    picked = logits[idx]
    logits[idx] = torch.where(picked < 0, picked * penalty, picked / penalty)
    return logits


logits = torch.randn(100)
generated = torch.randint(0, 100, (30,))
logits = apply_repetition_penalty(logits, generated)
