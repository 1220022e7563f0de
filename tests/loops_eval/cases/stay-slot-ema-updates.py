# kind: must-stay-loop
# family: recurrence
# origin: written for stop 26 as users write it (probe set): a per-class feature memory updated with momentum, sample by sample
# why: labels repeat, and each update of a slot reads the value the previous update of that slot wrote
# tags: module-level near-miss
import torch

memory = torch.zeros(5, 16)
feats = torch.randn(64, 16)
labels = torch.randint(0, 5, (64,))
for i in range(feats.shape[0]):
    memory[labels[i]] = 0.9 * memory[labels[i]] + 0.1 * feats[i]
