# kind: vectorizable
# family: gather
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: h
# tags: function-param
import torch

def embed(tokens, tok_emb, pos_emb):
    B, T = tokens.shape
    h = torch.zeros(B, T, tok_emb.shape[1])
    for b in range(B):
        for t in range(T):
            h[b, t] = tok_emb[tokens[b, t]] + pos_emb[t]
    return h

h = embed(torch.randint(0, 50, (2, 7)), torch.randn(50, 8), torch.randn(7, 8))
# ---- vectorized ----
import torch

tokens = torch.randint(0, 50, (2, 7))
tok_emb = torch.randn(50, 8)
pos_emb = torch.randn(7, 8)
h = tok_emb[tokens] + pos_emb
