# kind: vectorizable
# family: item-accumulation
# origin: written for stop 26 as users write it (second probe): the rank of the true label among each sample's scores, as Python ints (retrieval eval)
# results: ranks
# tags: module-level
import torch

scores = torch.randn(50, 20)
labels = torch.randint(0, 20, (50,))
ranks = [(scores[i] > scores[i, labels[i]]).sum().item() for i in range(scores.shape[0])]
# ---- vectorized ----
import torch

scores = torch.randn(50, 20)
labels = torch.randint(0, 20, (50,))
ranks = (scores > scores.gather(1, labels[:, None])).sum(1).tolist()
