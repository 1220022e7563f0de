# kind: must-stay-loop
# family: side-effect
# origin: adding per-sample noise with a fresh draw each iteration
# why: torch.randn(()) per element draws a different sequence of numbers than one torch.randn(n): the same distribution, not the same values
# tags: module-level near-miss
import torch

x = torch.randn(256)
sigma = torch.rand(256)

noisy = torch.empty(256)
for i in range(256):
    noisy[i] = x[i] + sigma[i] * torch.randn(())
