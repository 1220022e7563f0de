# kind: vectorizable
# family: ragged-mask
# origin: timm data/naflex_dataset.py:139 NaFlexCollator: variable numbers of patches padded into one batch
# results: patches patch_coord patch_valid
# tags: corpus-style module-level list-of-tensors multi-statement
import torch

counts = (49, 36, 64, 25)
patch_dicts = [{"patches": torch.randn(n, 48), "patch_coord": torch.randint(0, 8, (n, 2)),
                "patch_valid": torch.ones(n, dtype=torch.bool)} for n in counts]
batch_size = len(patch_dicts)
max_patches = max(d["patches"].shape[0] for d in patch_dicts)
patch_dim = patch_dicts[0]["patches"].shape[1]
patches = torch.zeros((batch_size, max_patches, patch_dim), dtype=torch.float32)

# Prepare other tensors
patch_coord = torch.zeros((batch_size, max_patches, 2), dtype=torch.int64)  # [B, N, 2] for (y, x)
patch_valid = torch.zeros((batch_size, max_patches), dtype=torch.bool)

# Fill in the tensors
for i, patch_dict in enumerate(patch_dicts):
    num_patches = min(patch_dict['patches'].shape[0], max_patches)

    patches[i, :num_patches] = patch_dict['patches'][:num_patches]
    patch_coord[i, :num_patches] = patch_dict['patch_coord'][:num_patches]
    patch_valid[i, :num_patches] = patch_dict['patch_valid'][:num_patches]
# ---- vectorized ----
import torch
from torch.nn.utils.rnn import pad_sequence

counts = (49, 36, 64, 25)
patch_dicts = [{"patches": torch.randn(n, 48), "patch_coord": torch.randint(0, 8, (n, 2)),
                "patch_valid": torch.ones(n, dtype=torch.bool)} for n in counts]
patches = pad_sequence([d["patches"] for d in patch_dicts], batch_first=True)
patch_coord = pad_sequence([d["patch_coord"] for d in patch_dicts], batch_first=True)
patch_valid = pad_sequence([d["patch_valid"] for d in patch_dicts], batch_first=True)
