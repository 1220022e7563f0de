"""One finding per site: when several rules describe the same call, the most specific speaks, on the smallest
meaningful range (engine.SITE_GROUPS)."""

from __future__ import annotations

from torchwise.engine import SITE_GROUPS, analyze


def codes(code: str) -> list:
    return [(f.code, f.span.start.line, f.span.start.col, f.span.end.line, f.span.end.col)
            for f in analyze(code).findings]


def test_create_then_move_speaks_for_the_cuda_call():
    # TW202 (a fresh factory moved at once), TW205 (no availability check) and TW201 (`.cuda()`) all describe it.
    found = codes("import torch\nx = torch.randn(3, 4).cuda()\n")
    assert found == [("TW202", 1, 22, 1, 28)]  # `cuda()`, not the whole expression


def test_hard_coded_cuda_speaks_for_the_cuda_hint():
    assert [c[0] for c in codes("import torch\nx = torch.zeros(3)\ny = x.cuda()\n")] == ["TW205"]


def test_the_hint_alone_where_the_file_checks_for_cuda():
    found = codes("import torch\nx = torch.zeros(3)\nif torch.cuda.is_available():\n    y = x.cuda()\n")
    assert [c[0] for c in found] == ["TW201"]


def test_a_long_constructor_is_underlined_at_its_cuda_call():
    code = "import torch\nfrom torch import nn\nmodel = nn.Linear(\n    4,\n    2,\n).cuda()\n"
    (found,) = codes(code)
    assert found[0] == "TW205" and found[1:] == (5, 2, 5, 8)


def test_suppressing_the_winner_lets_the_next_speak():
    found = codes("import torch\nx = torch.randn(3).cuda()  # noqa: TW202\n")
    assert [c[0] for c in found] == ["TW205"]


def test_groups_are_declared_once_per_code_and_order():
    for group in SITE_GROUPS:
        assert len(group) == len(set(group))
