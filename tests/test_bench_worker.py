"""The benchmark worker with real torch (CPU build), driven through ``BenchSession`` as the server does.

Jobs here are written by hand (setup / loop / rewrite), so these tests do not depend on the
vectorizer; ``test_bench_prepare.py`` checks how jobs are built from a file.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torchwise.bench.session import BenchSession

torch = pytest.importorskip("torch")  # the worker needs it in this interpreter

DOT_SETUP = """\
N = _tw_n
data = torch.randn(N, 512, device=DEVICE)
weight = torch.randn(512, device=DEVICE)
bias = 0.5
"""
DOT_LOOP = """\
out = torch.empty(N)
for i in range(N):
    out[i] = torch.dot(data[i], weight) + bias
"""
DOT_SCALE = {"var": "_tw_n", "full": 10000, "label": "N"}


def dot_job(vectorized: str = "out = data @ weight + bias\n", **extra) -> dict:
    job = {"setup": DOT_SETUP, "loop": DOT_LOOP, "vectorized": vectorized, "outputs": ["out"],
           "device": "cpu", "budget_s": 1.0, "scale": DOT_SCALE, "threads": 1}
    job.update(extra)
    return job


def tiny_job(loop: str, vectorized: str = "y = x * 2\n", outputs=("y",), setup: str = "x = torch.randn(100)\n",
             **extra) -> dict:
    job = {"setup": setup, "loop": loop, "vectorized": vectorized, "outputs": list(outputs), "device": "cpu",
           "budget_s": 0.2, "scale": None, "threads": 1}
    job.update(extra)
    return job


ELEMENTWISE = "y = torch.empty(100)\nfor i in range(100):\n    y[i] = x[i] * 2\n"


@pytest.fixture(scope="module")
def session():
    s = BenchSession(sys.executable, time_limit=60)
    yield s
    s.shutdown()


def test_dot_product_loop_is_much_slower_and_matches(session):
    cold_start = time.monotonic()
    result = session.run(dot_job())
    cold = time.monotonic() - cold_start
    assert result["ok"], result
    assert result["match"] is True, result["message"]
    assert result["message"] == "results match"
    assert result["device"] == "cpu"
    assert result["torch"] == torch.__version__
    assert result["speedup"] > 10, result  # typically 100-300x on one thread
    assert result["loop_s"] > result["vectorized_s"]
    assert result["loop_runs"] >= 1 and result["vectorized_runs"] >= 10
    assert result["loop_iqr_s"] is not None and result["vectorized_iqr_s"] is not None
    assert result["max_diff"] < 1e-3
    print(f"\ncold dot-product run: {cold:.2f} s, {result['speedup']:.0f}x, scaled={result['scaled']}")


def test_warm_second_run_reuses_the_process(session):
    session.run(tiny_job(ELEMENTWISE))  # make sure it is warm
    pid, starts = session.hello["pid"], session.starts
    started = time.monotonic()
    result = session.run(dot_job())
    warm = time.monotonic() - started
    assert result["ok"] and result["match"] and result["cold"] is False
    assert session.hello["pid"] == pid and session.starts == starts  # torch was not imported again
    assert warm < 5  # budget 1 s of measuring; spec budget < 2 s on an idle machine
    print(f"\nwarm dot-product run: {warm:.2f} s (worker said {result['elapsed_s']:.2f} s), "
          f"{result['speedup']:.0f}x")


def test_a_wrong_rewrite_is_reported_as_a_mismatch_with_the_max_difference(session):
    result = session.run(dot_job("out = data @ weight - bias\n"))
    assert result["ok"]
    assert result["match"] is False
    assert result["max_diff"] == pytest.approx(1.0, abs=1e-3)  # +0.5 vs -0.5
    assert "RESULTS DIFFER" in result["message"] and "`out`" in result["message"]


def test_shape_and_dtype_must_agree_too(session):
    shape = session.run(tiny_job(ELEMENTWISE, vectorized="y = (x * 2)[:, None]\n"))
    assert shape["ok"] and shape["match"] is False and "RESULTS DIFFER" in shape["message"]
    dtype = session.run(tiny_job(ELEMENTWISE, vectorized="y = (x * 2).double()\n"))
    assert dtype["ok"] and dtype["match"] is False


def test_in_place_code_cannot_leak_between_the_two_versions(session):
    # The loop scales x in place; the rewrite must still see the original x.
    loop = "for i in range(100):\n    x[i] *= 2\ny = x\n"
    result = session.run(tiny_job(loop, vectorized="y = x * 2\n"))
    assert result["ok"] and result["match"], result["message"]


def test_a_slow_loop_is_measured_on_a_smaller_first_dimension(session):
    setup = "import time\nN = _tw_n\nx = torch.randn(N)\ndef pause():\n    time.sleep(0.0005)\n"
    loop = "y = torch.empty(N)\nfor i in range(N):\n    y[i] = x[i] * 2\n    pause()\n"
    job = {"setup": setup, "loop": loop, "vectorized": "y = x * 2\n", "outputs": ["y"], "device": "cpu",
           "budget_s": 0.5, "scale": {"var": "_tw_n", "full": 10000, "label": "N"}, "threads": 1}
    started = time.monotonic()
    result = session.run(job)
    assert result["ok"] and result["match"], result
    assert result["n"] < 10000 and result["n_full"] == 10000
    assert result["scaled"] == f"N={result['n']} of 10000"
    assert time.monotonic() - started < 15  # the whole loop would take 5 s a run


def test_user_code_that_raises_is_one_clear_message(session):
    result = session.run(tiny_job("y = x[1000]\n"))
    assert not result["ok"] and result["error"] == "loop_error"
    assert "IndexError" in result["message"] and "line 1 of the loop" in result["message"]
    setup = session.run(tiny_job(ELEMENTWISE, setup="x = torch.randn(3, 4) @ torch.randn(5)\n"))
    assert not setup["ok"] and setup["error"] == "setup_error" and "RuntimeError" in setup["message"]
    oom = session.run(tiny_job("raise MemoryError()\n"))
    assert not oom["ok"] and oom["error"] == "oom" and "Out of memory" in oom["message"]
    # The worker survived all of that.
    assert session.run(tiny_job(ELEMENTWISE))["ok"]


def test_prints_in_user_code_do_not_break_the_protocol(session):
    loop = "print('hello from the loop')\nimport os\nos.write(1, b'raw bytes on fd 1\\n')\n" + ELEMENTWISE
    result = session.run(tiny_job(loop))
    assert result["ok"] and result["match"], result


def test_an_infinite_loop_is_killed_at_the_time_limit_and_the_next_run_works():
    s = BenchSession(sys.executable, time_limit=60)
    try:
        assert s.run(tiny_job(ELEMENTWISE))["ok"]  # warm: the limit below is for the loop alone
        first_pid = s.hello["pid"]
        started = time.monotonic()
        result = s.run(tiny_job("while True:\n    pass\n"), time_limit=2)
        elapsed = time.monotonic() - started
        assert not result["ok"] and result["error"] == "timeout"
        assert "Stopped after 2 s" in result["message"] and "time limit" in result["message"]
        assert 1.9 < elapsed < 10
        assert not _alive(first_pid)
        again = s.run(tiny_job(ELEMENTWISE))
        assert again["ok"] and again["cold"] is True and s.starts == 2
        assert s.hello["pid"] != first_pid
        # User code that takes the process down: one message, and a fresh worker next time.
        died = s.run(tiny_job("import os\nos._exit(7)\n"))
        assert not died["ok"] and died["error"] == "worker_died" and "exited with code 7" in died["message"]
        assert s.run(tiny_job(ELEMENTWISE))["ok"] and s.starts == 3
    finally:
        s.shutdown()


async def test_cancelling_the_awaiting_task_kills_the_run():
    s = BenchSession(sys.executable, time_limit=60)
    try:
        assert (await s.run_async(tiny_job(ELEMENTWISE)))["ok"]
        pid = s.hello["pid"]
        stages = []
        task = asyncio.ensure_future(s.run_async(tiny_job("while True:\n    pass\n"), on_progress=stages.append))
        await asyncio.sleep(1.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(50):
            if not _alive(pid):
                break
            await asyncio.sleep(0.1)
        assert not _alive(pid)
        assert "checking" in stages  # progress arrived on the event loop
        assert (await s.run_async(tiny_job(ELEMENTWISE)))["ok"]
    finally:
        s.shutdown()


def test_an_interpreter_without_torch_gets_a_clear_message(tmp_path: Path):
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    s = BenchSession(str(python), time_limit=30)
    try:
        result = s.run(tiny_job(ELEMENTWISE))
    finally:
        s.shutdown()
    assert not result["ok"] and result["error"] == "no_torch"
    assert "torch is not installed in" in result["message"] and "Install torch" in result["message"]


def test_a_missing_interpreter_gets_a_clear_message(tmp_path: Path):
    s = BenchSession(str(tmp_path / "no-such-python"), time_limit=10)
    result = s.run(tiny_job(ELEMENTWISE))
    assert not result["ok"] and result["error"] == "interpreter_not_found"
    assert "Cannot start the Python interpreter" in result["message"]


def test_the_server_side_never_imports_torch():
    code = (
        "import sys\n"
        "from torchwise.bench import api, cli, prepare, result, session, region, plain, synth\n"
        "from torchwise.bench.session import BenchSession\n"
        "s = BenchSession(sys.executable, 60)\n"
        "r = s.run({'setup': 'x = torch.randn(10)', 'loop': 'y = x * 2', 'vectorized': 'y = x + x',\n"
        "           'outputs': ['y'], 'device': 'cpu', 'budget_s': 0.05, 'scale': None})\n"
        "s.shutdown()\n"
        "assert r['ok'] and r['match'], r\n"
        "assert 'torch' not in sys.modules, 'the server imported torch'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers signal 0: look at its state.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_factories_in_the_loop_are_placed_on_the_benchmark_device():
    """On a GPU the loop's preallocated output must be made there too, as it is in GPU code (the
    CPU build cannot run that; the placement itself is a text change, checked here)."""
    import ast

    from torchwise.bench import worker_main

    code = ("out = torch.empty(N)\nb = T.ones((2, 2), dtype=torch.float64)\nc = torch.zeros(2, device='cpu')\n"
            "d = torch.zeros(\n    3,\n)\ne = torch.eye()\nf = torch.empty_like(x)\n")
    placed = worker_main.place_factories(code, ast.parse(code), {"torch", "T"})
    assert placed == ("out = torch.empty(N, device=_tw_device)\n"
                      "b = T.ones((2, 2), dtype=torch.float64, device=_tw_device)\n"
                      "c = torch.zeros(2, device='cpu')\n"
                      "d = torch.zeros(\n    3,\n device=_tw_device)\ne = torch.eye(device=_tw_device)\n"
                      "f = torch.empty_like(x)\n")


def test_memory_and_scaling_are_measured_on_cpu():
    """Peak memory of one run of each (Linux: the resident-set peak), and both timed at N/16, N/4 and N."""
    pytest.importorskip("torch")
    from torchwise.bench.api import run_benchmark
    from torchwise.bench.session import BenchSession

    text = ("import torch\nN = 4000\nx = torch.randn(N, 256)\nout = torch.empty(N)\n"
            "for i in range(N):\n    out[i] = x[i].sum()\n")
    session = BenchSession(None, 60)
    try:
        result = run_benchmark(session, text, 4, device="cpu", budget_s=0.3)
    finally:
        session.shutdown()
    assert result["ok"] and result["match"], result.get("message")
    assert [p["n"] for p in result["scaling"]][-1] == result["n"] and len(result["scaling"]) == 3
    assert result["scaling"][0]["n"] == result["n"] // 16
    memory = result["memory"]
    if sys.platform.startswith("linux"):
        assert memory["method"] == "rss" and memory["loop_peak_bytes"] >= 0 and memory["vectorized_peak_bytes"] >= 0
