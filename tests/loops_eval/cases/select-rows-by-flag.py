# kind: vectorizable
# family: map
# origin: written for stop 26 as users write it (probe set): keep the teacher's row where the flag is set, the student's otherwise
# results: mixed
# tags: module-level
import torch

teacher = torch.randn(32, 10)
student = torch.randn(32, 10)
use_teacher = torch.rand(32) < 0.5
mixed = torch.empty(32, 10)
for i in range(32):
    mixed[i] = teacher[i] if use_teacher[i] else student[i]
# ---- vectorized ----
import torch

teacher = torch.randn(32, 10)
student = torch.randn(32, 10)
use_teacher = torch.rand(32) < 0.5
mixed = torch.where(use_teacher[:, None], teacher, student)
