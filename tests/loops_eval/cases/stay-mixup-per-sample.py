# kind: must-stay-loop
# family: data-dependent-branch
# origin: timm mixup.py _mix_elem: per-sample choice between cutmix (a random box) and mixup
# why: each sample takes its own branch and its own box size, drawn in the loop
# tags: corpus-style function-param
import torch


def mix_elem(x, lam_batch, use_cutmix):
    x_orig = x.clone()  # need to keep an unmodified original for mixing source
    batch_size = len(x)
    for i in range(batch_size):
        j = batch_size - i - 1
        lam = lam_batch[i]
        if lam != 1.:
            if use_cutmix[i]:
                cut = int(x.shape[-1] * (1 - lam) ** 0.5)
                yl, xl = torch.randint(0, x.shape[-1] - cut + 1, (2,)).tolist()
                x[i][:, yl:yl + cut, xl:xl + cut] = x_orig[j][:, yl:yl + cut, xl:xl + cut]
            else:
                x[i] = x[i] * lam + x_orig[j] * (1 - lam)
    return x


mixed = mix_elem(torch.rand(16, 3, 32, 32), torch.rand(16).tolist(), (torch.rand(16) > 0.5).tolist())
