# kind: vectorizable
# family: map
# origin: written for stop 25 as users write it (probe set): attention mask from padded token ids
# results: attn_mask
# tags: module-level nested
import torch

PAD = 0
tokens = torch.randint(0, 50, (8, 20))
tokens[:, 15:] = PAD

attn_mask = torch.ones(8, 20)
for b in range(tokens.shape[0]):
    for t in range(tokens.shape[1]):
        if tokens[b, t] == PAD:
            attn_mask[b, t] = 0
# ---- vectorized ----
import torch

PAD = 0
tokens = torch.randint(0, 50, (8, 20))
tokens[:, 15:] = PAD

attn_mask = (tokens != PAD).float()
