# kind: vectorizable
# family: column-indexing
# origin: written for stop 26 as users write it (second probe): a gate computed for every time step from a weight matrix, a column at a time
# results: gates
# tags: function-param
import torch


def step_gates(W, x):
    gates = torch.zeros(W.shape[0], x.shape[1])
    for t in range(x.shape[1]):
        gates[:, t] = torch.sigmoid(W @ x[:, t])
    return gates


gates = step_gates(torch.randn(8, 5), torch.randn(5, 30))
# ---- vectorized ----
import torch


def step_gates(W, x):
    return torch.sigmoid(W @ x)


gates = step_gates(torch.randn(8, 5), torch.randn(5, 30))
