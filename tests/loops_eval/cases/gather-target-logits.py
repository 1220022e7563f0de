# kind: vectorizable
# family: gather
# origin: picking each sample's target logit (margin losses)
# results: picked
# tags: module-level
import torch

logits = torch.randn(512, 100)
targets = torch.randint(0, 100, (512,))

picked = torch.empty(512)
for i in range(512):
    picked[i] = logits[i, targets[i]]
# ---- vectorized ----
import torch

logits = torch.randn(512, 100)
targets = torch.randint(0, 100, (512,))

picked = logits.gather(1, targets[:, None]).squeeze(1)
