# kind: vectorizable
# family: gather
# origin: nanoGPT train.py:124 get_batch: block_size windows of a token array at random offsets (np.memmap there)
# results: x y
# tags: corpus-style module-level
import numpy as np
import torch

block_size, batch_size = 64, 12
data = (np.arange(20000, dtype=np.int64) * 7919 % 50257).astype(np.uint16)  # the tokens of train.bin

ix = torch.randint(len(data) - block_size, (batch_size,))
x = torch.stack([torch.from_numpy((data[i:i+block_size]).astype(np.int64)) for i in ix])
y = torch.stack([torch.from_numpy((data[i+1:i+1+block_size]).astype(np.int64)) for i in ix])
# ---- vectorized ----
import numpy as np
import torch

block_size, batch_size = 64, 12
data = (np.arange(20000, dtype=np.int64) * 7919 % 50257).astype(np.uint16)

ix = torch.randint(len(data) - block_size, (batch_size,))
offsets = ix.numpy()[:, None]
x = torch.from_numpy(data[offsets + np.arange(block_size)].astype(np.int64))
y = torch.from_numpy(data[offsets + np.arange(1, block_size + 1)].astype(np.int64))
