# kind: vectorizable
# family: ragged-mask
# origin: hand-written multi-head attention in a research repo: padded keys masked per sequence before the softmax
# results: attn
# tags: function-param corpus-style
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x, lengths):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / (C // self.heads) ** 0.5
        # keys past the end of each sequence must get no weight
        for b in range(B):
            scores[b, :, :, lengths[b]:] = float("-inf")
        return scores.softmax(dim=-1)


layer = SelfAttention(32, 4)
x = torch.randn(5, 12, 32)
lengths = torch.tensor([12, 7, 3, 10, 1])
with torch.no_grad():
    attn = layer(x, lengths)
# ---- vectorized ----
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x, lengths):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / (C // self.heads) ** 0.5
        pad = torch.arange(T) >= lengths[:, None]
        scores = scores.masked_fill(pad[:, None, None, :], float("-inf"))
        return scores.softmax(dim=-1)


layer = SelfAttention(32, 4)
x = torch.randn(5, 12, 32)
lengths = torch.tensor([12, 7, 3, 10, 1])
with torch.no_grad():
    attn = layer(x, lengths)
