"""Training with gradient accumulation: an effective batch of 256 from micro-batches of 32."""

import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

MICRO_BATCH = 32
ACCUMULATION_STEPS = 8


def make_loader(n: int = 4096, dim: int = 64, classes: int = 5) -> DataLoader:
    x = torch.randn(n, dim)
    y = torch.randint(0, classes, (n,))
    return DataLoader(TensorDataset(x, y), batch_size=MICRO_BATCH, shuffle=True, drop_last=True)


def warmup_cosine(step: int, total: int, warmup: int = 20) -> float:
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1 + math.cos(math.pi * progress))


def main() -> None:
    torch.manual_seed(3)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 5)).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = make_loader()
    total_updates = 3 * len(loader) // ACCUMULATION_STEPS
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: warmup_cosine(s, total_updates))

    update = 0
    for epoch in range(3):
        optimizer.zero_grad(set_to_none=True)
        running = 0.0
        for i, (x, y) in enumerate(loader):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            loss = criterion(model(x), y) / ACCUMULATION_STEPS
            loss.backward()
            running += loss.item()
            if (i + 1) % ACCUMULATION_STEPS == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                update += 1
                if update % 10 == 0:
                    print(f"epoch {epoch} update {update}: loss {running:.4f} lr {scheduler.get_last_lr()[0]:.2e}")
                running = 0.0


if __name__ == "__main__":
    main()
