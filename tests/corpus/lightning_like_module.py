"""A Lightning-style module (training_step / validation_step / configure_optimizers) with a tiny
hand-written trainer, so the structure can be used without the lightning package."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split


class LitRegressor(nn.Module):
    def __init__(self, in_dim: int = 8, hidden: int = 32, lr: float = 1e-2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.lr = lr
        self.logged: dict[str, list[float]] = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)

    def log(self, name: str, value: torch.Tensor) -> None:
        self.logged.setdefault(name, []).append(value.detach().item())

    def training_step(self, batch, batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx: int) -> None:
        x, y = batch
        self.log("val_loss", F.mse_loss(self(x), y))

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
        return optimizer, scheduler


class MiniTrainer:
    def __init__(self, max_epochs: int = 10, accelerator: str = "auto"):
        self.max_epochs = max_epochs
        if accelerator == "auto":
            accelerator = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(accelerator)

    def _to_device(self, batch):
        return [t.to(self.device) for t in batch]

    def fit(self, module: LitRegressor, train_loader: DataLoader, val_loader: DataLoader) -> None:
        module.to(self.device)
        optimizer, scheduler = module.configure_optimizers()
        for epoch in range(self.max_epochs):
            module.train()
            for batch_idx, batch in enumerate(train_loader):
                loss = module.training_step(self._to_device(batch), batch_idx)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            scheduler.step()
            module.eval()
            with torch.no_grad():
                for batch_idx, batch in enumerate(val_loader):
                    module.validation_step(self._to_device(batch), batch_idx)
            print(f"epoch {epoch}: val_loss {module.logged['val_loss'][-1]:.4f}")


def make_data(n: int = 2000, in_dim: int = 8):
    generator = torch.Generator().manual_seed(42)
    x = torch.randn(n, in_dim, generator=generator)
    w = torch.randn(in_dim, generator=generator)
    y = torch.sin(x @ w) + 0.05 * torch.randn(n, generator=generator)
    train_set, val_set = random_split(TensorDataset(x, y), [int(0.8 * n), n - int(0.8 * n)], generator=generator)
    return DataLoader(train_set, batch_size=64, shuffle=True, generator=generator), DataLoader(val_set, batch_size=256)


if __name__ == "__main__":
    torch.manual_seed(42)
    train_loader, val_loader = make_data()
    MiniTrainer(max_epochs=10).fit(LitRegressor(), train_loader, val_loader)
