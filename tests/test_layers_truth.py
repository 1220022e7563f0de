"""Every ``torch.nn`` layer torchwise knows, and its ``torch.nn.functional`` op, against real PyTorch.

For each layer (``layers.LAYERS``) and functional op, calls are generated: constructor settings given
positionally and by keyword, inputs of several ranks (unbatched ones too), dtypes float32 / float64 /
bfloat16 / int64, batch 0, sizes too small or mismatched, inputs requiring grad, calls under
``torch.no_grad()``, modules in eval mode, and symbolic sizes (``def case(B: int, H: int)`` and a size known
only by its name, as an ``__init__`` parameter is). Each group of calls is one program analysed with
``analyze``; each call is also run with real torch (symbols bound to numbers). Where the engine states a fact
(dtype, shape with its symbols substituted, device, requires_grad, strides, tuple structure) it must be
torch's; where torch raises, the engine must state nothing. ``test_coverage`` prints, per layer and op, how
often the engine knew the result of a call that torch ran.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import random
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field

import pytest

torch = pytest.importorskip("torch")

from torchwise.analysis import dims, layers  # noqa: E402
from torchwise.analysis.dims import Sym  # noqa: E402
from torchwise.analysis.dtypes import DType  # noqa: E402
from torchwise.analysis.values import ModuleValue, ScalarValue, SeqValue, TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
FLOATS = ("float32", "float64", "bfloat16")
DTYPES = FLOATS + ("int64",)


@dataclass
class Case:
    group: str  # the layer or functional op, for the coverage table
    setup: list  # statements making the operands (and the module)
    call: str  # the expression whose value is compared
    symbols: dict = field(default_factory=dict)  # parameter -> value in the real run (ints become symbols)
    sized: tuple = ()  # parameters known only by their name (no annotation), like an __init__ parameter
    no_grad: bool = False


def tensor(name: str, shape, dtype: str = "float32", grad: bool = False, fill: str = "ones") -> str:
    size = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    return f"{name} = torch.{fill}({size}, dtype=torch.{dtype}{', requires_grad=True' if grad else ''})"


def inputs(shapes, dtypes=DTYPES, name="x", grad=True):
    """One setup per (shape, dtype), and a float32 input that requires grad per shape."""
    for shape in shapes:
        for dtype in dtypes:
            yield [tensor(name, shape, dtype)]
        if grad:
            yield [tensor(name, shape, "float32", grad=True)]


def module_cases(group: str, ctors, setups, call: str = "m(x)", eval_too=False, **options):
    for ctor, setup in itertools.product(ctors, setups):
        yield Case(group, [f"m = {ctor}", *setup], call, **options)
        if eval_too:
            yield Case(group, [f"m = {ctor}.eval()", *setup], call, **options)


def sample(items, count: int, seed: int):
    items = list(items)
    return items if len(items) <= count else random.Random(seed).sample(items, count)


# -- generators, one per family ----------------------------------------------------------------------------------
def linear_cases():
    shapes = [(4,), (2, 4), (2, 5, 4), (0, 4), (2, 3), ()]
    ctors = ["nn.Linear(4, 3)", "nn.Linear(4, 3, bias=False)", "nn.Linear(4, 3, True, dtype=torch.float64)",
             "nn.Linear(in_features=4, out_features=0)"]
    yield from module_cases("Linear", ctors, inputs(shapes))
    yield Case("Linear", ["m = nn.Linear(n, 3)", "x = torch.ones(B, n)"], "m(x)", {"n": 4, "B": 2}, sized=("n",))
    yield Case("Linear", ["m = nn.Linear(4, 3)", "x = torch.ones(B, T, 4, requires_grad=True)"], "m(x)",
               {"B": 2, "T": 0}, no_grad=True)
    yield Case("Linear", ["m = nn.Linear(4, 3)"], "m.weight")
    yield Case("Linear", ["m = nn.Linear(4, 3, dtype=torch.float64)"], "m.bias")
    yield Case("Linear", ["m = nn.Linear(4, 3).double()", tensor("x", (2, 4), "float64")], "m(x)")
    yield Case("Linear", ["m = nn.Linear(4, 3).to(torch.float64)", tensor("x", (2, 4), "float64")], "m(x)")
    yield Case("Linear", ["m = nn.Linear(4, 3).requires_grad_(False)", tensor("x", (2, 4))], "m(x)")
    yield Case("Linear", ["m = nn.Linear(4, 3).requires_grad_(False)"], "m.weight")
    yield Case("Linear", ["m = nn.Linear(4, 3).half()"], "m.weight")
    yield Case("Linear", ["m = nn.Linear(4, 3).bfloat16()", tensor("x", (2, 4), "bfloat16")], "m(x)")
    yield Case("Linear", ["m = nn.Linear(4, 3, dtype=torch.int64)"], "m")
    for setup in inputs([(2, 4), (4,), (2, 3)], grad=False):
        for w in ("w = torch.ones(3, 4)", "w = torch.ones(3, 4, dtype=torch.float64)"):
            yield Case("F.linear", [*setup, w], "F.linear(x, w)")
            yield Case("F.linear", [*setup, w, "b = torch.ones(3)"], "F.linear(x, w, b)")


def bilinear_cases():
    pairs = [((2, 3), (2, 4)), ((3,), (4,)), ((2, 6, 3), (2, 6, 4)), ((0, 3), (0, 4)), ((2, 3), (1, 4)),
             ((2, 3), (2, 5)), ((), ())]
    for (s1, s2), dtype in itertools.product(pairs, FLOATS + ("int64",)):
        setup = [tensor("a", s1, dtype), tensor("b", s2, dtype)]
        yield from module_cases("Bilinear", ["nn.Bilinear(3, 4, 5)", "nn.Bilinear(3, 4, 5, bias=False)"], [setup],
                                "m(a, b)")
        yield Case("F.bilinear", [*setup, tensor("w", (5, 3, 4), dtype)], "F.bilinear(a, b, w)")


def shape_layer_cases():
    shapes = [(), (4,), (2, 3), (2, 3, 4), (2, 0, 4), (2, 3, 4, 5)]
    yield from module_cases("Identity", ["nn.Identity()", "nn.Identity(54, unused=0.1)"],
                            inputs(shapes, ("float32", "int64")))
    yield from module_cases("Flatten", ["nn.Flatten()", "nn.Flatten(0, -1)", "nn.Flatten(1, 2)", "nn.Flatten(-2)"],
                            inputs(shapes, ("float32", "int64")))
    yield from module_cases("Unflatten", ["nn.Unflatten(1, (3, 1))", "nn.Unflatten(-1, (2, -1))",
                                          "nn.Unflatten(0, (2, 1))", "nn.Unflatten(1, [3])"],
                            inputs(shapes, ("float32", "int64")))
    yield Case("Flatten", ["m = nn.Flatten()", "x = torch.ones(B, C, H, H)"], "m(x)", {"B": 2, "C": 3, "H": 4})


def embedding_cases():
    indices = [tensor("x", (2, 4), "int64", fill="zeros"), tensor("x", (5,), "int32", fill="zeros"),
               "x = torch.tensor(3)", tensor("x", (0,), "int64", fill="zeros"), tensor("x", (2, 3), "float32"),
               tensor("x", (2, 3), "uint8", fill="zeros")]
    ctors = ["nn.Embedding(10, 3)", "nn.Embedding(10, 3, padding_idx=0)", "nn.Embedding(10, 3, -1)",
             "nn.Embedding(10, 3, padding_idx=10)", "nn.Embedding(10, 3, dtype=torch.float64)",
             "nn.Embedding(10, 3, max_norm=1.0)"]
    yield from module_cases("Embedding", ctors, [[i] for i in indices])
    yield Case("Embedding", ["m = nn.Embedding(n, d)", "x = torch.zeros(B, T, dtype=torch.long)"], "m(x)",
               {"n": 10, "d": 3, "B": 2, "T": 5}, sized=("n", "d"))
    yield Case("Embedding", ["m = nn.Embedding(10, 3)"], "m.weight")
    for args in ("w", "w, freeze=False", "w, padding_idx=2"):
        for w in ("w = torch.ones(10, 3)", "w = torch.ones(10)", "w = torch.ones(10, 3, dtype=torch.int64)"):
            yield Case("Embedding.from_pretrained", [w, f"m = nn.Embedding.from_pretrained({args})",
                                                     tensor("x", (2, 4), "int64", fill="zeros")], "m(x)")
            yield Case("Embedding.from_pretrained", [w, f"m = nn.Embedding.from_pretrained({args})"], "m.weight")
    for index in indices:
        for w in ("w = torch.ones(10, 3, requires_grad=True)", "w = torch.ones(10, 3, dtype=torch.float64)",
                  "w = torch.ones(10)"):
            yield Case("F.embedding", [index, w], "F.embedding(x, w)")
        yield Case("F.embedding", [index, "w = torch.ones(10, 3)"], "F.embedding(x, w, padding_idx=12)")
        yield Case("F.embedding", [index, "w = torch.ones(10, 3, requires_grad=True)"], "F.embedding(x, w)",
                   no_grad=True)
    bags = [([tensor("x", (2, 4), "int64", fill="zeros")], "m(x)"),
            ([tensor("x", (8,), "int64", fill="zeros"), "o = torch.tensor([0, 3, 5])"], "m(x, o)"),
            ([tensor("x", (8,), "int64", fill="zeros")], "m(x)"),
            ([tensor("x", (2, 4), "int64", fill="zeros"), "o = torch.tensor([0, 3])"], "m(x, o)"),
            ([tensor("x", (2, 4), "int64", fill="zeros"), tensor("p", (2, 4))], "m(x, per_sample_weights=p)")]
    for ctor in ("nn.EmbeddingBag(10, 3)", "nn.EmbeddingBag(10, 3, mode='sum')", "nn.EmbeddingBag(10, 3, mode='max')",
                 "nn.EmbeddingBag(10, 3, include_last_offset=True)"):
        for setup, call in bags:
            yield Case("EmbeddingBag", [f"m = {ctor}", *setup], call)


def _conv_settings(rank: int, transposed: bool, count: int, seed: int):
    kernels = [1, 3, 2] + ([(3, 1)] if rank == 2 else [(1, 2, 3)] if rank == 3 else [])
    grid = itertools.product(kernels, [1, 2], [0, 1, "'same'", "'valid'"] if not transposed else [0, 1],
                             [1, 2], [1, 2], [True, False],
                             ["'zeros'", "'reflect'", "'replicate'", "'circular'"] if not transposed else ["'zeros'"],
                             [0, 1] if transposed else [0])
    return sample(grid, count, seed)


def conv_cases(rank: int, transposed: bool):
    kind = f"ConvTranspose{rank}d" if transposed else f"Conv{rank}d"
    spatial = (5,) * rank
    shapes = [(2, 2, *spatial), (2, *spatial), (0, 2, *spatial), (2, 3, *spatial), (1, 2, *(2,) * rank),
              (2, 2, *(1,) * rank)]
    for k, s, p, d, g, bias, mode, extra in _conv_settings(rank, transposed, 14, rank + 10 * transposed):
        if transposed:
            ctor = f"nn.{kind}(2, 4, {k}, {s}, {p}, {extra}, {g}, {bias}, {d})"
        else:
            ctor = f"nn.{kind}(2, 4, {k}, stride={s}, padding={p}, dilation={d}, groups={g}, bias={bias}, " \
                   f"padding_mode={mode})"
        setups = sample(list(inputs(shapes, grad=False)), 10, hash(ctor) % 1000)
        yield from module_cases(kind, [ctor], setups)
        weight = (2, 4 // g, *(k if isinstance(k, tuple) else (k,) * rank)) if transposed else \
            (4, 2 // g, *(k if isinstance(k, tuple) else (k,) * rank))
        fn = f"F.conv_transpose{rank}d" if transposed else f"F.conv{rank}d"
        for setup in sample(setups, 4, 7):
            dtype = setup[0].split("torch.")[-1].rstrip(")")
            args = f"x, w, b, {s}, {p}, {extra}, {g}, {d}" if transposed else f"x, w, b, {s}, {p}, {d}, {g}"
            yield Case(fn, [*setup, tensor("w", weight, dtype), tensor("b", (4,), dtype)], f"{fn}({args})")
    yield Case(kind, [f"m = nn.{kind}(c, 4, 3)", tensor("x", ("B", "c", *("H",) * rank))], "m(x)",
               {"c": 2, "B": 2, "H": 6}, sized=("c",))
    yield Case(kind, [f"m = nn.{kind}(2, 4, 3, 2)", tensor("x", ("B", 2, *("H",) * rank))], "m(x)",
               {"B": 1, "H": 7})
    yield Case(kind, [f"m = nn.{kind}(2, 4, 3, groups=3)"], "m")
    yield Case(kind, [f"m = nn.{kind}(2, 4, 3, groups=2)"], "m.weight")
    if not transposed:
        yield Case(kind, [f"m = nn.{kind}(2, 4, 3, stride=2, padding='same')"], "m")


def pool_cases(rank: int):
    spatial = (5,) * rank
    shapes = [(2, 3, *spatial), (3, *spatial), (0, 3, *spatial), (2, 3, *(1,) * rank), (2, 0, *spatial),
              (2, 3, *(2,) * rank), (3,)]
    grid = itertools.product([1, 2, 3], [None, 1, 2], [0, 1], [1, 2], [False, True], [False, True])
    for k, s, p, d, ceil, indices in sample(grid, 16, rank):
        ctor = f"nn.MaxPool{rank}d({k}, {s}, {p}, {d}, {indices}, {ceil})"
        setups = sample(list(inputs(shapes, grad=False)), 10, k + 3 * p)
        yield from module_cases(f"MaxPool{rank}d", [ctor], setups)
        for setup in sample(setups, 3, 1):
            yield Case(f"F.max_pool{rank}d", setup, f"F.max_pool{rank}d(x, {k}, {s}, {p}, {d}, {ceil}, {indices})")
    grid = itertools.product([1, 2, 3], [None, 2], [0, 1], [False, True], [True, False], [None, 2])
    for k, s, p, ceil, include, divisor in sample(grid, 14, rank + 5):
        extra = f", divisor_override={divisor}" if rank > 1 else ""
        ctor = f"nn.AvgPool{rank}d({k}, {s}, {p}, {ceil}, {include}{extra})"
        setups = sample(list(inputs(shapes, grad=False)), 10, k + p)
        yield from module_cases(f"AvgPool{rank}d", [ctor], setups)
        for setup in sample(setups, 3, 2):
            yield Case(f"F.avg_pool{rank}d", setup, f"F.avg_pool{rank}d(x, {k}, {s}, {p}, {ceil}, {include}{extra})")
    sizes = ["1", "2", "(3,)" if rank == 1 else "(3, None)" if rank == 2 else "(None, 2, 1)", "None", "0"]
    for size in sizes:
        setups = list(inputs(shapes[:5], ("float32", "bfloat16", "int64"), grad=False))
        yield from module_cases(f"AdaptiveAvgPool{rank}d", [f"nn.AdaptiveAvgPool{rank}d({size})"], setups)
        yield from module_cases(f"AdaptiveMaxPool{rank}d", [f"nn.AdaptiveMaxPool{rank}d({size})",
                                                           f"nn.AdaptiveMaxPool{rank}d({size}, return_indices=True)"],
                                setups[:6])
        yield Case(f"F.adaptive_avg_pool{rank}d", setups[0], f"F.adaptive_avg_pool{rank}d(x, {size})")
        yield Case(f"F.adaptive_max_pool{rank}d", setups[0], f"F.adaptive_max_pool{rank}d(x, {size}, True)")
    yield Case(f"MaxPool{rank}d", [f"m = nn.MaxPool{rank}d(2)", tensor("x", ("B", 3, *("H",) * rank))], "m(x)",
               {"B": 2, "H": 9})
    yield Case(f"AdaptiveAvgPool{rank}d", [f"m = nn.AdaptiveAvgPool{rank}d(1)",
                                           tensor("x", ("B", "C", *("H",) * rank))], "m(x)", {"B": 2, "C": 3, "H": 4})


def norm_cases():
    shapes = [(2, 3, 4), (4,), (2, 5), (0, 4), (3, 4)]
    ln = ["nn.LayerNorm(4)", "nn.LayerNorm((3, 4))", "nn.LayerNorm(4, elementwise_affine=False)",
          "nn.LayerNorm(4, bias=False)", "nn.LayerNorm([4], 1e-6, True, dtype=torch.float64)"]
    yield from module_cases("LayerNorm", ln, inputs(shapes))
    yield from module_cases("RMSNorm", ["nn.RMSNorm(4)", "nn.RMSNorm([3, 4])", "nn.RMSNorm(4, 1e-6, False)"],
                            inputs(shapes))
    yield Case("LayerNorm", ["m = nn.LayerNorm(C)", "x = torch.ones(B, T, C)"], "m(x)", {"C": 4, "B": 2, "T": 3},
               sized=("C",))
    yield Case("LayerNorm", ["m = nn.LayerNorm(n)", "x = torch.ones(B, T, C)"], "m(x)",
               {"n": 4, "C": 4, "B": 2, "T": 3}, sized=("n",))
    for setup in inputs(shapes, grad=False):
        for extra in ("", ", torch.ones(4), torch.ones(4)", ", torch.ones(4, dtype=torch.float64)"):
            yield Case("F.layer_norm", setup, f"F.layer_norm(x, (4,){extra})")
        yield Case("F.rms_norm", setup, "F.rms_norm(x, [4])")
    gshapes = [(2, 4, 5), (2, 4), (4,), (0, 4, 3), (2, 6, 3), (2, 4, 2, 2)]
    groups = ["nn.GroupNorm(2, 4)", "nn.GroupNorm(3, 4)", "nn.GroupNorm(1, 4, affine=False)",
              "nn.GroupNorm(4, 4, 1e-3, True, bias=False)"]
    yield from module_cases("GroupNorm", groups, inputs(gshapes))
    for setup in inputs(gshapes, grad=False):
        yield Case("F.group_norm", setup, "F.group_norm(x, 2)")
        yield Case("F.group_norm", setup, "F.group_norm(x, 2, torch.ones(4), torch.ones(4))")
    for rank in (1, 2, 3):
        spatial = (3,) * rank if rank > 1 else (3,)
        shapes = [(2, 4, *spatial), (2, 4), (1, 4), (4,), (0, 4, *spatial), (2, 5, *spatial), (4, *spatial),
                  (1, 4, *(1,) * rank)]
        bn = [f"nn.BatchNorm{rank}d(4)", f"nn.BatchNorm{rank}d(4, affine=False)",
              f"nn.BatchNorm{rank}d(4, track_running_stats=False)", f"nn.BatchNorm{rank}d(4, 1e-3, None, True, True)"]
        setups = list(inputs(shapes, ("float32", "bfloat16")))
        yield from module_cases(f"BatchNorm{rank}d", bn[:2], setups, eval_too=True)
        yield from module_cases(f"BatchNorm{rank}d", bn[2:], setups + [[tensor("x", shapes[0], "float64")]])
        inorm = [f"nn.InstanceNorm{rank}d(4)", f"nn.InstanceNorm{rank}d(4, affine=True)",
                 f"nn.InstanceNorm{rank}d(4, track_running_stats=True)"]
        yield from module_cases(f"InstanceNorm{rank}d", inorm[::2], setups, eval_too=True)
        yield from module_cases(f"InstanceNorm{rank}d", inorm[1:2], setups + [[tensor("x", shapes[0], "int64")]])
    yield Case("BatchNorm2d", ["m = nn.BatchNorm2d(3)"], "m.running_mean")
    yield Case("BatchNorm2d", ["m = nn.BatchNorm2d(3).double()"], "m.num_batches_tracked")
    yield Case("BatchNorm2d", ["m = nn.BatchNorm2d(3).double()"], "m.running_var")
    yield Case("BatchNorm2d", ["m = nn.BatchNorm2d(C)", "x = torch.ones(B, C, H, H)"], "m(x)",
               {"C": 3, "B": 2, "H": 4})
    for setup in inputs([(2, 4, 3), (1, 4), (4,), (2, 4)], grad=False):
        for training in ("False", "True"):
            yield Case("F.batch_norm", setup, f"F.batch_norm(x, torch.zeros(4), torch.ones(4), training={training})")
        yield Case("F.batch_norm", setup, "F.batch_norm(x, None, None, training=True)")
        yield Case("F.batch_norm", setup, "F.batch_norm(x, None, None)")
        yield Case("F.instance_norm", setup, "F.instance_norm(x)")
        yield Case("F.instance_norm", setup, "F.instance_norm(x, torch.zeros(4), torch.ones(4), use_input_stats=False)")
    shapes = [(2, 4, 5), (2, 4), (0, 4, 5), (1, 2, 3, 4, 5), (2, 4, 3, 3)]
    yield from module_cases("LocalResponseNorm", ["nn.LocalResponseNorm(2)", "nn.LocalResponseNorm(3, 1e-3, 0.5, 2.0)"],
                            inputs(shapes))
    for setup in inputs(shapes[:2], grad=False):
        yield Case("F.local_response_norm", setup, "F.local_response_norm(x, 2)")


ACTIVATIONS = [
    "nn.ReLU()", "nn.ReLU(inplace=True)", "nn.ReLU6()", "nn.ReLU6(True)", "nn.GELU()", "nn.GELU('tanh')",
    "nn.GELU(approximate='foo')", "nn.SiLU()", "nn.SiLU(inplace=True)", "nn.Tanh()", "nn.Sigmoid()",
    "nn.LeakyReLU()", "nn.LeakyReLU(0.2, True)", "nn.ELU()", "nn.ELU(alpha=0.5)", "nn.CELU()", "nn.SELU()",
    "nn.Mish()", "nn.Hardswish()", "nn.Hardsigmoid()", "nn.Softplus()", "nn.Softplus(2, 10)", "nn.Hardtanh()",
    "nn.Hardtanh(-2.0, 2.0)", "nn.Hardtanh(2.0, -2.0)", "nn.Threshold(0.1, 20.0)", "nn.Threshold(0.1, 20, True)",
    "nn.Hardshrink()", "nn.Softshrink(0.2)", "nn.RReLU()", "nn.LogSigmoid()", "nn.Softsign()", "nn.Tanhshrink()",
    "nn.Softmax(dim=1)", "nn.Softmax(-1)", "nn.Softmax()", "nn.LogSoftmax(dim=-1)", "nn.LogSoftmax(3)",
    "nn.Softmin(0)", "nn.Softmax2d()", "nn.GLU()", "nn.GLU(0)", "nn.PReLU()", "nn.PReLU(3)",
    "nn.PReLU(4, 0.1, dtype=torch.float64)",
]


def activation_cases():
    shapes = [(), (4,), (2, 3, 4), (0, 3)]
    setups = [*inputs(shapes, DTYPES), ["x = torch.ones(4, 3).t()"], ["x = torch.ones(2, 3, requires_grad=True) * 2"]]
    for ctor in ACTIVATIONS:
        group = ctor.split("(")[0][3:]
        yield from module_cases(group, [ctor], setups)
        yield Case(group, [f"m = {ctor}", tensor("x", (2, 3, 4), grad=True)], "m(x)", no_grad=True)
    for setup in inputs(shapes, grad=False):
        for call in ("F.threshold(x, 0.5, 2.0)", "F.hardshrink(x)", "F.softshrink(x, 0.1)", "F.rrelu(x)",
                     "F.rrelu(x, training=True)", "F.softmin(x, 0)", "F.glu(x)", "F.glu(x, 0)",
                     "F.prelu(x, torch.ones(1))", "F.prelu(x, torch.ones(3))"):
            yield Case("F." + call.split("(")[0][2:], setup, call)


def dropout_cases():
    shapes = [(), (4,), (2, 4), (2, 3, 4), (2, 3, 4, 5), (2, 3, 4, 5, 6), (0, 3, 4)]
    ctors = ["nn.Dropout()", "nn.Dropout(0.2, True)", "nn.Dropout(p=1.5)", "nn.Dropout1d(0.1)", "nn.Dropout2d()",
             "nn.Dropout2d(0.3, inplace=True)", "nn.Dropout3d()", "nn.AlphaDropout(0.2)", "nn.FeatureAlphaDropout()"]
    for ctor in ctors:
        group = ctor.split("(")[0][3:]
        yield from module_cases(group, [ctor], inputs(shapes, ("float32", "bfloat16", "int64")), eval_too=True)
        yield Case(group, [f"m = {ctor}.eval()", tensor("x", (2, 3, 4), grad=True)], "m(x)", no_grad=True)
    for name in ("dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        for setup in inputs(shapes, ("float32", "int64"), grad=False):
            for args in ("", ", 0.2, True", ", training=False", ", p=2.0"):
                yield Case(f"F.{name}", setup, f"F.{name}(x{args})")


def padding_cases():
    for rank in (1, 2, 3):
        shapes = [(2, 3, *(4,) * rank), (3, *(4,) * rank), (0, 3, *(4,) * rank), (2, 0, *(4,) * rank),
                  (4,) * rank, (2, 3, *(2,) * rank)]
        sides = ["1", "3", str(tuple(range(2 * rank)))]
        for kind in ("ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"):
            ctors = [f"nn.{kind}{rank}d({s}{', 2.5' if kind == 'ConstantPad' else ''})" for s in sides]
            yield from module_cases(f"{kind}{rank}d", ctors, inputs(shapes, ("float32", "int64")))
    shapes = [(2, 3, 4), (2, 3, 4, 5), (3, 4), (4,), (2, 0, 4), (0, 3, 4), (2, 3, 4, 5, 6)]
    grid = itertools.product(inputs(shapes, ("float32", "int64"), grad=False),
                             ("(1, 1)", "(1, 2, 0, 1)", "(1, 1, 1, 1, 1, 1)", "(-1, 0)", "(3, 3)", "(4, 0)", "(1,)",
                              "(-2, -2)", "[0, 0]"),
                             ("", ", 'reflect'", ", mode='replicate'", ", mode='circular'", ", 'constant', 3.0",
                              ", 'reflect', 1.0"))
    for setup, pad, mode in sample(grid, 400, 3):
        yield Case("F.pad", setup, f"F.pad(x, {pad}{mode})")
    yield Case("F.pad", ["x = torch.ones(B, C, H)"], "F.pad(x, (1, 2), 'reflect')", {"B": 2, "C": 3, "H": 5})
    yield Case("F.pad", ["x = torch.ones(4, 3).t()"], "F.pad(x, (1, 1))")


def resize_cases():
    shapes = [(2, 3, 4), (2, 3, 4, 5), (2, 3, 4, 5, 6), (2, 4), (0, 3, 4), (2, 0, 4), (2, 3, 0, 4)]
    upsample = ["nn.Upsample(scale_factor=2)", "nn.Upsample(size=7)", "nn.Upsample(scale_factor=1.5, mode='bilinear')",
                "nn.Upsample(None, 0.5, 'nearest')", "nn.Upsample(scale_factor=2, mode='bicubic', align_corners=True)",
                "nn.Upsample(scale_factor=2, mode='trilinear')", "nn.Upsample(size=(3, 6), mode='area')",
                "nn.Upsample(scale_factor=2, mode='linear')", "nn.Upsample(scale_factor=2, align_corners=True)",
                "nn.Upsample(scale_factor=0.1)", "nn.Upsample(scale_factor=(2, 3), mode='nearest-exact')",
                "nn.UpsamplingNearest2d(scale_factor=2)", "nn.UpsamplingBilinear2d(size=(6, 8))"]
    for ctor in upsample:
        group = ctor.split("(")[0][3:]
        yield from module_cases(group, [ctor], inputs(shapes, ("float32", "bfloat16", "int64")))
    for setup in inputs(shapes[:3], grad=False):
        for args in ("scale_factor=2", "size=3", "size=(3, 4)", "scale_factor=1.7", "scale_factor=2, mode='bilinear'",
                     "size=5, scale_factor=2", "", "scale_factor=2, mode='bilinear', antialias=True",
                     "scale_factor=2, mode='nearest', antialias=True", "scale_factor=3.0, mode='area'"):
            yield Case("F.interpolate", setup, f"F.interpolate(x, {args})")
    yield Case("F.interpolate", ["x = torch.ones(B, C, H, H)"], "F.interpolate(x, scale_factor=2)",
               {"B": 2, "C": 3, "H": 5})
    yield Case("F.interpolate", ["x = torch.ones(B, C, H, H)"], "F.interpolate(x, scale_factor=1.5)",
               {"B": 2, "C": 3, "H": 5})
    shapes = [(1, 8, 3, 3), (8, 3, 3), (2, 1, 8, 2, 2), (1, 6, 3, 3), (8, 3), (0, 4, 2, 2), (1, 2, 4, 6)]
    for setup in inputs(shapes, ("float32", "int64")):
        yield from module_cases("PixelShuffle", ["nn.PixelShuffle(2)", "nn.PixelShuffle(1)"], [setup])
        yield from module_cases("PixelUnshuffle", ["nn.PixelUnshuffle(2)"], [setup])
        yield Case("F.pixel_shuffle", setup, "F.pixel_shuffle(x, 2)")
        yield Case("F.pixel_unshuffle", setup, "F.pixel_unshuffle(x, 2)")
    yield Case("PixelShuffle", ["m = nn.PixelShuffle(2)", "x = torch.ones(B, 4 * C, H, W)"], "m(x)",
               {"B": 2, "C": 3, "H": 2, "W": 5})
    shapes = [(2, 3, 5, 5), (3, 5, 5), (0, 3, 5, 5), (2, 3, 1, 1), (2, 3, 5)]
    for setup in inputs(shapes, ("float32", "int64")):
        yield from module_cases("Unfold", ["nn.Unfold(2)", "nn.Unfold((2, 3), padding=1, stride=2)",
                                           "nn.Unfold(6)"], [setup])
        yield Case("F.unfold", setup, "F.unfold(x, 2, 1, 0, 1)")
    for shape in [(2, 12, 16), (12, 16), (2, 12, 15), (2, 11, 16), (0, 12, 16), (2, 12, 6)]:
        setup = [tensor("x", shape)]
        yield from module_cases("Fold", ["nn.Fold((5, 5), 2)", "nn.Fold(5, (2, 2), stride=2)",
                                         "nn.Fold((4, 5), 2, padding=1, stride=2)"], [setup])
        yield Case("F.fold", setup, "F.fold(x, (5, 5), 2)")


def attention_cases():
    ctors = ["nn.MultiheadAttention(8, 2)", "nn.MultiheadAttention(8, 2, batch_first=True)",
             "nn.MultiheadAttention(8, 2, kdim=6, vdim=4)", "nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True)",
             "nn.MultiheadAttention(8, 2, add_zero_attn=True, batch_first=True)", "nn.MultiheadAttention(8, 3)",
             "nn.MultiheadAttention(8, 4, 0.1, dtype=torch.float64)"]
    qkv = [((5, 2, 8), (7, 2, 8), (7, 2, 8)), ((5, 8), (7, 8), (7, 8)), ((5, 2, 8), (7, 2, 6), (7, 2, 4)),
           ((2, 5, 8), (2, 7, 8), (2, 7, 8)), ((5, 2, 8), (7, 3, 8), (7, 3, 8)), ((5, 2, 4), (7, 2, 4), (7, 2, 4)),
           ((5, 8), (7, 2, 8), (7, 2, 8))]
    calls = ["m(q, k, v)", "m(q, k, v, need_weights=False)", "m(q, k, v, average_attn_weights=False)",
             "m(q, q, q)", "m(q, k, v, is_causal=True)"]
    for (sq, sk, sv), dtype in itertools.product(qkv, ("float32", "float64")):
        setup = [tensor("q", sq, dtype), tensor("k", sk, dtype), tensor("v", sv, dtype)]
        for ctor in ctors:
            for call in calls:
                yield Case("MultiheadAttention", [f"m = {ctor}", *setup], call)
        yield Case("MultiheadAttention", [f"m = {ctors[1]}.eval()", *setup], "m(q, q, q)", no_grad=True)
    for shapes in [((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6)), ((5, 8), (7, 8), (7, 4)), ((2, 5, 8), (2, 7, 6),
                                                                                        (2, 7, 6))]:
        setup = [tensor(n, s) for n, s in zip("qkv", shapes)]
        yield Case("F.scaled_dot_product_attention", setup, "F.scaled_dot_product_attention(q, k, v)")


def recurrent_cases():
    ctors = {"RNN": ["nn.RNN(4, 6)", "nn.RNN(4, 6, 2, 'relu')", "nn.RNN(4, 6, batch_first=True, bidirectional=True)",
                     "nn.RNN(4, 6, nonlinearity='foo')"],
             "LSTM": ["nn.LSTM(4, 6)", "nn.LSTM(4, 6, 2, batch_first=True)", "nn.LSTM(4, 6, proj_size=3)",
                      "nn.LSTM(4, 6, bidirectional=True, proj_size=2, num_layers=2)", "nn.LSTM(4, 6, proj_size=6)",
                      "nn.LSTM(4, 6, bias=False, dtype=torch.float64)"],
             "GRU": ["nn.GRU(4, 6)", "nn.GRU(4, 6, 3, dropout=0.1)", "nn.GRU(4, 6, batch_first=True)",
                     "nn.GRU(4, 6, proj_size=2)"]}
    shapes = [(5, 2, 4), (5, 4), (5, 2, 3), (0, 2, 4), (5, 0, 4), (2, 5, 4, 1)]
    for kind, kinds in ctors.items():
        yield from module_cases(kind, kinds, inputs(shapes, ("float32", "float64", "int64")))
        for ctor in kinds[:2]:
            count = re.match(r"nn\.\w+\(4, 6, (\d)", ctor)
            h = tensor("h", (int(count.group(1)) if count else 1, 2, 6))
            state = f"(h, {h.split(' = ')[1]})" if kind == "LSTM" else "h"
            yield Case(kind, [f"m = {ctor}", tensor("x", (5, 2, 4)), h], f"m(x, {state})")
            yield Case(kind, [f"m = {ctor}", tensor("x", (5, 2, 4)), tensor("h", (3, 2, 6))],
                       f"m(x, {'(h, h)' if kind == 'LSTM' else 'h'})")
        yield Case(kind, [f"m = nn.{kind}(n, 6, batch_first=True)", "x = torch.ones(B, T, n)"], "m(x)",
                   {"n": 4, "B": 2, "T": 3}, sized=("n",))
        yield Case(kind, [f"m = nn.{kind}(4, 6, 2)"], "m.weight_hh_l1")
    for kind, extra in (("RNNCell", ""), ("LSTMCell", ""), ("GRUCell", ""), ("RNNCell", ", nonlinearity='relu'")):
        for setup in inputs([(2, 4), (4,), (2, 3), (2, 2, 4), (0, 4)], ("float32", "float64", "int64")):
            yield Case(kind, [f"m = nn.{kind}(4, 6{extra})", *setup], "m(x)")
        state = "(h, h)" if kind == "LSTMCell" else "h"
        yield Case(kind, [f"m = nn.{kind}(4, 6)", tensor("x", (2, 4)), tensor("h", (2, 6))], f"m(x, {state})")
        yield Case(kind, [f"m = nn.{kind}(4, 6)", tensor("x", (2, 4)), tensor("h", (3, 6))], f"m(x, {state})")


def loss_cases():
    pairs = {
        "class": [((4, 5), "torch.zeros(4, dtype=torch.long)"), ((5,), "torch.tensor(1)"),
                  ((2, 5, 3), "torch.zeros(2, 3, dtype=torch.long)"), ((4, 5), "torch.zeros(4, dtype=torch.int32)"),
                  ((2, 5, 3), "torch.zeros(2, 3, dtype=torch.uint8)"), ((4, 5), "torch.zeros(4, dtype=torch.uint8)"),
                  ((4, 5), "torch.rand(4, 5)"), ((4, 5), "torch.zeros(3, dtype=torch.long)"),
                  ((0, 5), "torch.zeros(0, dtype=torch.long)"), ((4, 5), "torch.rand(4, 5, dtype=torch.float64)")],
        "same": [((2, 3), "torch.rand(2, 3)"), ((2, 3), "torch.rand(3)"),
                 ((2, 3), "torch.rand(2, 3, dtype=torch.float64)"), ((2, 3), "torch.ones(2, 3, dtype=torch.long)"),
                 ((0, 3), "torch.rand(0, 3)"), ((3,), "torch.rand(2, 3)"), ((2, 3), "torch.rand(4, 3)")],
    }
    losses = {"CrossEntropyLoss": ("cross_entropy", "class"), "NLLLoss": ("nll_loss", "class"),
              "MSELoss": ("mse_loss", "same"), "L1Loss": ("l1_loss", "same"),
              "BCELoss": ("binary_cross_entropy", "same"),
              "BCEWithLogitsLoss": ("binary_cross_entropy_with_logits", "same"),
              "SmoothL1Loss": ("smooth_l1_loss", "same"), "HuberLoss": ("huber_loss", "same"),
              "KLDivLoss": ("kl_div", "same")}
    for kind, (fn, family) in losses.items():
        ctors = [f"nn.{kind}()", f"nn.{kind}(reduction='none')", f"nn.{kind}(reduction='sum')",
                 f"nn.{kind}(reduction='foo')"]
        if kind != "HuberLoss":
            ctors.append(f"nn.{kind}(reduce=False)" if kind not in ("CrossEntropyLoss", "NLLLoss")
                         else f"nn.{kind}(None, None, -100, False)")
        if family == "class":
            ctors.append(f"nn.{kind}(weight=torch.ones(5), reduction='none')")
        for (shape, target), dtype in itertools.product(pairs[family], ("float32", "float64", "bfloat16", "int64")):
            setup = [tensor("x", shape, dtype), f"t = {target}"]
            if dtype != "bfloat16":
                yield from module_cases(kind, ctors, [setup], "m(x, t)")
            for reduction in ("'mean'", "'sum'", "'none'"):
                yield Case(f"F.{fn}", setup, f"F.{fn}(x, t, reduction={reduction})")
        # a target known only by its name, or not at all: the result still has a shape where it reduces
        for reduction in ("mean", "sum", "none"):
            yield Case(f"F.{fn}", [tensor("x", pairs[family][0][0], grad=True)],
                       f"F.{fn}(x, t, reduction='{reduction}')", {"t": eval(pairs[family][0][1])},  # noqa: S307
                       sized=("t",))
            made = pairs[family][0][1]
            yield Case(f"F.{fn}", [tensor("x", pairs[family][0][0]), "t = unknown_target()"],
                       f"F.{fn}(x, t, reduction='{reduction}')",
                       {"unknown_target": lambda made=made: eval(made)})  # noqa: S307
        # a target of known rank but unknown dtype (nanoGPT's targets.view(-1)): another rank than the input's
        # can only be class indices, a float target of the input's rank keeps its dtype unknown
        targets = (((4, 5), "torch.zeros(4, dtype=torch.uint8)", "-1"),
                   ((2, 5, 3), "torch.zeros(2, 3, dtype=torch.long)", "2, -1"),
                   ((4, 5), "torch.rand(4, 5, dtype=torch.float64)", "4, -1"))
        for shape, made, view in targets[:3 if fn == "cross_entropy" else 2] if family == "class" else ():
            for dtype in ("float32", "float64"):
                yield Case(f"F.{fn}", [tensor("x", shape, dtype), f"t = unknown_target().view({view})"],
                           f"F.{fn}(x, t)", {"unknown_target": lambda made=made: eval(made)})  # noqa: S307
    for shape, dtype in itertools.product([(4, 5), (5,), (4, 3)], ("float32", "float64")):
        setup = [tensor("a", shape, dtype), tensor("b", (4, 5), dtype), "t = torch.ones(4)"]
        for reduction in ("'mean'", "'none'"):
            yield Case("CosineEmbeddingLoss", [f"m = nn.CosineEmbeddingLoss(reduction={reduction})", *setup],
                       "m(a, b, t)")
            yield Case("F.cosine_embedding_loss", setup, f"F.cosine_embedding_loss(a, b, t, reduction={reduction})")
        yield Case("CosineSimilarity", ["m = nn.CosineSimilarity()", *setup], "m(a, b)")
        yield Case("PairwiseDistance", ["m = nn.PairwiseDistance(keepdim=True)", *setup], "m(a, b)")


def init_cases():
    shapes = [(3, 4), (4,), (2, 3, 4), (2, 3, 3, 3), (0, 3)]
    for setup in inputs(shapes, ("float32", "int64"), name="w", grad=False):
        for fn in ("uniform_(w)", "normal_(w, 0, 0.1)", "trunc_normal_(w, std=0.02)", "constant_(w, 0.5)", "ones_(w)",
                   "zeros_(w)", "eye_(w)", "dirac_(w)", "xavier_uniform_(w)", "xavier_normal_(w, gain=2.0)",
                   "kaiming_uniform_(w, a=5 ** 0.5)", "kaiming_normal_(w, mode='fan_out', nonlinearity='relu')",
                   "orthogonal_(w)"):
            yield Case("nn.init." + fn.split("(")[0], setup, f"nn.init.{fn}")
    for gain in ("'relu'", "'tanh'", "'linear'", "'leaky_relu', 0.2", "'foo'"):
        yield Case("nn.init.calculate_gain", [], f"nn.init.calculate_gain({gain})")


GENERATORS = {
    "linear": linear_cases, "bilinear": bilinear_cases, "shape": shape_layer_cases, "embedding": embedding_cases,
    **{f"conv{r}d": (lambda r=r: conv_cases(r, False)) for r in (1, 2, 3)},
    **{f"conv_transpose{r}d": (lambda r=r: conv_cases(r, True)) for r in (1, 2, 3)},
    **{f"pool{r}d": (lambda r=r: pool_cases(r)) for r in (1, 2, 3)},
    "norm": norm_cases, "activation": activation_cases, "dropout": dropout_cases, "padding": padding_cases,
    "resize": resize_cases, "attention": attention_cases, "recurrent": recurrent_cases, "loss": loss_cases,
    "init": init_cases,
}


# -- running and comparing ------------------------------------------------------------------------------------------
def real_result(case: Case):
    namespace = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, **case.symbols}
    torch.manual_seed(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for line in case.setup:
                exec(line, namespace)  # noqa: S102
            if case.no_grad:
                with torch.no_grad():
                    return "value", eval(case.call, namespace)  # noqa: S307
            return "value", eval(case.call, namespace)  # noqa: S307
    except Exception as error:  # noqa: BLE001  (torch raises RuntimeError, ValueError, TypeError, ...)
        return "raises", error


def program(cases: list) -> str:
    lines = [HEADER]
    for i, case in enumerate(cases):
        params = [name if name in case.sized or not isinstance(value, int) else f"{name}: int"
                  for name, value in case.symbols.items()]
        lines.append(f"def case_{i}({', '.join(params)}):\n")
        lines.extend(f"    {line}\n" for line in case.setup)
        if case.no_grad:
            lines.append(f"    with torch.no_grad():\n        r = {case.call}\n")
        else:
            lines.append(f"    r = {case.call}\n")
    return "".join(lines)


def engine_results(cases: list) -> list:
    analysis = analyze(program(cases), "<layers>")
    facts = analysis.facts.values
    results = []
    for function in analysis.source.tree.body[3:]:
        targets = [node.targets[0] for node in _walk(function) if _assigns_r(node)]
        results.append(facts.get(targets[-1]))
    assert len(results) == len(cases)
    return results


def _walk(node):
    return ast.walk(node)


def _assigns_r(node) -> bool:
    return isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "r"


def concrete(dim, symbols: dict):
    """A fact's dim with the symbols bound to the run's values; None when a symbol is not one of them."""
    if isinstance(dim, int):
        return dim
    value = dims.rename(dim, lambda name: symbols.get(name.split("@")[0].split(".")[-1])
                        if isinstance(symbols.get(name.split("@")[0].split(".")[-1]), int) else None)
    return value if isinstance(value, int) else None


def problems_of(fact, kind: str, real, symbols: dict) -> list:
    if fact is None:
        return []
    if kind == "raises":
        return [f"torch raises {type(real).__name__}: {str(real)[:100]}, the engine claims {_brief(fact)}"]
    if isinstance(fact, SeqValue):
        if not isinstance(real, tuple) or (fact.items is not None and len(fact.items) != len(real)):
            return [f"the engine claims a {len(fact.items or ())}-tuple, torch gives {type(real).__name__}"]
        return [p for f, r in zip(fact.items or (), real) for p in problems_of(f, "value", r, symbols)]
    if isinstance(fact, ScalarValue):
        if fact.kind == "none" and real is not None:
            return [f"the engine claims None, torch gives {type(real).__name__}"]
        if fact.kind == "float" and not isinstance(real, float):
            return [f"the engine claims a float, torch gives {type(real).__name__}"]
        if fact.kind == "int" and not isinstance(real, int):
            return [f"the engine claims an int, torch gives {type(real).__name__}"]
        if fact.kind in ("int", "float") and fact.value is not None and abs(fact.value - real) > 1e-9:
            return [f"the engine claims {fact.value}, torch gives {real}"]
        return []
    if isinstance(fact, ModuleValue):
        return [] if isinstance(real, torch.nn.Module) else [f"the engine claims a module, torch gives {type(real)}"]
    if not isinstance(fact, TensorValue):
        return []
    if not isinstance(real, torch.Tensor):
        return [f"the engine claims a tensor, torch gives {type(real).__name__}"]
    found = []
    if fact.dtype is not None and fact.dtype != DType(str(real.dtype).removeprefix("torch.")):
        found.append(f"dtype {fact.dtype.short} vs torch {real.dtype}")
    if fact.shape is not None:
        shape = tuple(concrete(d, symbols) for d in fact.shape)
        if len(shape) != real.dim() or any(d is not None and d != r for d, r in zip(shape, real.shape)):
            found.append(f"shape {fact.shape} vs torch {tuple(real.shape)}")
    if fact.device is not None and fact.device != str(real.device):
        found.append(f"device {fact.device} vs torch {real.device}")
    if fact.requires_grad is not None and fact.requires_grad != real.requires_grad:
        found.append(f"requires_grad {fact.requires_grad} vs torch {real.requires_grad}")
    if fact.strides is not None and real.numel() > 1:
        strides = tuple(concrete(s, symbols) for s in fact.strides)
        if None not in strides and strides != tuple(real.stride()):
            found.append(f"strides {fact.strides} vs torch {real.stride()}")
    return found


def _brief(fact) -> str:
    if isinstance(fact, TensorValue):
        return f"Tensor[{fact.dtype and fact.dtype.short}, {fact.shape}]"
    if isinstance(fact, SeqValue):
        return f"tuple of {len(fact.items or ())}"
    return type(fact).__name__


STATS: Counter = Counter()


@pytest.mark.parametrize("family", list(GENERATORS))
def test_layers_agree_with_torch(family):
    cases = list(GENERATORS[family]())
    facts = engine_results(cases)
    failures = []
    for case, fact in zip(cases, facts):
        kind, real = real_result(case)
        STATS[(case.group, "cases")] += 1
        if kind == "value":
            STATS[(case.group, "ran")] += 1
            STATS[(case.group, "known")] += fact is not None
        for problem in problems_of(fact, kind, real, case.symbols):
            failures.append(f"[{case.group}] {'; '.join(case.setup)}; r = {case.call}"
                            f"{' (no_grad)' if case.no_grad else ''}: {problem}")
    assert not failures, f"{len(failures)} of {len(cases)} calls disagree:\n" + "\n".join(failures[:15])


def test_coverage(capsys):
    """Not a check: how often the engine knows the result of a call torch ran, per layer and functional op."""
    groups = sorted({group for group, _ in STATS})
    with capsys.disabled():
        total = sum(STATS[(g, "cases")] for g in groups)
        ran = sum(STATS[(g, "ran")] for g in groups)
        known = sum(STATS[(g, "known")] for g in groups)
        print(f"\nlayer coverage: {total} generated calls, torch ran {ran}, the engine knew {known} "
              f"({100 * known / max(ran, 1):.1f}%)")
        for group in groups:
            r, k = STATS[(group, "ran")], STATS[(group, "known")]
            print(f"  {group:32} {k:4} / {r:4}  {100 * k / max(r, 1):5.1f}%   ({STATS[(group, 'cases')]} calls)")


def test_constructor_signatures_are_pytorchs():
    """Each layer's declared constructor reads positional arguments in PyTorch's own order."""
    for kind, spec in layers.LAYERS.items():
        real = getattr(torch.nn, kind, None)
        if real is None or spec.init is None:
            continue
        params = [p for p in inspect.signature(real.__init__).parameters.values() if p.name != "self"]
        if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
            continue  # RNN, LSTM, GRU take *args (read as RNNBase does)
        theirs = [p.name for p in params]
        ours = [p.name for p in spec.init.params]
        assert ours == theirs, f"nn.{kind}: declared {ours}, torch has {theirs}"
        kw_only = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
        assert kw_only == {p.name for p in spec.init.params if p.kw_only}, kind


def test_symbolic_sizes_flow_through_layers():
    """A model's sizes, known only by name, give symbolic facts (checked for their values above)."""
    facts = engine_results([Case("Conv2d", ["m = nn.Conv2d(c, 8, 3, padding=1)", "x = torch.ones(B, c, H, W)"], "m(x)",
                                 {"c": 3, "B": 2, "H": 5, "W": 6}, sized=("c",))])
    assert facts[0].shape == (Sym.var("B"), 8, Sym.var("H"), Sym.var("W"))
