# kind: vectorizable
# family: scatter
# origin: timm byobnet/fastvit/ghostnet re-parameterization: the identity branch as a conv kernel
# results: id_dense id_grouped
# tags: corpus-style function-param
import torch


def identity_kernel(in_chs, groups, kernel_size):
    input_dim = in_chs // groups
    kernel_value = torch.zeros(in_chs, input_dim, kernel_size, kernel_size)
    for i in range(in_chs):
        kernel_value[i, i % input_dim, kernel_size // 2, kernel_size // 2] = 1
    return kernel_value


id_dense = identity_kernel(64, 1, 3)
id_grouped = identity_kernel(64, 4, 3)
# ---- vectorized ----
import torch


def identity_kernel(in_chs, groups, kernel_size):
    input_dim = in_chs // groups
    kernel_value = torch.zeros(in_chs, input_dim, kernel_size, kernel_size)
    idx = torch.arange(in_chs)
    kernel_value[idx, idx % input_dim, kernel_size // 2, kernel_size // 2] = 1
    return kernel_value


id_dense = identity_kernel(64, 1, 3)
id_grouped = identity_kernel(64, 4, 3)
