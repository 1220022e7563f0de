# kind: vectorizable
# family: contraction
# origin: knowledge-graph / dialogue-ranking models: a bilinear score x^T W y for each (context, response) pair
# results: scores
# tags: function-param
import torch


def bilinear_scores(ctx, resp, W):
    scores = torch.zeros(ctx.size(0))
    for i in range(ctx.size(0)):
        scores[i] = ctx[i] @ W @ resp[i]
    return scores


ctx = torch.randn(32, 16)
resp = torch.randn(32, 24)
W = torch.randn(16, 24)
scores = bilinear_scores(ctx, resp, W)
# ---- vectorized ----
import torch


def bilinear_scores(ctx, resp, W):
    return torch.einsum("bi,ij,bj->b", ctx, W, resp)


ctx = torch.randn(32, 16)
resp = torch.randn(32, 24)
W = torch.randn(16, 24)
scores = bilinear_scores(ctx, resp, W)
