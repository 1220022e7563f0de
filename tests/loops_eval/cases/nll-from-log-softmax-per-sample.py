# kind: vectorizable
# family: gather
# origin: written for stop 29 as users write it (probe set): negative log-likelihood summed sample by sample
# results: nll
# tags: module-level multi-statement
import torch
import torch.nn.functional as F

logits = torch.randn(256, 10)
targets = torch.randint(0, 10, (256,))
nll = 0.0
for i in range(len(targets)):
    logp = F.log_softmax(logits[i], dim=0)
    nll -= logp[targets[i]]
nll = nll / len(targets)
# ---- vectorized ----
import torch
import torch.nn.functional as F

logits = torch.randn(256, 10)
targets = torch.randint(0, 10, (256,))
nll = -F.log_softmax(logits, dim=1)[torch.arange(len(targets)), targets].sum() / len(targets)
