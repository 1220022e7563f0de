# kind: must-stay-loop
# family: training-loop
# origin: the usual training loop with a running loss from .item()
# why: each step updates the parameters the next step uses (an optimizer step per batch)
# tags: module-level
import torch
from torch.utils.data import DataLoader, TensorDataset

X = torch.randn(256, 10)
y = torch.randn(256, 1)
loader = DataLoader(TensorDataset(X, y), batch_size=32)
model = torch.nn.Linear(10, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)

running_loss = 0.0
for xb, yb in loader:
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(xb), yb)
    loss.backward()
    opt.step()
    running_loss += loss.item()
