# kind: must-stay-loop
# family: recurrence
# origin: a vanilla RNN unrolled over time, from a tutorial
# why: the hidden state of step t feeds step t through a non-linearity: a true recurrence
# tags: function-param
import torch


def rnn_forward(x, W_xh, W_hh, b):
    T, B, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0])
    outputs = []
    for t in range(T):
        h = torch.tanh(x[t] @ W_xh + h @ W_hh + b)
        outputs.append(h)
    return torch.stack(outputs)


hs = rnn_forward(torch.randn(50, 4, 8), torch.randn(8, 16) * 0.3, torch.randn(16, 16) * 0.3, torch.zeros(16))
