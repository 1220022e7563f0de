"""The corpus models the truth test runs: which file, how it is imported, and a tiny CPU run of it.

Each run builds the model (``__init__`` code is traced too) with a tiny config and calls what a user
would: ``forward`` on small random inputs, with two batch sizes so no size is right by chance, the
loss branch for the GPTs, ``generate`` (its sequence grows past ``block_size``, so both sides of the
crop run), and whatever else in the file runs in milliseconds (optimizer set-up, train / test loops
over a few fake batches). pytorch-image-models is left out: importing ``timm`` needs torchvision.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

import torch


@dataclass(frozen=True)
class RealModel:
    name: str
    file: str  # relative to the corpus
    run: Callable  # (the imported module) -> None
    packages: tuple = ()  # (package name, its folder relative to the corpus): for the file's absolute imports
    stubs: tuple = ()  # modules the file imports for other purposes, stubbed when they are not installed
    needs: tuple = ()  # modules that must be installed (``einops``)


def quietly(run: Callable, module) -> None:
    """Seeded (and the random state put back after), silent (models print their parameter counts, torch
    warns about a few settings) and on one thread: tiny ops on a busy machine run 20x slower on two."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(io.StringIO()), \
                warnings.catch_warnings():
            torch.manual_seed(0)
            warnings.simplefilter("ignore")
            run(module)
    finally:
        torch.set_num_threads(threads)


# -- the GPTs -------------------------------------------------------------------------------------------------
def _nanogpt(m) -> None:
    for bias, layers, heads, embd, block, vocab, batch, length in ((True, 2, 2, 16, 8, 32, 2, 5),
                                                                    (False, 1, 3, 24, 12, 40, 3, 12)):
        config = m.GPTConfig(block_size=block, vocab_size=vocab, n_layer=layers, n_head=heads, n_embd=embd,
                             dropout=0.0, bias=bias)
        model = m.GPT(config)
        idx = torch.randint(0, vocab, (batch, length))
        model(idx, targets=idx)
        model(idx)
    model.eval()
    model.generate(idx[:, :9], 5, temperature=0.8, top_k=4)
    model.generate(idx[:, :2], 2)
    model.crop_block_size(6)
    model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95), device_type="cpu")
    model.estimate_mfu(fwdbwd_per_iter=2, dt=1.0)


def _mingpt(m) -> None:
    for layers, heads, embd, block, vocab, batch, length in ((2, 2, 16, 8, 32, 2, 5), (1, 3, 24, 12, 40, 3, 12)):
        config = m.GPT.get_default_config()
        config.model_type = None
        config.n_layer, config.n_head, config.n_embd = layers, heads, embd
        config.vocab_size, config.block_size = vocab, block
        model = m.GPT(config)
        idx = torch.randint(0, vocab, (batch, length))
        model(idx, targets=idx)
        model(idx)
    model.eval()
    model.generate(idx[:, :9], 5, do_sample=True, top_k=4)
    model.generate(idx[:, :2], 2)
    model.configure_optimizers(SimpleNamespace(weight_decay=0.1, learning_rate=3e-4, betas=(0.9, 0.95)))


# -- vit-pytorch ------------------------------------------------------------------------------------------------
def _vision(cls: str, inputs: tuple, variants: tuple = ({},), **config) -> Callable:
    """Build ``cls(**config, **variant)`` for each variant and call it on each input shape."""
    def run(m):
        for variant in variants:
            model = getattr(m, cls)(**config, **variant)
            for shape in inputs:
                model(torch.randn(*shape))
    return run


_IMAGES_8 = ((2, 3, 8, 8), (3, 3, 8, 8))
_IMAGES_16 = ((2, 3, 16, 16), (3, 3, 16, 16))
_IMAGES_32 = ((2, 3, 32, 32), (3, 3, 32, 32))
_VIT = dict(image_size=8, patch_size=4, num_classes=3, dim=16, depth=2, heads=2, mlp_dim=32, dim_head=8)
_POOLS = ({"pool": "cls"}, {"pool": "mean"})


def _navit(m) -> None:
    """NaViT takes lists of images of their own sizes (grouped, or grouped for it), with its `device` property."""
    model = m.NaViT(image_size=16, patch_size=4, num_classes=3, dim=16, depth=1, heads=2, mlp_dim=32, dim_head=8)
    model([[torch.randn(3, 8, 8), torch.randn(3, 16, 8)], [torch.randn(3, 8, 16)]])
    model([torch.randn(3, 8, 8), torch.randn(3, 4, 12)], group_images=True, group_max_seq_len=8)


def _vit_models() -> list[RealModel]:
    package = (("vit_pytorch", "vit-pytorch/vit_pytorch"),)
    runs = {
        "vit": _vision("ViT", _IMAGES_8, _POOLS, **_VIT),
        "simple_vit": _vision("SimpleViT", _IMAGES_8, **_VIT),
        "deepvit": _vision("DeepViT", _IMAGES_8, _POOLS, **_VIT),
        "cait": _vision("CaiT", _IMAGES_8, cls_depth=1, layer_dropout=0.1, **_VIT),
        "xcit": _vision("XCiT", _IMAGES_8, cls_depth=1, layer_dropout=0.1, **_VIT),
        "parallel_vit": _vision("ViT", _IMAGES_8, _POOLS, **_VIT),
        "vit_for_small_dataset": _vision("ViT", _IMAGES_8, **_VIT),
        "vit_1d": _vision("ViT", ((2, 3, 16), (3, 3, 16)), seq_len=16, patch_size=4, num_classes=3, dim=16, depth=2,
                          heads=2, mlp_dim=32, dim_head=8),
        "vit_3d": _vision("ViT", ((2, 3, 4, 8, 8),), image_size=8, image_patch_size=4, frames=4, frame_patch_size=2,
                          num_classes=3, dim=16, depth=1, heads=2, mlp_dim=32, dim_head=8),
        "t2t": _vision("T2TViT", _IMAGES_16, image_size=16, num_classes=3, dim=16, depth=1, heads=2, mlp_dim=32,
                       dim_head=8, t2t_layers=((3, 2), (3, 2))),
        "cross_vit": _vision("CrossViT", _IMAGES_16, image_size=16, num_classes=3, sm_dim=16, lg_dim=24,
                             sm_patch_size=4, sm_enc_depth=1, sm_enc_heads=2, sm_enc_mlp_dim=32, sm_enc_dim_head=8,
                             lg_patch_size=8, lg_enc_depth=1, lg_enc_heads=2, lg_enc_mlp_dim=32, lg_enc_dim_head=8,
                             cross_attn_depth=1, cross_attn_heads=2, cross_attn_dim_head=8, depth=1),
        "pit": _vision("PiT", _IMAGES_16, image_size=16, patch_size=4, num_classes=3, dim=16, depth=(1, 1), heads=2,
                       mlp_dim=32, dim_head=8),
        "nest": _vision("NesT", _IMAGES_16, image_size=16, patch_size=4, num_classes=3, dim=16, heads=2,
                        num_hierarchies=2, block_repeats=(1, 1), dim_head=8),
        "cct": _vision("CCT", _IMAGES_16, img_size=16, embedding_dim=16, n_conv_layers=1, kernel_size=3, stride=1,
                       padding=1, pooling_kernel_size=3, pooling_stride=2, pooling_padding=1, num_layers=1,
                       num_heads=2, mlp_ratio=2.0, num_classes=3, positional_embedding="learnable"),
        "regionvit": _vision("RegionViT", _IMAGES_32, dim=(8, 16, 24, 32), depth=(1, 1, 1, 1), window_size=2,
                             num_classes=3, local_patch_size=2),
        "simple_vit_1d": _vision("SimpleViT", ((2, 3, 16),), seq_len=16, patch_size=4, num_classes=3, dim=16,
                                 depth=2, heads=2, mlp_dim=32, dim_head=8),
        "levit": _vision("LeViT", _IMAGES_16, image_size=16, num_classes=3, dim=(16, 24, 32), depth=1,
                         heads=(2, 2, 2), mlp_mult=2, dim_key=8, dim_value=8),
        "cvt": _vision("CvT", _IMAGES_32, num_classes=3, s1_emb_dim=8, s2_emb_dim=16, s3_emb_dim=24, s2_heads=2,
                       s3_heads=2, s3_depth=1),
        "max_vit": _vision("MaxViT", _IMAGES_16, num_classes=3, dim=16, depth=(1, 1), dim_head=8, window_size=2,
                           dim_conv_stem=8),
        "twins_svt": _vision("TwinsSVT", _IMAGES_32, num_classes=3, s1_emb_dim=8, s2_emb_dim=16, s3_emb_dim=16,
                             s4_emb_dim=16, s3_depth=1, s4_depth=1, s1_local_patch_size=2, s2_local_patch_size=2,
                             s3_local_patch_size=1, s4_local_patch_size=1, s1_global_k=2, s2_global_k=2,
                             s3_global_k=1, s4_global_k=1),
        "vit_with_patch_merger": _vision("ViT", _IMAGES_16, image_size=16, patch_size=4, num_classes=3, dim=16,
                                         depth=2, heads=2, mlp_dim=32, dim_head=8, patch_merge_layer=1,
                                         patch_merge_num_tokens=4),
        "simple_uvit": _vision("SimpleUViT", _IMAGES_16, image_size=16, patch_size=4, num_classes=3, dim=16, depth=3,
                               heads=2, mlp_dim=32, num_register_tokens=2, dim_head=8),
        "simple_vit_attn_residual": _vision("SimpleViTAttnResidual", _IMAGES_16, ({"learned_query": True},
                                            {"learned_query": False}), image_size=16, patch_size=4, num_classes=3,
                                            dim=16, depth=2, heads=2, mlp_dim=32, dim_head=8),
        "jumbo_vit": _vision("JumboViT", _IMAGES_8, ({"num_jumbo_cls": 1}, {"num_jumbo_cls": 2}), image_size=8,
                             patch_size=4, num_classes=3, dim=16, depth=2, heads=2, mlp_dim=32, dim_head=8,
                             jumbo_cls_k=2),
        "simple_vit_3d": _vision("SimpleViT", ((2, 3, 4, 8, 8),), image_size=8, image_patch_size=4, frames=4,
                                 frame_patch_size=2, num_classes=3, dim=16, depth=1, heads=2, mlp_dim=32, dim_head=8),
        "simple_vit_with_patch_dropout": _vision("SimpleViT", _IMAGES_8, **_VIT),
        "simple_flash_attn_vit": _vision("SimpleViT", _IMAGES_8, ({"use_flash": True},), **_VIT),  # (its other path
        # calls an einsum it never imports: NameError)
        "normalized_vit": _vision("nViT", _IMAGES_8, image_size=8, patch_size=4, num_classes=3, dim=16, depth=2,
                                  heads=2, mlp_dim=32, dim_head=8),  # (a @property weight, ParameterLists)
        "wwt": _vision("WWT", _IMAGES_16, ({"return_tokens": True, "num_register_tokens": 2,
                                            "num_register_slots": (1, 2)}, {}), image_size=16, patch_size=4,
                       num_classes=3, dim=16, depth=1, num_slots=(4, 2), heads=2, dim_head=8, mlp_dim=32),
        # (layers made by functools.partial, ParameterLists of slots)
        "na_vit": _navit,  # (lists of images: `next(self.parameters()).device`, partials, pad_sequence)
        "mobile_vit": _vision("MobileViT", ((2, 3, 64, 64),), image_size=(64, 64), dims=[16, 16, 16],
                              channels=[8, 8, 8, 8, 16, 16, 16, 16, 16, 16, 32], num_classes=3, depths=(1, 1, 1)),
    }
    return [RealModel(f"vit-pytorch/{name}", f"vit-pytorch/vit_pytorch/{name}.py", run, package, needs=("einops",))
            for name, run in runs.items()]


# -- pytorch/examples ---------------------------------------------------------------------------------------------
def _word_language_model(m) -> None:
    for kind, tie in (("LSTM", False), ("GRU", True), ("RNN_TANH", False)):
        model = m.RNNModel(kind, ntoken=20, ninp=8, nhid=8, nlayers=2, dropout=0.0, tie_weights=tie)
        for batch, length in ((2, 5), (3, 4)):
            model(torch.randint(0, 20, (length, batch)), model.init_hidden(batch))
    transformer = m.TransformerModel(ntoken=20, ninp=8, nhead=2, nhid=16, nlayers=2, dropout=0.0)
    for length, mask in ((5, True), (5, True), (6, True), (4, False)):
        transformer(torch.randint(0, 20, (length, 2)), has_mask=mask)


class _Loader(list):
    """A few fake batches, with the ``dataset`` the mnist loops take their sizes from."""

    def __init__(self, batches):
        super().__init__(batches)
        self.dataset = [None] * sum(len(data) for data, _ in batches)


def _mnist(m) -> None:
    model = m.Net()
    loader = _Loader([(torch.randn(n, 1, 28, 28), torch.randint(0, 10, (n,))) for n in (2, 3)])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    args = SimpleNamespace(log_interval=1, dry_run=False)
    m.train(args, model, torch.device("cpu"), loader, optimizer, 1)
    m.test(model, torch.device("cpu"), loader)


def _super_resolution(m) -> None:
    model = m.Net(upscale_factor=2)
    for size in (6, 8):
        model(torch.randn(1, 1, size, size))


def _transformer_net(m) -> None:
    model = m.TransformerNet()
    model(torch.randn(1, 3, 16, 16))


EXAMPLES = [
    RealModel("examples/word_language_model", "examples/word_language_model/model.py", _word_language_model),
    RealModel("examples/mnist", "examples/mnist/main.py", _mnist, stubs=("torchvision",)),
    RealModel("examples/super_resolution", "examples/super_resolution/model.py", _super_resolution),
    RealModel("examples/fast_neural_style", "examples/fast_neural_style/neural_style/transformer_net.py",
              _transformer_net),
]

MODELS = [
    RealModel("nanogpt", "nanoGPT/model.py", _nanogpt),
    RealModel("mingpt", "minGPT/mingpt/model.py", _mingpt, packages=(("mingpt", "minGPT/mingpt"),)),
    *_vit_models(),
    *EXAMPLES,
]
