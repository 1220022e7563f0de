# kind: must-stay-loop
# family: side-effect
# origin: vit-pytorch vit_with_decorr.py: an orthogonal init per subspace projection
# why: nn.init.orthogonal_ works on one matrix in place and draws random numbers per call
# tags: corpus-style module-level
import torch
from torch import nn

num_subspaces, dim, dim_subspace = 4, 32, 8
proj = torch.empty(num_subspaces, dim, dim_subspace)
for i in range(num_subspaces):
    nn.init.orthogonal_(proj[i])
