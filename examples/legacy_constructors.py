"""Data preparation and parameter set-up, partly written the pre-1.0 way.

The legacy type constructors (torch.Tensor, torch.FloatTensor, ...) still run,
but they either hand back uninitialized memory or silently pick a dtype from
the type name. Each legacy call below sits next to the modern spelling.

Run it:  python examples/legacy_constructors.py
"""
import torch
import torch as T
import torch.nn as nn
from torch import FloatTensor

n = 128  # hidden width
labels = [0, 1, 1, 0]


def init_layer():
    # Legacy: allocates 3x4 floats and leaves whatever was in memory there.
    weight = torch.Tensor(3, 4)
    nn.init.xavier_uniform_(weight)

    # Legacy: same story with a size held in a variable.
    bias = torch.FloatTensor(n)
    bias.fill_(0.0)

    # Modern: say "uninitialized" on purpose, or ask for zeros.
    weight_ok = torch.empty(3, 4)
    nn.init.xavier_uniform_(weight_ok)
    bias_ok = torch.zeros(n)
    return weight, bias, weight_ok, bias_ok


def build_targets():
    # Legacy: torch.Tensor() is an empty float32 tensor, spelled obscurely.
    no_targets = torch.Tensor()

    # Legacy with data: float32 and int64 chosen by the type name, not by you.
    thresholds = torch.Tensor([1, 2, 3])
    targets = torch.LongTensor(labels)

    # A legacy type imported by name is the same constructor.
    class_weights = FloatTensor([0.3, 0.7])

    # Modern: torch.tensor with an explicit dtype.
    thresholds_ok = torch.tensor([1, 2, 3], dtype=torch.float32)
    targets_ok = torch.tensor(labels, dtype=torch.long)
    class_weights_ok = torch.tensor([0.3, 0.7], dtype=torch.float32)
    no_targets_ok = torch.empty(0)

    assert torch.equal(thresholds, thresholds_ok)
    assert torch.equal(targets, targets_ok)
    assert torch.equal(class_weights, class_weights_ok)
    assert no_targets.shape == no_targets_ok.shape
    return targets_ok, class_weights_ok


def scratch_buffers():
    # Under an alias the legacy constructor is still a legacy constructor.
    scratch = T.Tensor(2, 5)
    scratch.zero_()
    scratch_ok = T.zeros(2, 5)
    return scratch, scratch_ok


def gpu_index_buffer():
    # Legacy CUDA type: uninitialized int64 memory on the current GPU.
    idx = torch.cuda.LongTensor(2, 2)
    idx_ok = torch.empty(2, 2, dtype=torch.long, device="cuda")
    return idx, idx_ok


def combine_features():
    a = torch.randn(3)
    b = torch.randn(3)
    try:
        # torch.tensor cannot turn a list of 1-d tensors into a tensor.
        pair = torch.tensor([a, b])
    except ValueError as err:
        print(f"torch.tensor([a, b]) raised ValueError: {err}")
        pair = torch.stack([a, b])
    print("stacked features:", tuple(pair.shape))


def combine_losses():
    w = torch.tensor(0.5, requires_grad=True)
    x = w * 3.0
    loss1 = x.sum()
    loss2 = (w - 1.0).pow(2).sum()

    # Works, but copies the two values out of the graph: no gradient reaches w.
    logged = torch.tensor([loss1, loss2])
    print("torch.tensor of 0-d losses requires_grad:", logged.requires_grad)

    # torch.stack keeps the graph.
    total = torch.stack([loss1, loss2]).sum()
    total.backward()
    print("gradient through torch.stack:", w.grad.item())


def check_gradients():
    # Global side effect: every later float tensor in the process becomes float64.
    torch.set_default_dtype(torch.float64)
    x = torch.randn(5, requires_grad=True)
    ok = torch.autograd.gradcheck(lambda t: (t.sigmoid() * t).sum(), (x,))
    print("gradcheck passed:", ok)


if __name__ == "__main__":
    w, b, w_ok, b_ok = init_layer()
    print("layer shapes:", tuple(w.shape), tuple(b.shape), tuple(w_ok.shape), tuple(b_ok.shape))
    targets, class_weights = build_targets()
    print("targets:", targets.tolist(), "class weights:", class_weights.tolist())
    s, s_ok = scratch_buffers()
    print("scratch equal:", torch.equal(s, s_ok))
    if torch.cuda.is_available():
        gpu_index_buffer()
    combine_features()
    combine_losses()
    check_gradients()
