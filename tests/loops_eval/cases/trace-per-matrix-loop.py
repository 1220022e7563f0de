# kind: vectorizable
# family: diagonal-indexing
# origin: written for stop 26 as users write it (probe set): trace of each covariance matrix in a batch (an indexed loop)
# results: traces
# tags: module-level
import torch

covs = torch.randn(16, 6, 6)
covs = covs @ covs.transpose(1, 2)
traces = torch.zeros(16)
for k in range(covs.shape[0]):
    traces[k] = torch.trace(covs[k])
# ---- vectorized ----
import torch

covs = torch.randn(16, 6, 6)
covs = covs @ covs.transpose(1, 2)
traces = covs.diagonal(dim1=-2, dim2=-1).sum(-1)
