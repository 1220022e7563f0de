"""Sequence-to-sequence GRU with attention and teacher forcing, trained to reverse digit strings."""

import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SOS, EOS, PAD = 10, 11, 12
VOCAB = 13


class Encoder(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden, padding_idx=PAD)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * hidden, hidden)

    def forward(self, src):
        outputs, h = self.rnn(self.embed(src))
        h = torch.tanh(self.bridge(torch.cat([h[0], h[1]], dim=-1)))
        return outputs, h.unsqueeze(0)


class Attention(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.query = nn.Linear(hidden, 2 * hidden, bias=False)

    def forward(self, h, encoder_outputs, src_mask):
        scores = torch.bmm(encoder_outputs, self.query(h[-1]).unsqueeze(2)).squeeze(2)
        scores = scores.masked_fill(~src_mask, float("-inf"))
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights.unsqueeze(1), encoder_outputs).squeeze(1)


class Decoder(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden, padding_idx=PAD)
        self.attention = Attention(hidden)
        self.rnn = nn.GRU(3 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, VOCAB)

    def forward(self, token, h, encoder_outputs, src_mask):
        context = self.attention(h, encoder_outputs, src_mask)
        rnn_in = torch.cat([self.embed(token), context], dim=-1).unsqueeze(1)
        output, h = self.rnn(rnn_in, h)
        return self.out(output.squeeze(1)), h


class Seq2Seq(nn.Module):
    def __init__(self, hidden: int = 128):
        super().__init__()
        self.encoder = Encoder(hidden)
        self.decoder = Decoder(hidden)

    def forward(self, src, tgt, teacher_forcing: float = 0.5):
        encoder_outputs, h = self.encoder(src)
        src_mask = src.ne(PAD)
        token = tgt[:, 0]
        logits = []
        for t in range(1, tgt.size(1)):
            step_logits, h = self.decoder(token, h, encoder_outputs, src_mask)
            logits.append(step_logits)
            use_teacher = random.random() < teacher_forcing
            token = tgt[:, t] if use_teacher else step_logits.argmax(-1)
        return torch.stack(logits, dim=1)


def make_batch(batch_size: int, device: torch.device, max_len: int = 8):
    srcs, tgts = [], []
    for _ in range(batch_size):
        length = random.randint(3, max_len)
        digits = np.random.randint(0, 10, size=length).tolist()
        srcs.append(digits + [EOS] + [PAD] * (max_len - length))
        tgts.append([SOS] + digits[::-1] + [EOS] + [PAD] * (max_len - length))
    src = torch.tensor(srcs, dtype=torch.long, device=device)
    tgt = torch.tensor(tgts, dtype=torch.long, device=device)
    return src, tgt


def main(seed: int = 7, steps: int = 300):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Seq2Seq().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(steps):
        src, tgt = make_batch(64, device)
        logits = model(src, tgt, teacher_forcing=max(0.0, 1.0 - step / steps))
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1), ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 100 == 0:
            print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
