# kind: must-stay-loop
# family: io
# origin: beginner evaluation scripts: the test set walked in mini-batches, each batch's loss printed as it goes
# why: the loop exists to print one line per batch (I/O); the batches are already whole-tensor work
# tags: module-level chunking
import torch
import torch.nn as nn

model = nn.Linear(20, 3)
criterion = nn.CrossEntropyLoss()
X = torch.randn(100, 20)
y = torch.randint(0, 3, (100,))
batch_size = 25
with torch.no_grad():
    for start in range(0, len(X), batch_size):
        out = model(X[start:start + batch_size])
        loss = criterion(out, y[start:start + batch_size])
        print(f"batch {start // batch_size}: loss {loss.item():.4f}")
