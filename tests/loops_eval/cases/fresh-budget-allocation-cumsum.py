# kind: vectorizable
# family: scan
# origin: batching / scheduling code: requests served in order until a token budget runs out, the last one partially
# results: alloc left
# tags: function-param near-miss
# note: looks like sequential state, but what is left before request i is budget - (sum of earlier requests), clamped
import torch


def allocate(requests, budget):
    alloc = torch.zeros_like(requests)
    remaining = budget
    for i in range(len(requests)):
        take = min(requests[i].item(), remaining)
        alloc[i] = take
        remaining -= take
    return alloc, remaining


requests = torch.randint(1, 20, (40,))
alloc, left = allocate(requests, 150)
# ---- vectorized ----
import torch


def allocate(requests, budget):
    before = torch.cumsum(requests, dim=0) - requests
    alloc = (budget - before).clamp(min=0).minimum(requests)
    return alloc, budget - int(alloc.sum())


requests = torch.randint(1, 20, (40,))
alloc, left = allocate(requests, 150)
