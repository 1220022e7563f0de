"""Fit a polynomial regression on the CPU and time each phase with the wall clock.

Everything runs on the CPU, where PyTorch ops are synchronous, so perf_counter is accurate.
"""

import random
import time
from time import perf_counter

import numpy as np
import torch


def make_data(n: int = 10_000, degree: int = 3, noise: float = 0.1):
    x = torch.linspace(-2, 2, n).unsqueeze(1)
    coeffs = torch.tensor([0.5, -1.0, 2.0, 0.3])
    features = torch.cat([x ** k for k in range(degree + 1)], dim=1)
    y = features @ coeffs + noise * torch.randn(n)
    return features, y


def fit_closed_form(features: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.linalg.lstsq(features, y.unsqueeze(1)).solution.squeeze(1)


def fit_sgd(features: torch.Tensor, y: torch.Tensor, steps: int = 500, lr: float = 0.05) -> torch.Tensor:
    w = torch.zeros(features.shape[1], requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=lr)
    order = list(range(features.shape[0]))
    for _ in range(steps):
        batch = random.sample(order, 256)
        pred = features[batch] @ w
        loss = ((pred - y[batch]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return w.detach()


def main() -> None:
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)

    t0 = time.perf_counter()
    features, y = make_data()
    t1 = time.perf_counter()
    exact = fit_closed_form(features, y)
    t2 = time.perf_counter()
    approx = fit_sgd(features, y)
    t3 = perf_counter()

    jitter = np.random.uniform(-0.01, 0.01, size=4)
    print(f"data {t1 - t0:.3f}s, lstsq {t2 - t1:.3f}s, sgd {t3 - t2:.3f}s")
    print("exact ", [round(v, 3) for v in exact.tolist()])
    print("sgd   ", [round(v, 3) for v in approx.tolist()])
    print("jitter", jitter.round(4))


if __name__ == "__main__":
    main()
