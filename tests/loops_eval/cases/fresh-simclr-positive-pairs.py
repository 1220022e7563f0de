# kind: vectorizable
# family: gather
# origin: SimCLR / NT-Xent re-implementations: the similarity of each view with its partner view, B rows apart
# results: positives
# tags: function-param
import torch
import torch.nn.functional as F


def positive_similarities(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = z @ z.T / temperature
    n = z.shape[0]
    batch_size = n // 2
    positives = torch.stack([sim[i, (i + batch_size) % n] for i in range(n)])
    return positives


z1 = torch.randn(16, 32)
z2 = torch.randn(16, 32)
positives = positive_similarities(z1, z2)
# ---- vectorized ----
import torch
import torch.nn.functional as F


def positive_similarities(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = z @ z.T / temperature
    n = z.shape[0]
    batch_size = n // 2
    rows = torch.arange(n)
    return sim[rows, (rows + batch_size) % n]


z1 = torch.randn(16, 32)
z2 = torch.randn(16, 32)
positives = positive_similarities(z1, z2)
