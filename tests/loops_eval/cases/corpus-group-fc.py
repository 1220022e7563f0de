# kind: vectorizable
# family: contraction
# origin: timm ml_decoder.py "group FC": one small matmul per query slot
# results: out_extrap
# tags: corpus-style module-level
import torch

bs, embed_len_decoder, hidden, duplicate_factor = 8, 20, 64, 5
h = torch.randn(bs, embed_len_decoder, hidden)
duplicate_pooling = torch.randn(embed_len_decoder, hidden, duplicate_factor)

out_extrap = torch.zeros(h.shape[0], h.shape[1], duplicate_factor, device=h.device, dtype=h.dtype)
for i in range(embed_len_decoder):  # group FC
    h_i = h[:, i, :]
    w_i = duplicate_pooling[i, :, :]
    out_extrap[:, i, :] = torch.matmul(h_i, w_i)
# ---- vectorized ----
import torch

bs, embed_len_decoder, hidden, duplicate_factor = 8, 20, 64, 5
h = torch.randn(bs, embed_len_decoder, hidden)
duplicate_pooling = torch.randn(embed_len_decoder, hidden, duplicate_factor)

out_extrap = torch.einsum("bih,ihd->bid", h, duplicate_pooling)
