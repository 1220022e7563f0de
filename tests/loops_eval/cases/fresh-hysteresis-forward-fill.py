# kind: vectorizable
# family: scan
# origin: sensor / event-detection code: a Schmitt trigger that switches on above `high`, off below `low`, else keeps its state
# results: state
# tags: function-param near-miss
# note: the state at i is decided by the last sample at or before i outside [low, high]: a forward fill by cummax of indices
import torch


def schmitt_trigger(x, low, high):
    state = torch.zeros(len(x), dtype=torch.bool)
    on = False
    for i in range(len(x)):
        if x[i] > high:
            on = True
        elif x[i] < low:
            on = False
        state[i] = on
    return state


signal = torch.sin(torch.linspace(0, 12, 400)) + 0.3 * torch.randn(400)
state = schmitt_trigger(signal, -0.5, 0.5)
# ---- vectorized ----
import torch


def schmitt_trigger(x, low, high):
    n = len(x)
    decisive = (x > high) | (x < low)
    last = torch.where(decisive, torch.arange(n), -1).cummax(dim=0).values
    return torch.where(last >= 0, (x > high)[last.clamp(min=0)], False)


signal = torch.sin(torch.linspace(0, 12, 400)) + 0.3 * torch.randn(400)
state = schmitt_trigger(signal, -0.5, 0.5)
