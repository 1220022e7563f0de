"""The article's seven loops, verbatim (issue 12's proof): each gets the article's own rewrite, and
``torchwise bench FILE:LINE`` (the CLI as a subprocess, real torch on the CPU) reports that the rewrite's
results match the loop's.

The programs are the ``article-*`` cases of the loop development set (``tests/loops_eval/cases``), with
the article's inputs (the dot product keeps ``bias = torch.randn(1)``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from torchwise.engine import analyze  # noqa: E402
from torchwise.fixing import apply_edits, preferred_edits  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "loops_eval" / "cases"
MARKER = "# ---- vectorized ----"

# the rewrite the article gives for each loop
ARTICLE = {
    "article-dot-product-bias": "results_loop = data @ weight + bias",
    "article-positive-filter": "result = tensor[tensor > 0]",
    "article-image-normalization": "batch = (torch.stack(images) - mean) / std",
    "article-cosine-similarity-fn": "    result = F.cosine_similarity(a, b, dim=1)",
    "article-comprehension-double": "doubled = tensor * 2",
    "article-stack-user-function": "outputs = torch.vmap(f)(torch.stack(tensor_list))",
    "article-cat-accumulation": "result = torch.cat(chunks)",
}


def program_of(name: str) -> str:
    """The case's first program, its ``# key: value`` header left out."""
    text = (CASES / f"{name}.py").read_text().split(MARKER)[0]
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("# "):
        lines.pop(0)
    return "".join(lines)


@pytest.mark.parametrize("name", sorted(ARTICLE))
def test_article_loop_gets_the_article_rewrite(name: str):
    code = program_of(name)
    findings = [f for f in analyze(code).findings if f.code.startswith("TW40") and f.fixes]
    assert len(findings) == 1, [(f.code, f.message) for f in analyze(code).findings]
    assert ARTICLE[name] in apply_edits(code, preferred_edits(findings)).splitlines()


def test_every_article_case_is_here():
    assert sorted(p.stem for p in CASES.glob("article-*.py")) == sorted(ARTICLE)


# The bench worker runs only the loop and plain setup statements (issue 13's allowlist), never a `def` of the
# file: the loop that calls the file's `f` cannot be timed there yet. Its rewrite is still checked above and by
# the development set (tests/test_loops_eval.py runs both programs with real torch).
BENCH_CANNOT_RUN: dict = {}  # (none: a plain function of the file is set up like a value)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=BENCH_CANNOT_RUN[n], strict=True))
                                  if n in BENCH_CANNOT_RUN else n for n in sorted(ARTICLE)])
def test_article_loop_gets_the_article_rewrite_and_bench_matches(name: str, tmp_path: Path):
    code = program_of(name)
    findings = [f for f in analyze(code).findings if f.code.startswith("TW40") and f.fixes]
    assert len(findings) == 1, [(f.code, f.message) for f in analyze(code).findings]
    fixed = apply_edits(code, preferred_edits(findings))
    assert ARTICLE[name] in fixed.splitlines(), fixed
    path = tmp_path / f"{name.replace('-', '_')}.py"
    path.write_text(code)
    line = findings[0].span.start.line + 1
    done = subprocess.run([sys.executable, "-m", "torchwise.bench", f"{path}:{line}", "--json", "--device", "cpu",
                           "--budget", "0.2", "--time-limit", "90"],
                          capture_output=True, text=True, timeout=150, cwd=ROOT)
    assert done.returncode == 0, done.stderr + done.stdout
    result = json.loads(done.stdout)
    assert result["ok"] and result["match"] is True, result["message"]
    assert result["device"] == "cpu"
