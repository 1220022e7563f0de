# kind: must-stay-loop
# family: side-effect
# origin: written for stop 25 as users write it (probe set): epsilon-greedy actions for a batch of states
# why: one random.random() draw per state, in order; a batched draw uses another stream
# tags: module-level
import random
import torch

q_values = torch.randn(32, 4)
epsilon = 0.1
actions = torch.zeros(32, dtype=torch.long)
for i in range(32):
    if random.random() < epsilon:
        actions[i] = random.randrange(4)
    else:
        actions[i] = q_values[i].argmax()
