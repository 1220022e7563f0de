# kind: vectorizable
# family: shifted-indexing
# origin: one Jacobi relaxation step (reads the old array, writes a new one)
# results: u_new
# tags: module-level near-miss
import torch

u = torch.rand(1000)

u_new = u.clone()
for i in range(1, len(u) - 1):
    u_new[i] = 0.5 * (u[i - 1] + u[i + 1])
# ---- vectorized ----
import torch

u = torch.rand(1000)

u_new = u.clone()
u_new[1:-1] = 0.5 * (u[:-2] + u[2:])
