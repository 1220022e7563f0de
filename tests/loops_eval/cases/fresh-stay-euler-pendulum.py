# kind: must-stay-loop
# family: recurrence
# origin: physics-simulation / neural-ODE tutorials: a pendulum integrated with semi-implicit Euler steps, trajectory recorded
# why: each step applies sin() to the angle produced by the previous step; a nonlinear recurrence has no scan
# tags: module-level multi-statement
import torch

dt, g, length = 0.01, 9.81, 1.0
n_steps = 500
theta = torch.tensor(1.0)
omega = torch.tensor(0.0)
trajectory = torch.zeros(n_steps, 2)
for t in range(n_steps):
    alpha = -(g / length) * torch.sin(theta)
    omega = omega + dt * alpha
    theta = theta + dt * omega
    trajectory[t, 0] = theta
    trajectory[t, 1] = omega
