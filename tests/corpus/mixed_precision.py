"""Mixed-precision training with autocast and GradScaler; falls back to bfloat16 autocast on CPU."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, padding=1)
        self.conv2 = nn.Conv2d(64, 128, 3, padding=1)
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)


def main(steps: int = 50) -> None:
    torch.manual_seed(0)
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    amp_dtype = torch.float16 if use_cuda else torch.bfloat16

    model = ConvNet().to(device).to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda", enabled=use_cuda)

    inputs = torch.randn(64, 3, 32, 32, device=device).contiguous(memory_format=torch.channels_last)
    targets = torch.randint(0, 10, (64,), device=device)

    if use_cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for step in range(steps):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.type, dtype=amp_dtype):
            logits = model(inputs)
            loss = F.cross_entropy(logits, targets)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    if use_cuda:
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    print(f"{steps} steps in {elapsed:.2f}s, final loss {loss.item():.4f}, scale {scaler.get_scale():.0f}")


if __name__ == "__main__":
    main()
