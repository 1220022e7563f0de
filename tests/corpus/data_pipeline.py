"""A data-loading pipeline: sharded token files, a map-style dataset, a collate function with padding,
per-worker seeding, and a prefetching wrapper that copies batches to the device ahead of time."""

import os
import random
from pathlib import Path

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset, get_worker_info

PAD_ID = 0


def seed_worker(worker_id: int) -> None:
    # Each worker gets its own, reproducible, numpy and random streams.
    worker_seed = torch.initial_seed() % 2 ** 32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


class ShardedTokenDataset(Dataset):
    def __init__(self, root: str, max_len: int = 256, drop_prob: float = 0.1):
        self.files = sorted(Path(root).glob("*.npy")) if os.path.isdir(root) else []
        self.max_len = max_len
        self.drop_prob = drop_prob
        self.lengths = [len(np.load(f, mmap_mode="r")) for f in self.files]
        self.offsets = np.cumsum([0] + self.lengths)

    def __len__(self):
        return int(self.offsets[-1])

    def _locate(self, index: int):
        shard = int(np.searchsorted(self.offsets, index, side="right") - 1)
        return shard, index - int(self.offsets[shard])

    def __getitem__(self, index: int):
        shard, row = self._locate(index)
        tokens = np.load(self.files[shard], mmap_mode="r")[row][: self.max_len]
        tokens = np.asarray(tokens, dtype=np.int64)
        # token dropout as augmentation
        keep = np.random.rand(len(tokens)) >= self.drop_prob
        keep[0] = True
        return torch.from_numpy(tokens[keep])


def collate(batch):
    lengths = torch.tensor([len(seq) for seq in batch], dtype=torch.long)
    padded = pad_sequence(batch, batch_first=True, padding_value=PAD_ID)
    mask = padded.ne(PAD_ID)
    return {"input_ids": padded, "attention_mask": mask, "lengths": lengths}


class DevicePrefetcher:
    """Copies the next batch to the device while the current one is being used."""

    def __init__(self, loader, device: torch.device):
        self.loader = loader
        self.device = device

    def _move(self, batch):
        return {key: value.to(self.device, non_blocking=True) for key, value in batch.items()}

    def __iter__(self):
        iterator = iter(self.loader)
        try:
            upcoming = self._move(next(iterator))
        except StopIteration:
            return
        for batch in iterator:
            current, upcoming = upcoming, self._move(batch)
            yield current
        yield upcoming


def describe_worker() -> str:
    info = get_worker_info()
    return "main process" if info is None else f"worker {info.id} of {info.num_workers}"


def build_loader(root: str, batch_size: int = 32, workers: int = 2, seed: int = 0) -> DataLoader:
    generator = torch.Generator()
    generator.manual_seed(seed)
    return DataLoader(
        ShardedTokenDataset(root),
        batch_size=batch_size,
        shuffle=True,
        num_workers=workers,
        collate_fn=collate,
        worker_init_fn=seed_worker,
        generator=generator,
        pin_memory=torch.cuda.is_available(),
        persistent_workers=workers > 0,
    )


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = build_loader("data/shards")
    for step, batch in enumerate(DevicePrefetcher(loader, device)):
        print(step, batch["input_ids"].shape, describe_worker())
        if step == 3:
            break
