# kind: must-stay-loop
# family: recurrence
# origin: written for stop 26 as users write it (probe set): Viterbi forward pass of a CRF tagger
# why: each step's scores are a max over the previous step's scores (a max-plus recurrence, no scan op)
# tags: function-param near-miss
import torch


def viterbi_scores(emissions, transitions):
    T = emissions.shape[0]
    score = emissions[0]
    history = []
    for t in range(1, T):
        best, idx = (score[:, None] + transitions).max(dim=0)
        score = best + emissions[t]
        history.append(idx)
    return score, history


score, history = viterbi_scores(torch.randn(20, 5), torch.randn(5, 5))
