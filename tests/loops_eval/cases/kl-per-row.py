# kind: vectorizable
# family: map
# origin: written for stop 25 as users write it (probe set): KL(p || q) per distillation sample
# results: kl
# tags: module-level
import torch

p = torch.softmax(torch.randn(32, 10), dim=1)
q = torch.softmax(torch.randn(32, 10), dim=1)
kl = torch.zeros(32)
for i in range(32):
    kl[i] = (p[i] * (p[i].log() - q[i].log())).sum()
# ---- vectorized ----
import torch

p = torch.softmax(torch.randn(32, 10), dim=1)
q = torch.softmax(torch.randn(32, 10), dim=1)
kl = (p * (p.log() - q.log())).sum(1)
