# kind: vectorizable
# family: cat-accumulation
# origin: collecting predictions over evaluation batches (note: torch.tensor([]) is float, so the result is too)
# results: all_preds
# tags: module-level list-of-tensors
import torch

batches = [torch.randn(64, 10) for _ in range(20)]

all_preds = torch.tensor([])
for logits in batches:
    preds = logits.argmax(dim=1)
    all_preds = torch.cat([all_preds, preds])
# ---- vectorized ----
import torch

batches = [torch.randn(64, 10) for _ in range(20)]

all_preds = torch.cat([logits.argmax(dim=1) for logits in batches]).float()
