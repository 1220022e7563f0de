# kind: vectorizable
# family: item-accumulation
# origin: turning a list of 0-d loss tensors into a tensor through Python floats
# results: history
# tags: module-level list-of-tensors
import torch

losses = [torch.rand(()) for _ in range(200)]
history = torch.tensor([l.item() for l in losses])
# ---- vectorized ----
import torch

losses = [torch.rand(()) for _ in range(200)]
history = torch.stack(losses)
