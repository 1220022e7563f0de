"""A custom Dataset of spectrogram-like arrays with numpy augmentations (time shift, frequency mask,
gaussian noise, mixup), seeded so that two runs see exactly the same augmented samples."""

import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

SEED = 2024


def seed_all(seed: int = SEED) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def worker_init(worker_id: int) -> None:
    base = torch.initial_seed() % 2 ** 32
    np.random.seed(base + worker_id)
    random.seed(base + worker_id)


class SpectrogramDataset(Dataset):
    def __init__(self, n: int = 256, n_mels: int = 64, frames: int = 128, augment: bool = True):
        self.data = np.random.randn(n, n_mels, frames).astype(np.float32)
        self.labels = np.random.randint(0, 4, size=n)
        self.augment = augment

    def __len__(self) -> int:
        return len(self.labels)

    def _time_shift(self, spec: np.ndarray) -> np.ndarray:
        shift = np.random.randint(-16, 17)
        return np.roll(spec, shift, axis=1)

    def _freq_mask(self, spec: np.ndarray, max_width: int = 8) -> np.ndarray:
        width = np.random.randint(0, max_width + 1)
        start = np.random.randint(0, spec.shape[0] - width + 1)
        spec = spec.copy()
        spec[start:start + width, :] = 0.0
        return spec

    def _noise(self, spec: np.ndarray) -> np.ndarray:
        return spec + np.random.normal(0.0, 0.05, size=spec.shape).astype(np.float32)

    def __getitem__(self, index: int):
        spec = self.data[index]
        if self.augment:
            spec = self._time_shift(spec)
            spec = self._freq_mask(spec)
            if random.random() < 0.5:
                spec = self._noise(spec)
        return torch.from_numpy(np.ascontiguousarray(spec)).unsqueeze(0), int(self.labels[index])


def mixup(x: torch.Tensor, y: torch.Tensor, num_classes: int = 4, alpha: float = 0.4):
    lam = float(np.random.beta(alpha, alpha))
    perm = torch.randperm(x.size(0))
    one_hot = torch.nn.functional.one_hot(y, num_classes).float()
    return lam * x + (1 - lam) * x[perm], lam * one_hot + (1 - lam) * one_hot[perm]


if __name__ == "__main__":
    seed_all()
    loader = DataLoader(SpectrogramDataset(), batch_size=16, shuffle=True, num_workers=2, worker_init_fn=worker_init)
    x, y = next(iter(loader))
    mixed_x, mixed_y = mixup(x, y)
    print(mixed_x.shape, mixed_y.sum(dim=1))
