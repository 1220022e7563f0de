# kind: vectorizable
# family: item-accumulation
# origin: recommender-system eval code: discounted cumulative gain of the top-k ranked items, summed with .item()
# results: dcg ndcg
# tags: function-param
import math

import torch


def dcg_at_k(relevance, k):
    dcg = 0.0
    for i in range(k):
        dcg += (2 ** relevance[i].item() - 1) / math.log2(i + 2)
    return dcg


scores = torch.randn(50)
relevance = torch.randint(0, 4, (50,))
ranked = relevance[scores.argsort(descending=True)]
ideal = relevance.sort(descending=True).values
dcg = dcg_at_k(ranked, 10)
ndcg = dcg / dcg_at_k(ideal, 10)
# ---- vectorized ----
import math

import torch


def dcg_at_k(relevance, k):
    gains = 2.0 ** relevance[:k].double() - 1
    discounts = torch.log2(torch.arange(k, dtype=torch.float64) + 2)
    return (gains / discounts).sum().item()


scores = torch.randn(50)
relevance = torch.randint(0, 4, (50,))
ranked = relevance[scores.argsort(descending=True)]
ideal = relevance.sort(descending=True).values
dcg = dcg_at_k(ranked, 10)
ndcg = dcg / dcg_at_k(ideal, 10)
