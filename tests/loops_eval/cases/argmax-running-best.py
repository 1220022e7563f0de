# kind: vectorizable
# family: running-max
# origin: picking the best checkpoint from validation scores
# results: best_idx best_score
# tags: module-level
import torch

val_scores = torch.rand(50)

best_score = -float("inf")
best_idx = -1
for i, s in enumerate(val_scores):
    if s > best_score:
        best_score = s
        best_idx = i
# ---- vectorized ----
import torch

val_scores = torch.rand(50)

best_idx = int(val_scores.argmax())
best_score = val_scores[best_idx]
