"""The server's side of the benchmark: run from a document, lens text, staleness, hover."""

from __future__ import annotations

import sys
import textwrap

import pytest

from torchwise.bench.service import COMMAND, LENS_TITLE, BenchService
from torchwise.engine import analyze
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span

pytest.importorskip("torch")

TEXT = textwrap.dedent("""\
    import torch
    x = torch.randn(2000)
    out = torch.empty(2000)
    for i in range(2000):
        out[i] = x[i] * 2 + 1
    print(out)
""")
URI = "file:///ws/loop.py"


def analysis_of(text: str):
    """The document's analysis with a TW401 finding on its loop (whatever the vectorizer says)."""
    analysis = analyze(text)
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("out = torch.empty"))
    span = Span(Position(first, 0), Position(first + 3, 0))
    header = Span(Position(first + 1, 0), Position(first + 1, len(lines[first + 1])))
    analysis.findings = [f for f in analysis.findings if not f.code.startswith("TW4")]
    analysis.findings.append(Finding("TW401", "loop", Severity.WARNING, header,
                                     [Fix("Vectorize", lambda: [Edit(span, "out = x * 2 + 1\n")])]))
    return analysis


@pytest.fixture(scope="module")
def service():
    s = BenchService(sys.executable, time_limit=60, device="cpu")
    s.budget_s = 0.3
    yield s
    s.shutdown()


async def test_run_then_lens_then_stale(service):
    analysis = analysis_of(TEXT)
    before = service.lenses(URI, TEXT, analysis)
    assert [(lens.line, lens.title, lens.command, lens.arguments) for lens in before] == \
        [(3, LENS_TITLE, COMMAND, [URI, 3])]
    stages = []
    answer = await service.benchmark(URI, TEXT, 3, analysis=analysis, on_progress=stages.append)
    assert answer["match"] is True and answer["device"] == "cpu" and answer["speedup"] > 1, answer
    assert "checking" in stages and "timing loop" in stages
    lens = service.lenses(URI, TEXT, analysis)[0]
    assert lens.title.startswith("⏱ loop ") and lens.title.endswith("· cpu · results match")
    assert "| loop |" in service.hover(URI, TEXT, 4)

    # Lines added above: the result moves along with its loop.
    shifted = TEXT.replace("import torch\n", "import torch\n\n\n")
    lens = service.lenses(URI, shifted, analysis_of(shifted))[0]
    assert lens.line == 5 and "(stale)" not in lens.title

    # The loop itself changed: the result is stale until it runs again.
    edited = shifted.replace("* 2 + 1", "* 3 + 1")
    lens = service.lenses(URI, edited, analysis_of(edited))[0]
    assert lens.title.startswith("⏱ (stale) loop")
    assert "changed since it was measured" in service.hover(URI, edited, 6)

    service.forget(URI)
    assert service.lenses(URI, TEXT, analysis)[0].title == LENS_TITLE


async def test_a_failure_comes_back_as_the_answers_message(service):
    answer = await service.benchmark(URI, "import torch\nx = 1\n", 1, analysis=analyze("import torch\nx = 1\n"))
    assert answer["loop_s"] is None and answer["match"] is None
    assert answer["message"].startswith("No loop torchwise can rewrite on line 2")
