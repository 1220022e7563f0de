# kind: must-stay-loop
# family: recurrence
# origin: written for stop 25 as users write it (probe set): a step size halved whenever the loss goes up
# why: the step size at t depends on all the comparisons before it, and the state x is fed back
# tags: module-level
import torch

target = torch.randn(10)
x = torch.zeros(10)
lr = 1.0
prev = float("inf")
for step in range(50):
    grad = 2 * (x - target)
    x = x - lr * grad
    loss = ((x - target) ** 2).sum().item()
    if loss > prev:
        lr *= 0.5
    prev = loss
