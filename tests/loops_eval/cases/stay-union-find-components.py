# kind: must-stay-loop
# family: python-data
# origin: written for stop 25 as users write it (probe set): connected components of a graph with union-find
# why: each union rewrites the parent table the later finds walk: sequential, pointer-chasing
# tags: module-level
import torch

n = 30
edges = torch.randint(0, n, (25, 2))
parent = list(range(n))


def find(u):
    while parent[u] != u:
        parent[u] = parent[parent[u]]
        u = parent[u]
    return u


for u, v in edges.tolist():
    ru, rv = find(u), find(v)
    if ru != rv:
        parent[ru] = rv
components = len({find(u) for u in range(n)})
