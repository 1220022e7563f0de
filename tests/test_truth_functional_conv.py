"""TW508 on `F.conv1d/2d/3d` against real torch: generated inputs, weights and groups.

TW508 must fire only where torch raises; where only the channels are wrong (everything else fits), it must fire.
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

from torchwise.engine import analyze  # noqa: E402


def _program(rng: random.Random) -> tuple[str, bool]:
    rank = rng.randint(1, 3)
    groups = rng.choice([1, 1, 2])
    in_channels = rng.choice([2, 4])
    weight_in = rng.choice([in_channels // groups, in_channels // groups, in_channels, 3])
    batched = rng.random() < 0.7
    spatial = tuple(rng.choice([5, 6]) for _ in range(rank))
    x = ((2,) if batched else ()) + (in_channels,) + spatial
    weight = (groups * rng.choice([1, 2]), weight_in) + (3,) * rank
    call = f"F.conv{rank}d(x, w{', groups=' + str(groups) if groups != 1 else ''})"
    code = (f"import torch\nimport torch.nn.functional as F\nx = torch.randn{x}\nw = torch.randn{weight}\n"
            f"y = {call}\n")
    return code, weight_in * groups != in_channels


def test_functional_conv_channels_agree_with_torch():
    rng = random.Random(508)
    flagged = wrong_channels = 0
    for _ in range(400):
        code, channels_wrong = _program(rng)
        try:
            exec(compile(code, "<conv>", "exec"), {})
            raises = False
        except RuntimeError:
            raises = True
        fires = "TW508" in [f.code for f in analyze(code).findings]
        assert not fires or raises, f"TW508 where torch runs:\n{code}"
        assert fires == channels_wrong, f"TW508 {'fired' if fires else 'silent'}; channels wrong: {channels_wrong}\n{code}"
        flagged += fires
        wrong_channels += channels_wrong
    assert flagged == wrong_channels > 50
