# kind: vectorizable
# family: contraction
# origin: written for stop 26 as users write it (second probe): each point cloud rotated by its own matrix
# results: rotated
# tags: module-level
import torch

points = torch.randn(16, 100, 3)
R = torch.linalg.qr(torch.randn(16, 3, 3)).Q
rotated = torch.empty_like(points)
for b in range(points.shape[0]):
    rotated[b] = points[b] @ R[b]
# ---- vectorized ----
import torch

points = torch.randn(16, 100, 3)
R = torch.linalg.qr(torch.randn(16, 3, 3)).Q
rotated = torch.bmm(points, R)
