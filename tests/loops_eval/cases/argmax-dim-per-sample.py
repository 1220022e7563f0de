# kind: vectorizable
# family: map
# origin: written for stop 24 as users write it (probe set, outside the test families)
# results: preds
# tags: function-param
import torch

def predict(logits):
    preds = torch.empty(logits.shape[0], dtype=torch.long)
    for n in range(logits.shape[0]):
        preds[n] = torch.argmax(logits[n])
    return preds

preds = predict(torch.randn(9, 4))
# ---- vectorized ----
import torch

preds = torch.randn(9, 4).argmax(dim=1)
