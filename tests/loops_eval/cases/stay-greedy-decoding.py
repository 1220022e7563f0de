# kind: must-stay-loop
# family: recurrence
# origin: greedy autoregressive decoding with torch.cat (looks like a cat accumulation)
# why: each step's input is the previous step's output; the cat cannot be hoisted
# tags: function-param near-miss
import torch


def greedy_decode(emb, W_out, start, steps):
    tokens = torch.tensor([start])
    for _ in range(steps):
        h = emb[tokens].mean(dim=0)
        next_token = (h @ W_out).argmax()
        tokens = torch.cat([tokens, next_token[None]])
    return tokens


tokens = greedy_decode(torch.randn(50, 16), torch.randn(16, 50), 0, 20)
