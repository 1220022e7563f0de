# kind: vectorizable
# family: histogram
# origin: written for stop 26 as users write it (probe set): a 2-d histogram of quantized pixel pairs (mutual information)
# results: joint
# tags: function-param
import torch


def joint_histogram(a, b, bins):
    joint = torch.zeros(bins, bins)
    for i in range(a.shape[0]):
        joint[a[i], b[i]] += 1
    return joint


a = torch.randint(0, 16, (1000,))
b = torch.randint(0, 16, (1000,))
joint = joint_histogram(a, b, 16)
# ---- vectorized ----
import torch


def joint_histogram(a, b, bins):
    return torch.bincount(a * bins + b, minlength=bins * bins).reshape(bins, bins).float()


a = torch.randint(0, 16, (1000,))
b = torch.randint(0, 16, (1000,))
joint = joint_histogram(a, b, 16)
