"""A DistributedDataParallel launcher: one process per GPU (or a few CPU processes with gloo).

Run with `torchrun --nproc_per_node=N ddp_launcher.py`; nothing distributed happens on import.
"""

import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def setup() -> tuple[int, int, torch.device]:
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    dist.init_process_group(backend=backend, rank=rank, world_size=world_size)
    return rank, world_size, device


def seed_everything(seed: int, rank: int) -> None:
    random.seed(seed + rank)
    np.random.seed(seed + rank)
    torch.manual_seed(seed + rank)


def build_model(device: torch.device) -> nn.Module:
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
    model.to(device)
    return model


def train(rank: int, world_size: int, device: torch.device, epochs: int = 2) -> None:
    seed_everything(0, rank)
    features = torch.randn(1024, 32)
    labels = (features.sum(dim=1) > 0).long()
    dataset = TensorDataset(features, labels)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)

    model = build_model(device)
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(ddp_model(x), y)
            loss.backward()
            optimizer.step()
        summed = loss.detach().clone()
        dist.all_reduce(summed, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch}: mean last-batch loss {summed.item() / world_size:.4f}")

    if rank == 0:
        torch.save(ddp_model.module.state_dict(), "ddp_model.pt")
    dist.barrier()


def main() -> None:
    rank, world_size, device = setup()
    try:
        train(rank, world_size, device)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
