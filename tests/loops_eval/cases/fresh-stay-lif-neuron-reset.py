# kind: must-stay-loop
# family: recurrence
# origin: spiking-neural-network tutorials: a leaky integrate-and-fire neuron driven by an input current
# why: the membrane potential is reset to zero after each spike, so every step depends on whether the previous steps fired; without the reset it would be a linear scan, with it no cumulative op gives the same spikes
# tags: function-param near-miss
import torch


def lif_neuron(current, beta=0.9, threshold=1.0):
    mem = torch.zeros(())
    spikes = torch.zeros_like(current)
    for t in range(len(current)):
        mem = beta * mem + current[t]
        if mem > threshold:
            spikes[t] = 1.0
            mem = torch.zeros(())
    return spikes


current = 0.3 + 0.2 * torch.randn(200)
spikes = lif_neuron(current)
