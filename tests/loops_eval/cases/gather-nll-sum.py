# kind: vectorizable
# family: gather
# origin: negative log-likelihood written as a loop, in a loss function
# results: loss
# tags: function-param
import torch


def nll(log_probs, targets):
    loss = 0.0
    for i in range(len(targets)):
        loss -= log_probs[i, targets[i]]
    return loss / len(targets)


log_probs = torch.log_softmax(torch.randn(256, 20), dim=1)
targets = torch.randint(0, 20, (256,))
loss = nll(log_probs, targets)
# ---- vectorized ----
import torch


def nll(log_probs, targets):
    return -log_probs[torch.arange(len(targets)), targets].sum() / len(targets)


log_probs = torch.log_softmax(torch.randn(256, 20), dim=1)
targets = torch.randint(0, 20, (256,))
loss = nll(log_probs, targets)
