# kind: vectorizable
# family: item-accumulation
# origin: timm / vit-pytorch model constructors: stochastic depth decay rule
# results: dpr
# tags: corpus-style module-level
import torch

drop_path_rate = 0.1
depth = 12
dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]  # stochastic depth decay rule
# ---- vectorized ----
import torch

drop_path_rate = 0.1
depth = 12
dpr = torch.linspace(0, drop_path_rate, depth).tolist()
