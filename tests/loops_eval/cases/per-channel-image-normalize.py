# kind: vectorizable
# family: map
# origin: normalizing an image tensor channel by channel (torchvision-style transform)
# results: img
# tags: function-param
import torch


def normalize_(img, mean, std):
    for c in range(img.shape[0]):
        img[c] = (img[c] - mean[c]) / std[c]
    return img


img = normalize_(torch.rand(3, 224, 224), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
# ---- vectorized ----
import torch


def normalize_(img, mean, std):
    mean = torch.tensor(mean)[:, None, None]
    std = torch.tensor(std)[:, None, None]
    return img.sub_(mean).div_(std)


img = normalize_(torch.rand(3, 224, 224), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
