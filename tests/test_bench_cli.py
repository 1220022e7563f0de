"""``torchwise bench FILE:LINE`` as a subprocess (``python -m torchwise.bench``, the same code the
``torchwise bench`` subcommand calls)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchwise.rules import ALL_RULES

ROOT = Path(__file__).resolve().parents[1]
HAS_LOOP_RULES = any(rule.code.startswith("TW4") for rule in ALL_RULES)


def bench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise.bench", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_usage_errors_exit_2_with_one_line():
    done = bench("examples/vectorize_me.py")
    assert done.returncode == 2 and "expected FILE:LINE" in done.stderr
    done = bench("no/such/file.py:3")
    assert done.returncode == 2 and "cannot read no/such/file.py" in done.stderr
    done = bench("examples/vectorize_me.py:21", "--size", "N")
    assert done.returncode == 2 and "--size wants NAME=VALUE" in done.stderr


def test_a_line_without_a_rewritable_loop_exits_2(tmp_path: Path):
    path = tmp_path / "plain.py"
    path.write_text("import torch\nx = torch.randn(3)\n")
    done = bench(f"{path}:2")
    assert done.returncode == 2
    assert "No loop torchwise can rewrite on line 2" in done.stderr
    assert done.stdout == ""


@pytest.mark.skipif(not HAS_LOOP_RULES, reason="the TW4xx rules are not registered yet")
def test_the_seed_dot_product_loop(tmp_path: Path):
    pytest.importorskip("torch")
    done = bench("examples/vectorize_me.py:21", "--json", "--device", "cpu", "--threads", "1")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["match"] is True and result["device"] == "cpu" and result["speedup"] > 10
    assert set(result) >= {"loop_s", "vectorized_s", "speedup", "device", "match", "message"}
    text = bench("examples/vectorize_me.py:21", "--device", "cpu", "--threads", "1")
    assert text.returncode == 0, text.stderr
    first = text.stdout.splitlines()[0]
    assert first.startswith("examples/vectorize_me.py:") and "vectorized" in first and "results match" in first
