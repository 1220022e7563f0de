# kind: must-stay-loop
# family: recurrence
# origin: one Gauss-Seidel sweep of a 1-d Laplace solver (updates in place)
# why: u[i] reads u[i - 1] already updated in this sweep; the Jacobi step (a new array) is vectorizable, this is not
# tags: module-level near-miss
import torch

u = torch.rand(1000)
for i in range(1, len(u) - 1):
    u[i] = 0.5 * (u[i - 1] + u[i + 1])
