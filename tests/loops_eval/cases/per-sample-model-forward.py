# kind: vectorizable
# family: per-sample-layer
# origin: Q&A pattern "run the model on each sample" (a small MLP head applied row by row at inference)
# results: scores
# tags: module-level
import torch
import torch.nn as nn

head = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))
embeddings = torch.randn(256, 64)

scores = torch.zeros(256, 1)
with torch.no_grad():
    for i in range(embeddings.shape[0]):
        scores[i] = head(embeddings[i])
# ---- vectorized ----
import torch
import torch.nn as nn

head = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))
embeddings = torch.randn(256, 64)

with torch.no_grad():
    scores = head(embeddings)
