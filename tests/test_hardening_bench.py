"""The benchmark runs only what the user asked for, and a cancel leaves it ready.

The setup filter is an allowlist: each attack below was accepted by the old denylist and executed
by ``torchwise bench`` (a subprocess, with real torch); now none of them runs, and the answer names
each refused line with its reason and says which of the user's lines it does run.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from torchwise.bench.prepare import BenchJob, prepare
from torchwise.bench.service import BenchService
from torchwise.bench.session import BenchSession
from torchwise.engine import analyze

pytest.importorskip("torch")

# Every input of the loop is changed in place by one attack, so the setup slice pulls each one in.
ATTACKS = textwrap.dedent("""\
    import torch
    import numpy as np
    from torch import os as tos
    a = torch.randn(100)
    b = torch.randn(100)
    c = torch.randn(100)
    dn = np.ones(100, dtype=np.float32)
    d = torch.from_numpy(dn)
    e = torch.randn(100)
    a.add_(0 * torch.os.system("touch RAN1"))
    b.add_(0 * (torch.builtins.exec("open('RAN2', 'w').close()") or 0))
    c.mul_(1 + 0 * tos.system("touch RAN3"))
    d.add_(0 * (np.ndarray.tofile(dn, "RAN4") or 0))
    e.add_(0 * sorted(["touch RAN5"], key=torch.os.system).index("touch RAN5"))
    out = torch.empty(100)
    for i in range(100):
        out[i] = a[i] + b[i] + c[i] + d[i] + e[i]
    """)
LOOP_LINE = 16  # 1-based


def bench(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise", "bench", f"{path.name}:{LOOP_LINE}", *args],
                          cwd=path.parent, capture_output=True, text=True, timeout=180)


def test_setup_code_off_the_allowlist_never_runs(tmp_path: Path):
    path = tmp_path / "attacks.py"
    path.write_text(ATTACKS, encoding="utf-8")
    result = bench(path, "--json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["attacks.py"], "setup code off the allowlist ran"
    answer = json.loads(result.stdout)
    assert answer["ok"] and answer["match"], answer  # it still runs, on inputs made from the facts
    message = answer["message"]
    for line, why in ((10, "calls `torch.os.system`"), (11, "calls `torch.builtins.exec`"),
                      (12, "calls `torch.os.system`"), (13, "calls `numpy.ndarray.tofile`"),
                      (14, "uses `torch.os.system`")):
        assert f"line {line} ({why}" in message, message
    assert "the loop (lines 15–17) and its rewrite" in message


@pytest.mark.parametrize("statement, why", [
    ("from torch import os", "imports `torch.os`"),
    ("import torch.utils.cpp_extension", "imports `torch.utils.cpp_extension`"),
    ("x = torch.load('x.pt')", "calls `torch.load`"),
    ("x = torch.hub.load('a', 'b')", "calls `torch.hub.load`"),
    ("x = np.fromfile('x.bin')", "calls `numpy.fromfile`"),
    ("x = torch.randn(3).numpy().tofile('x')", "calls `.tofile()`"),
    ("x = sorted(['a'], key=exec)", "uses `exec`"),
    ("x = max([1], key=print)", "uses `print`"),
    ("x = torch.randn(3).__class__", "reads `__class__`"),
    ("x = '{0.__init__}'.format(torch)", "calls `.format()`"),
    ("x = torch", "uses the module `torch` as a value"),
    ("x = getattr(torch, 'load')", "calls `getattr`"),
    ("x = [f(1) for f in [torch.save]]", "uses `torch.save`"),
    ("x = torch.randn(3).register_hook(print)", "calls `.register_hook()`"),
    ("x = np.ndarray.tofile", "uses `numpy.ndarray.tofile`"),
    ("x = torch.randn(3).apply_(abs)", "calls `.apply_()`"),
    # A function of the file is set up only when its body is plain too (a loop may call it).
    ("def f(x):\n    return x + torch.os.system('touch RAN')", "calls `torch.os.system`"),
    ("def f(x=torch.os.system('touch RAN')):\n    return x", "calls `torch.os.system`"),
    ("def f(x):\n    import os\n    return x", "a `import` statement"),
    ("@torch.jit.script\ndef f(x):\n    return x", "is decorated"),
    ("def f(x):\n    global y\n    return x", "a `global` statement"),
    ("def f(x):\n    return x.numpy().tofile('x')", "calls `.tofile()`"),
    ("def f(x):\n    return x()", "calls `x`"),
    ("def f(x):\n    for i in range(3):\n        x = x + i\n    return x", "a `for` statement"),
    # Annotations run with the `def` (Python < 3.14): a call in one is not a type.
    ("def f(x: torch.os.system('touch RAN')):\n    return x", "has an annotation that is not a plain type"),
    ("def f(x) -> print('RAN'):\n    return x", "has an annotation that is not a plain type"),
    ("def f(*xs: open('RAN', 'w')):\n    return xs", "has an annotation that is not a plain type"),
    ("def f(x, *, k: (lambda: 0)() = 1):\n    return x", "has an annotation that is not a plain type"),
])
def test_each_way_around_the_old_filter_is_refused_with_its_reason(statement: str, why: str):
    from torchwise.bench.plain import plain_statement

    text = f"import torch\nimport numpy as np\n{statement}\n"
    analysis = analyze(text)
    scope = analysis.facts.index.module_scope
    reason = plain_statement(analysis.source.tree.body[2], scope)
    assert reason is not None and why in reason, reason


@pytest.mark.parametrize("statement", [
    "x = torch.randn(3, 4).reshape(4, 3).T.contiguous()",
    "x = torch.zeros(3, dtype=torch.float64, device='cpu')",
    "x = np.random.default_rng(0).standard_normal((3,)).astype(np.float32)",
    "x = [torch.rand(2) for _ in range(4)]",
    "x = math.sqrt(2) * math.pi",
    "x = F.softmax(torch.randn(2, 3), dim=-1)",
    "x = sorted([3, 1], key=abs)",
    "x = torch.randn(5).shape[0]",
    "torch.manual_seed(0)",
    "x = torch.nn.init.normal_(torch.empty(3))",
    "def f(x):\n    \"\"\"Per sample.\"\"\"\n    y = torch.sin(x) * x\n    return y + x ** 2",
    "def f(x: torch.Tensor, n: 'int' = 2) -> torch.Tensor | None:\n    return torch.sin(x) * n",
])
def test_plain_setup_is_still_plain(statement: str):
    from torchwise.bench.plain import plain_statement

    text = f"import math\nimport torch\nimport torch.nn.functional as F\nimport numpy as np\n{statement}\n"
    analysis = analyze(text)
    assert plain_statement(analysis.source.tree.body[4], analysis.facts.index.module_scope) is None


def test_the_answer_says_which_of_the_users_lines_run():
    text = textwrap.dedent("""\
        import torch
        N = 2000
        data = torch.randn(N, 64)
        weight = torch.randn(64)
        out = torch.empty(N)
        for i in range(N):
            out[i] = torch.dot(data[i], weight)
        """)
    job = prepare(text, 5)
    assert isinstance(job, BenchJob), job
    assert job.runs == "Benchmark runs your lines 2–4 as setup, then the loop (lines 5–7) and its rewrite."


def test_the_setup_never_runs_a_functions_annotations():
    # They run when the `def` does; the benchmark needs none of them, so the setup it runs has none.
    text = textwrap.dedent("""\
        import torch


        def f(x: torch.Tensor) -> torch.Tensor:
            return torch.sin(x) * x + x ** 2


        tensor_list = [torch.randn(64) for _ in range(200)]
        outputs = torch.stack([f(x) for x in tensor_list])
        """)
    job = prepare(text, 8)
    assert isinstance(job, BenchJob), job
    assert "def f(x):" in job.setup.splitlines(), job.setup
    assert "torch.Tensor" not in job.setup


ELEMENTWISE = {"setup": "x = torch.randn(100)\n", "loop": "y = torch.empty(100)\nfor i in range(100):\n"
               "    y[i] = x[i] * 2\n", "vectorized": "y = x * 2\n", "outputs": ["y"], "device": "cpu",
               "budget_s": 0.05, "scale": None, "no_grad": False, "threads": None}
FOREVER = dict(ELEMENTWISE, loop="while True:\n    pass\n")


async def test_a_cancel_kills_the_worker_and_the_next_run_is_ready_at_once():
    session = BenchSession(sys.executable, time_limit=60)
    try:
        assert (await session.run_async(ELEMENTWISE))["ok"]
        stuck = asyncio.ensure_future(session.run_async(FOREVER))
        await asyncio.sleep(1.0)
        session.cancel()  # what the service's cancel() does: from any thread, no task to cancel
        result = await asyncio.wait_for(stuck, 10)
        assert result["error"] == "cancelled", result
        # A fresh worker is already importing torch: the next run does not wait behind the cancelled one.
        deadline = time.monotonic() + 30
        while not session.warm and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        started = time.monotonic()
        again = await session.run_async(ELEMENTWISE)
        assert again["ok"] and again["cold"] is False, again
        assert time.monotonic() - started < 10
        assert session.starts == 2
    finally:
        session.shutdown()


async def test_an_untrusted_workspace_gets_no_lens_and_runs_nothing():
    text = textwrap.dedent("""\
        import torch
        data = torch.randn(200, 8)
        out = torch.empty(200)
        for i in range(200):
            out[i] = data[i].sum()
        """)
    analysis = analyze(text)
    service = BenchService(sys.executable, trusted=False)
    try:
        assert service.lenses("file:///w.py", text, analysis) == []
        answer = await service.benchmark("file:///w.py", text, 3, analysis=analysis)
        assert answer["loop_s"] is None and "untrusted workspace" in answer["message"]
        assert service.session.starts == 0  # no process was even started
        service.configure(trusted=True)
        assert len(service.lenses("file:///w.py", text, analysis)) == 1
    finally:
        service.shutdown()


def test_a_form_feed_in_the_loop_code_does_not_break_it_into_lines():
    session = BenchSession(sys.executable, time_limit=60)
    loop = 'y = torch.empty(100)\nfor i in range(100):\n    y[i] = x[i] * len("a\x0cb\u2028")\n'
    try:
        result = session.run(dict(ELEMENTWISE, loop=loop, vectorized='y = x * len("a\x0cb\u2028")\n'))
    finally:
        session.shutdown()
    assert result["ok"] and result["match"], result


@pytest.mark.parametrize("option", [("--time-limit", "inf"), ("--time-limit", "nan"), ("--budget", "nan"),
                                    ("--budget", "inf")])
def test_a_time_limit_or_budget_that_is_no_number_of_seconds_is_refused(tmp_path: Path, option):
    # `--time-limit inf` was an OverflowError traceback, `nan` passed the "positive" check (nan <= 0 is false).
    path = tmp_path / "loop.py"
    path.write_text("import torch\nx = torch.randn(100)\ny = torch.empty(100)\nfor i in range(100):\n"
                    "    y[i] = x[i] * 2\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "torchwise", "bench", "loop.py:4", *option], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert result.returncode == 2, result.stdout + result.stderr
    assert "must be positive numbers of seconds" in result.stderr
