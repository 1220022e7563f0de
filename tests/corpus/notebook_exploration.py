# %% [markdown]
# # Exploring tensors, broadcasting and a tiny model
# A notebook-style script (VS Code / Jupytext cells). The last expression of a cell is displayed.

# %%
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# %%
x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
x

# %%
x.t().contiguous().view(-1)

# %%
col_means = x.mean(dim=0, keepdim=True)
centered = x - col_means
centered.std(dim=0)

# %%
arr = np.random.rand(3, 4).astype(np.float32)
t = torch.from_numpy(arr)
t.dtype, t.shape

# %%
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
with torch.no_grad():
    out = model(x.to(device))
out.shape

# %%
sum(p.numel() for p in model.parameters())

# %%
probs = out.softmax(dim=-1).cpu().numpy()
probs.round(3)
