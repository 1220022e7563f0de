"""Train a small MLP classifier on synthetic tabular data.

Run it:  python examples/training_loop.py
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

in_features = 20
hidden = 64
num_classes = 3
num_epochs = 3
batch_size = 32


class MLP(nn.Module):
    def __init__(self, in_features, hidden, num_classes):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, num_classes)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.dropout(F.relu(self.fc2(x)))
        return self.head(x)


def make_data(num_samples=600):
    features = np.random.randn(num_samples, in_features)
    features = (features - features.mean(axis=0)) / features.std(axis=0)
    labels = (features[:, 0] + features[:, 1] > 0).astype(np.int64)
    labels = labels + (features[:, 2] > 1.0).astype(np.int64)
    X = torch.from_numpy(features)
    y = torch.from_numpy(labels)
    return X, y


X, y = make_data()
split = 480
train_ds = TensorDataset(X[:split], y[:split])
loader = DataLoader(train_ds, batch_size=batch_size, shuffle=True)
X_val, y_val = X[split:], y[split:]

model = MLP(in_features, hidden, num_classes)
model.to(device)

sample = torch.randn(2, in_features).to(device)
print("output shape:", tuple(model(sample).shape))

class_weights = torch.FloatTensor([1.0, 1.0, 2.0])
if torch.cuda.is_available():
    class_weights = class_weights.cuda()
criterion = nn.CrossEntropyLoss(weight=class_weights)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

history = torch.zeros(num_epochs, 2)


def evaluate(model, X_val, y_val):
    model.eval()
    with torch.no_grad():
        inputs = X_val.to(device, dtype=torch.float32)
        targets = y_val.to(device)
        logits = model(inputs)
        val_loss = F.cross_entropy(logits, targets).item()
        accuracy = (logits.argmax(dim=1) == targets).float().mean().item()
    model.train()
    return val_loss, accuracy


for epoch in range(num_epochs):
    model.train()
    running_loss = 0.0
    for xb, yb in loader:
        # the features arrive as float64, so each batch is cast on the way in
        xb = xb.to(device, dtype=torch.float32)
        yb = yb.to(device)

        optimizer.zero_grad()
        logits = model(xb)
        loss = criterion(logits, yb)
        loss.backward()
        optimizer.step()

        running_loss += loss.item()

    train_loss = running_loss / len(loader)
    val_loss, accuracy = evaluate(model, X_val, y_val)
    history[epoch, 0] = train_loss
    history[epoch, 1] = accuracy
    print(f"epoch {epoch + 1}: train loss {train_loss:.4f}  val loss {val_loss:.4f}  val acc {accuracy:.3f}")

try:
    per_metric = history.transpose(0, 1).view(-1)
except RuntimeError as err:
    print(f"view failed: {err}")
    per_metric = history.transpose(0, 1).reshape(-1)
print("losses then accuracies:", [round(v, 3) for v in per_metric.tolist()])
