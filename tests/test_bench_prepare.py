"""From a file and a line to a benchmark job: which statements, which inputs, what is refused.

The TW4xx fixes are stand-ins built here the way the vectorizer builds them (whole lines replaced),
so these tests only need a Finding with a Fix; jobs that synthesize inputs are also run in the
real worker to show the synthesized code works.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from torchwise.bench.prepare import BenchJob, Problem, prepare
from torchwise.bench.region import find_target, fingerprint, free_names, lens_line, outputs_of
from torchwise.engine import analyze
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span


def stub(text: str, first: int, last: int, new: str, code: str = "TW401", at: int | None = None) -> Finding:
    """A fix replacing lines ``first..last`` (1-based) by ``new`` (indented like ``first``), with its
    finding on line ``at`` (default ``first``)."""
    lines = text.splitlines(keepends=True)
    indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
    body = "".join(indent + line + "\n" for line in textwrap.dedent(new).strip("\n").splitlines())
    span = Span(Position(first - 1, 0), Position(last, 0))
    line = (at or first) - 1
    return Finding(code, "stub", Severity.WARNING, Span(Position(line, len(indent)), Position(line, len(indent) + 3)),
                   [Fix("Vectorize", lambda: [Edit(span, body)])])


def job_for(text: str, first: int, last: int, new: str, sizes=None, code="TW401", line=None) -> BenchJob | Problem:
    text = textwrap.dedent(text)
    return prepare(text, (line or first) - 1, sizes, findings=[stub(text, first, last, new, code)])


DOT = """\
import torch
data = torch.randn(10000, 512)
weight = torch.randn(512)
bias = 0.5
N = data.shape[0]
out = torch.empty(N)
for i in range(N):
    out[i] = torch.dot(data[i], weight) + bias
print(out.sum())
"""


def test_the_dot_product_loop_uses_the_files_own_setup():
    job = job_for(DOT, 6, 8, "out = data @ weight + bias")
    assert isinstance(job, BenchJob), job
    assert job.loop == "out = torch.empty(N)\nfor i in range(N):\n    out[i] = torch.dot(data[i], weight) + bias\n"
    assert job.vectorized == "out = data @ weight + bias\n"
    assert job.outputs == ["out"]
    assert job.setup.splitlines() == [
        "import torch",
        "data = torch.randn(_tw_n, 512)",  # the trip count became the scale variable
        "weight = torch.randn(512)",
        "bias = 0.5",
        "N = data.shape[0]",
    ]
    assert job.scale == {"var": "_tw_n", "full": 10000, "label": "N"}
    assert job.line == 5 and job.end_line == 7
    assert "your setup code (lines 2–5)" in job.inputs
    assert job.setup_lines[1] == 2  # errors in setup map back to the file


def test_the_target_is_found_from_the_loop_line_a_body_line_or_the_finding_line():
    text = textwrap.dedent(DOT)
    finding = stub(text, 6, 8, "out = data @ weight + bias", at=8)
    tree = analyze(text).source.tree
    for line in (5, 6, 7):  # the allocation, the `for`, the body
        assert find_target(tree, [finding], line) is finding, line
    assert find_target(tree, [finding], 1) is None
    assert lens_line(tree, finding) == 6  # the `for` above the body line


def test_no_rewritable_loop_is_a_problem():
    result = prepare(textwrap.dedent(DOT), 6, findings=[])
    assert isinstance(result, Problem) and "No loop torchwise can rewrite on line 7" in result.message


def test_names_read_before_they_are_written():
    code = "acc = torch.cat([acc, x])\nfor i in range(n):\n    s += y[i]\n    t = i\nz = [v for v in w]\n"
    assert free_names(code) == ["torch", "acc", "x", "range", "n", "s", "y", "w"]
    assert outputs_of("for i in range(N):\n    out[i] = x[i]\n", "out = x.clone()\n") == ["out"]


def test_a_setup_statement_that_reads_a_file_is_refused():
    text = """\
    import torch
    data = torch.load("data.pt")
    out = torch.empty(100)
    for i in range(100):
        out[i] = data[i] * 2
    """
    result = job_for(text, 3, 5, "out = data * 2")
    assert isinstance(result, Problem)
    assert "the value of `data`" in result.message and "torch.load" in result.message and "line 2" in result.message


def test_open_is_never_run_and_its_value_can_be_given_as_a_size():
    text = """\
    import torch
    with open("n.txt") as f:
        n = int(f.read())
    x = torch.randn(1000)
    out = torch.empty(1000)
    for i in range(n):
        out[i] = x[i] * 2
    """
    result = job_for(text, 5, 7, "out = x * 2")
    assert isinstance(result, Problem) and result.sizes == ["n"]
    assert "--size n=1000" in result.message and "with" in result.message
    job = job_for(text, 5, 7, "out = x * 2", sizes={"n": 1000})
    assert isinstance(job, BenchJob), job
    assert "open(" not in job.setup and "n = 1000" in job.setup.splitlines()


def test_imports_of_other_modules_are_refused():
    text = """\
    import torch
    import pandas as pd
    x = torch.tensor(pd.read_csv("x.csv").values)
    out = torch.empty(100)
    for i in range(100):
        out[i] = x[i] * 2
    """
    result = job_for(text, 4, 6, "out = x * 2")
    assert isinstance(result, Problem) and "pandas.read_csv" in result.message
    text = """\
    import torch
    import os
    out = torch.empty(100)
    x = torch.randn(100)
    for i in range(100):
        out[i] = x[i] * float(os.environ["SCALE"])
    """
    result = job_for(text, 3, 6, "out = x * 2")
    assert isinstance(result, Problem) and "`os`" in result.message


def test_a_call_to_a_function_of_the_file_is_not_run():
    text = """\
    import torch
    def make():
        return torch.randn(100, 8)
    x = make()
    out = torch.empty(100)
    for i in range(100):
        out[i] = x[i].sum()
    """
    job = job_for(text, 5, 7, "out = x.sum(1)")
    assert isinstance(job, BenchJob), job  # the facts know make() returns a (100, 8) tensor
    assert "make(" not in job.setup
    assert "x = torch.randn(_tw_n, 8, dtype=torch.float32, device=DEVICE)" in job.setup
    assert "synthesized from the inferred types" in job.inputs
    calls = """\
    import torch
    def helper(v):
        return v * 2
    x = torch.randn(100)
    out = torch.empty(100)
    for i in range(100):
        out[i] = helper(x[i])
    """
    # A plain helper (assignments and a return of allowed ops) is set up like a value; any other is not run.
    job = job_for(calls, 5, 7, "out = x * 2")
    assert isinstance(job, BenchJob), job
    assert "def helper(v):" in job.setup
    impure = calls.replace("        return v * 2", "        print(v)\n        return v * 2")
    result = job_for(impure, 6, 8, "out = x * 2")
    assert isinstance(result, Problem) and "`helper`, a function of this file" in result.message


def test_plain_setup_may_use_comprehensions_methods_and_numpy():
    text = """\
    import numpy as np
    import torch
    images = [torch.rand(3, 32, 32) for _ in range(64)]
    mean = torch.tensor([0.485, 0.456, 0.406]).reshape(3, 1, 1)
    std = torch.from_numpy(np.array([0.229, 0.224, 0.225], dtype=np.float32)).reshape(3, 1, 1)
    normalized = []
    for img in images:
        normalized.append((img - mean) / std)
    batch = torch.stack(normalized)
    """
    job = job_for(text, 6, 9, "batch = (torch.stack(images) - mean) / std", code="TW406")
    assert isinstance(job, BenchJob), job
    assert "import numpy as np" in job.setup
    assert "images = [torch.rand(3, 32, 32) for _ in range(64)]" in job.setup
    assert job.outputs == ["batch"]


def test_a_loop_in_a_function_gets_its_parameters_from_annotations_and_sizes():
    text = """\
    import torch
    from jaxtyping import Float, Int
    from torch import Tensor

    def score(x: Float[Tensor, "n d"], w: Float[Tensor, "d"], idx: Int[Tensor, "n"], table: Float[Tensor, "v"]):
        out = torch.empty(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = torch.dot(x[i], w) + table[idx[i]]
        return out
    """
    missing = job_for(text, 6, 8, "out = x @ w + table[idx]")
    assert isinstance(missing, Problem)
    assert set(missing.sizes) == {"n", "d", "v"} and "unknown sizes" in missing.message
    job = job_for(text, 6, 8, "out = x @ w + table[idx]", sizes={"n": 2000, "d": 64, "v": 50})
    assert isinstance(job, BenchJob), job
    assert "x = torch.randn(_tw_n, 64, dtype=torch.float32, device=DEVICE)" in job.setup
    # An integer tensor used as an index gets values inside the dimension it indexes.
    assert "idx = torch.randint(0, 50, (_tw_n,), dtype=torch.int64, device=DEVICE)" in job.setup
    assert job.scale["full"] == 2000


def test_a_method_reads_self_attributes_from_the_class():
    text = """\
    import torch
    from torch import nn, Tensor
    from jaxtyping import Float

    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.randn(64)

        def forward(self, x: Float[Tensor, "n 64"]):
            out = torch.empty(x.shape[0])
            for i in range(x.shape[0]):
                out[i] = torch.dot(x[i], self.w)
            return out
    """
    job = job_for(text, 11, 13, "out = x @ self.w", sizes={"n": 300})
    assert isinstance(job, BenchJob), job
    assert "self = _tw_types.SimpleNamespace(w=torch.randn(64, dtype=torch.float32, device=DEVICE))" in job.setup


def test_globals_of_a_function_come_from_module_level_setup():
    text = """\
    import torch
    keys = torch.randn(256, 64)
    query = torch.randn(64)

    def cosine():
        sims = torch.zeros(256)
        for i in range(256):
            sims[i] = torch.dot(keys[i], query) / (keys[i].norm() * query.norm())
        return sims
    """
    job = job_for(text, 6, 8, "sims = keys @ query / (keys.norm(dim=1) * query.norm())")
    assert isinstance(job, BenchJob), job
    assert job.setup.splitlines() == ["import torch", "keys = torch.randn(_tw_n, 64)", "query = torch.randn(64)"]
    # The literal trip count in the loop itself scales too, so both versions run at the same size.
    assert job.loop.startswith("sims = torch.zeros(_tw_n)\nfor i in range(_tw_n):")


def test_the_fingerprint_follows_the_loop_text():
    text = textwrap.dedent(DOT)
    job = job_for(DOT, 6, 8, "out = data @ weight + bias")
    assert job.fingerprint == fingerprint(text, 5, 7)
    changed = text.replace("+ bias", "- bias")
    assert fingerprint(changed, 5, 7) != job.fingerprint
    assert fingerprint(text.replace("print(out.sum())", "print(out.mean())"), 5, 7) == job.fingerprint


@pytest.fixture(scope="module")
def session():
    pytest.importorskip("torch")
    from torchwise.bench.session import BenchSession

    s = BenchSession(sys.executable, time_limit=60)
    yield s
    s.shutdown()


def test_synthesized_inputs_run_in_the_worker(session):
    text = """\
    import torch
    from jaxtyping import Float, Int
    from torch import Tensor

    def score(x: Float[Tensor, "n d"], w: Float[Tensor, "d"], idx: Int[Tensor, "n"], table: Float[Tensor, "v"]):
        out = torch.empty(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = torch.dot(x[i], w) + table[idx[i]]
        return out
    """
    job = job_for(text, 6, 8, "out = x @ w + table[idx]", sizes={"n": 2000, "d": 64, "v": 50})
    result = session.run(job.request("cpu", 0.3, threads=1))
    assert result["ok"] and result["match"], result
    method = """\
    import torch
    from torch import nn, Tensor
    from jaxtyping import Float

    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.randn(64)

        def forward(self, x: Float[Tensor, "n 64"]):
            out = torch.empty(x.shape[0])
            for i in range(x.shape[0]):
                out[i] = torch.dot(x[i], self.w)
            return out
    """
    job = job_for(method, 11, 13, "out = x @ self.w", sizes={"n": 300})
    result = session.run(job.request("cpu", 0.3, threads=1))
    assert result["ok"] and result["match"], result


def test_a_loop_error_points_at_the_files_line(session):
    from torchwise.bench.api import finish

    text = """\
    import torch
    x = torch.randn(100)
    out = torch.empty(100)
    for i in range(100):
        out[i] = x[i + 1] * 2
    """
    job = job_for(text, 3, 5, "out = x * 2")
    result = finish(job, session.run(job.request("cpu", 0.2, threads=1)))
    assert not result["ok"] and result["error"] == "loop_error"
    assert "IndexError" in result["message"] and "(line 5)" in result["message"]
    assert result["error_line"] == 5


def test_insertions_before_and_after_the_loop_belong_to_it():
    text = textwrap.dedent("""\
        import torch
        x = torch.randn(10, 4)
        out = torch.zeros(0, 4)
        for k in range(3):
            y = x * k
            out = torch.cat([out, y], dim=0)
        print(out.shape)
    """)
    edits = [Edit(Span(Position(3, 0), Position(3, 0)), "out_parts = [out]\n"),
             Edit(Span(Position(5, 0), Position(6, 0)), "    out_parts.append(y)\n"),
             Edit(Span(Position(6, 0), Position(6, 0)), "out = torch.cat(out_parts, dim=0)\n")]
    finding = Finding("TW402", "cat", Severity.WARNING, Span(Position(3, 0), Position(3, 3)),
                      [Fix("Collect", lambda: edits)])
    job = prepare(text, 3, findings=[finding])
    assert isinstance(job, BenchJob), job
    assert job.loop == "for k in range(3):\n    y = x * k\n    out = torch.cat([out, y], dim=0)\n"
    assert job.vectorized == ("out_parts = [out]\nfor k in range(3):\n    y = x * k\n    out_parts.append(y)\n"
                              "out = torch.cat(out_parts, dim=0)\n")
    assert "print" not in job.loop + job.vectorized  # the next statement is not part of the run
    assert job.outputs == ["k", "out", "y"]  # what both versions set, loop variables included
