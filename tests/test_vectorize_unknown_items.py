"""TW406 without a fix: per-item loops over items nothing is known of, whose results one ``torch.cat``/``stack`` joins.

The forms are the real ones of ``../shared/corpus`` (pytorch/examples' REINFORCE, actor-critic and RPC agents); the
near-misses are the loops that look alike and must stay silent: loops over sub-modules, recurrences, effects, data
that is known not to be tensors, lists joined by something else, a list that is not new.
"""

from __future__ import annotations

import textwrap

import pytest

from torchwise.engine import analyze

FLAGGED = {
    "reinforce": """
        import torch
        def finish_episode(policy, returns):
            policy_loss = []
            for log_prob, R in zip(policy.saved_log_probs, returns):
                policy_loss.append(-log_prob * R)
            policy_loss = torch.cat(policy_loss).sum()
            return policy_loss
    """,
    "actor-critic": """
        import torch
        import torch.nn.functional as F
        def finish_episode(saved_actions, returns):
            policy_losses = []
            value_losses = []
            for (log_prob, value), R in zip(saved_actions, returns):
                advantage = R - value.item()
                policy_losses.append(-log_prob * advantage)
                value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
            return torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    """,
    "tuple-init": """
        import torch
        def finish(probs, returns):
            R, policy_loss = 0, []
            for log_prob, R in zip(probs, returns):
                policy_loss.append(-log_prob * R)
            return torch.cat(policy_loss).sum()
    """,
    "one-list": """
        import torch
        def normalize(images, mean, std):
            out = []
            for img in images:
                out.append((img - mean) / std)
            return torch.stack(out)
    """,
}

SILENT = {
    "sub-modules": """
        import torch
        def features(blocks, x):
            outs = []
            for block in blocks:
                outs.append(block(x))
            return torch.cat(outs, dim=1)
    """,
    "recurrence": """
        import torch
        def run(steps, h):
            hs = []
            for x in steps:
                h = torch.tanh(x + h)
                hs.append(h)
            return torch.stack(hs)
    """,
    "not-joined": """
        import torch
        def losses(items):
            out = []
            for x in items:
                out.append(x * 2)
            return out
    """,
    "not-new": """
        import torch
        def grow(out, items):
            for x in items:
                out.append(x * 2)
            return torch.stack(out)
    """,
    "user-function": """
        import torch
        def load_all(paths, load):
            out = []
            for p in paths:
                out.append(torch.as_tensor(load(p)))
            return torch.stack(out)
    """,
    "numpy-io": """
        import numpy as np
        import torch
        def load_all(paths):
            out = []
            for p in paths:
                out.append(torch.from_numpy(np.load(p)))
            return torch.stack(out)
    """,
    "random-draw": """
        import torch
        def noisy(items):
            out = []
            for x in items:
                out.append(x + torch.randn(3))
            return torch.stack(out)
    """,
    "copy-only": """
        import torch
        def gather(items):
            out = []
            for x in items:
                out.append(x)
            return torch.stack(out)
    """,
    "branch": """
        import torch
        def pick(items):
            out = []
            for x in items:
                if x.sum() > 0:
                    out.append(x * 2)
            return torch.stack(out)
    """,
}


def _loop_findings(code: str) -> list:
    text = textwrap.dedent(code)
    return [f for f in analyze(text, "case.py").findings if f.code.startswith("TW40")]


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_flagged_with_the_reason_and_no_fix(name):
    findings = _loop_findings(FLAGGED[name])
    assert [f.code for f in findings] == ["TW406"], findings
    assert not findings[0].fixes
    assert "nothing is known here of what" in findings[0].message


@pytest.mark.parametrize("name", sorted(SILENT))
def test_near_misses_stay_silent(name):
    assert _loop_findings(SILENT[name]) == []


def test_the_message_names_only_what_is_unknown():
    findings = _loop_findings("""
        import torch
        def finish(returns):
            saved = [(torch.zeros(()), torch.zeros(1)) for _ in range(5)]
            losses = []
            for (log_prob, value), R in zip(saved, returns):
                losses.append(-log_prob * (R - value))
            return torch.stack(losses)
    """)
    assert [f.code for f in findings] == ["TW406"]
    assert "`returns` holds" in findings[0].message and "`saved`" not in findings[0].message


JOINS_FLAGGED = {
    "stack-of-ops": "def f(xs):\n    return torch.stack([x * 2 for x in xs])\n",
    "cat-of-zip": "def f(xs, ys):\n    return torch.cat([torch.relu(x) + y for x, y in zip(xs, ys)], dim=0)\n",
    "matmul": "def f(xs, w):\n    return torch.stack([x @ w for x in xs])\n",
}

JOINS_SILENT = {
    "sub-modules": "def f(blocks, x):\n    return torch.cat([blk(x) for blk in blocks], dim=1)\n",
    "copy-only": "def f(xs):\n    return torch.stack([x for x in xs])\n",
    "random-draw": "def f(xs):\n    return torch.stack([x + torch.randn(3) for x in xs])\n",
    "filtered": "def f(xs):\n    return torch.stack([x * 2 for x in xs if x.sum() > 0])\n",
    "numpy": "import numpy as np\ndef f(paths):\n    return torch.stack([torch.from_numpy(np.load(p)) for p in paths])\n",
    "method-of-item": "def f(items):\n    return torch.stack([item.render() for item in items])\n",
}


@pytest.mark.parametrize("name", sorted(JOINS_FLAGGED))
def test_joined_comprehensions_are_flagged(name):
    findings = _loop_findings("import torch\n" + JOINS_FLAGGED[name])
    assert [f.code for f in findings] == ["TW404"], findings
    assert not findings[0].fixes and "nothing is known here of what" in findings[0].message


@pytest.mark.parametrize("name", sorted(JOINS_SILENT))
def test_joined_comprehension_near_misses_stay_silent(name):
    assert _loop_findings("import torch\n" + JOINS_SILENT[name]) == []


def test_a_reduction_of_each_item_is_not_flagged():
    """timm's kron optimizer: `torch.stack([q.norm(float("inf")) for q in Q_in])` of factors of different shapes
    (a reduction batches only when the items have one shape; `torch._foreach_norm` is the list form)."""
    assert _loop_findings("import torch\ndef f(Q_in):\n    return torch.stack([q.norm(float('inf')) for q in Q_in])\n") == []
    assert _loop_findings("import torch\ndef f(Q_in):\n    out = []\n    for q in Q_in:\n        out.append(q.sum())\n"
                          "    return torch.stack(out)\n") == []
