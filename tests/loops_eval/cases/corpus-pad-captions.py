# kind: vectorizable
# family: ragged-mask
# origin: pytorch-tutorial image_captioning data_loader.py collate_fn: padding captions
# results: targets
# tags: corpus-style module-level list-of-tensors
import torch

captions = [torch.randint(1, 1000, (n,)) for n in (17, 15, 15, 12, 9, 9, 8, 5)]

# Merge captions (from tuple of 1D tensor to 2D tensor).
lengths = [len(cap) for cap in captions]
targets = torch.zeros(len(captions), max(lengths)).long()
for i, cap in enumerate(captions):
    end = lengths[i]
    targets[i, :end] = cap[:end]
# ---- vectorized ----
import torch
from torch.nn.utils.rnn import pad_sequence

captions = [torch.randint(1, 1000, (n,)) for n in (17, 15, 15, 12, 9, 9, 8, 5)]

lengths = [len(cap) for cap in captions]
targets = pad_sequence(captions, batch_first=True)
