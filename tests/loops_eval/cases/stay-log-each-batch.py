# kind: must-stay-loop
# family: io
# origin: written for stop 24 as users write it (probe set, outside the test families)
# tags: function-param
# why: every row's loss is printed as it is computed (I/O per element)
import torch

def report(losses):
    for step, loss in enumerate(losses):
        print(f"step {step}: loss {loss.item():.4f}")

report(torch.rand(5))
