"""Loops of ``range(x.shape[0])`` / ``range(x.size(0))`` over an ``x`` nothing is known of (a parameter whose shape
comes from the caller, or is only asserted by rank): a per-element body is flagged with its one reason and never
fixed (nothing proves what the rewrite would assume of ``x``); recurrences, effects, draws and early exits stay silent.

Before, the unknown iteration count made every such loop silent (issue 12: no silent per-element miss).
"""

from __future__ import annotations

import itertools

import pytest

from torchwise.engine import analyze

HEADERS = ("range(x.shape[0])", "range(x.size(0))")
PREAMBLES = ("", "    assert x.ndim == 2\n", "    assert x.dim() == 2 and x.shape[1] == w.shape[0]\n")

# Per-element bodies: (setup lines, body lines, the result returned). Each is clearly one element at a time.
FLAGGED = {
    "map": ("out = torch.empty(x.shape[0])", "out[i] = x[i].sum() * 2", "out"),
    "dot-bias": ("out = torch.empty(x.shape[0])", "out[i] = torch.dot(x[i], w) + 1.0", "out"),
    "gather": ("out = torch.zeros(x.shape[0])", "out[i] = x[i, idx[i]]", "out"),
    "temporary-index": ("out = torch.zeros(x.shape[0])", "j = idx[i]\nout[i] = x[i, j]", "out"),
}

# Loops that must stay loops (or are not per-element): never a finding.
SILENT = {
    "recurrence-name": ("h = torch.zeros(x.shape[1])", "h = torch.tanh(x[i] + h)", "h"),
    "ema": ("s = 0.0\nout = torch.empty(x.shape[0])", "s = 0.9 * s + 0.1 * x[i].sum()\nout[i] = s", "out"),
    "in-place-recurrence": ("", "x[i] = x[i] + x[i - 1] * 0.5", "x"),
    "draw": ("out = torch.empty(x.shape[0])", "out[i] = x[i].sum() + torch.randn(())", "out"),
    "print": ("", "print(x[i])", "x"),
    "early-exit": ("k = 0", "k = i\nif x[i].sum() > 3:\n    break", "k"),
    "save": ("", "torch.save(x[i], f'{i}.pt')", "x"),
}

# Per-element, but nothing the loop writes is known to be a tensor (`x` may be a list of lists, `.sum()` NumPy's):
# not clearly a tensor loop, so silent today; whatever is said, never a fix.
UNCLEAR = {
    "append-unknown": ("res = []", "res.append(x[i] * w)", "torch.stack(res)"),
    "row-normalize": ("out = torch.empty_like(x)", "out[i] = x[i] / x[i].norm()", "out"),
    "sum": ("total = 0.0", "total += x[i].sum()", "total"),
    "count-if": ("count = 0", "if x[i].sum() > 0:\n    count += 1", "count"),
    # the one-statement matchers (flags, running extremes, first hits) walk the range on their own
    "any-flag": ("found = False", "if x[i].sum() > 0:\n    found = True", "found"),
    "running-max": ("best = float('-inf')", "if x[i].sum() > best:\n    best = x[i].sum()", "best"),
    "first-hit": ("k = -1", "if x[i].sum() > 0:\n    k = i\n    break", "k"),
    "known-output": ("out = torch.zeros(5)", "out[i] = 2.0", "out"),
    "known-output-index": ("out = torch.zeros(5)", "out[i] = i * 2", "out"),
}


def _program(setup: str, body: str, result: str, header: str, preamble: str) -> str:
    lines = ["import torch", "", "", "def f(x, w, idx):", preamble.rstrip("\n")] if preamble else \
        ["import torch", "", "", "def f(x, w, idx):"]
    lines += ["    " + line for line in setup.splitlines() if line]
    lines.append(f"    for i in {header}:")
    lines += ["        " + line for line in body.splitlines()]
    lines.append(f"    return {result}")
    return "\n".join(lines) + "\n"


def _loop_findings(code: str) -> list:
    return [f for f in analyze(code, "case.py").findings if f.code.startswith("TW40")]


@pytest.mark.parametrize("name,header,preamble", list(itertools.product(sorted(FLAGGED), HEADERS, PREAMBLES)))
def test_a_per_element_body_is_flagged_without_a_fix(name, header, preamble):
    code = _program(*FLAGGED[name], header, preamble)
    findings = _loop_findings(code)
    assert len(findings) == 1, code
    assert not findings[0].fixes, code
    assert "no automatic rewrite" in findings[0].message


@pytest.mark.parametrize("name,header,preamble", list(itertools.product(sorted(SILENT), HEADERS, PREAMBLES)))
def test_loops_that_must_stay_are_silent(name, header, preamble):
    code = _program(*SILENT[name], header, preamble)
    assert _loop_findings(code) == [], code


@pytest.mark.parametrize("name,header,preamble", list(itertools.product(sorted(UNCLEAR), HEADERS, PREAMBLES)))
def test_unclear_loops_get_no_fix(name, header, preamble):
    code = _program(*UNCLEAR[name], header, preamble)
    assert all(not f.fixes for f in _loop_findings(code)), code


@pytest.mark.parametrize("header", HEADERS)
def test_comprehensions_get_no_fix(header):
    for element in ("x[i] * 2", "x[i].sum()", "float(i)", "w * i"):
        code = f"import torch\n\n\ndef f(x, w):\n    return torch.stack([{element} for i in {header}])\n"
        assert all(not f.fixes for f in _loop_findings(code)), code


def test_a_known_tensor_keeps_its_rewrite():
    """The fallback is only for an `x` the facts know nothing of: a known one is rewritten as before."""
    code = ("import torch\n\n\ndef f(n: int):\n    x = torch.randn(n, 3)\n    out = torch.empty(x.shape[0])\n"
            "    for i in range(x.shape[0]):\n        out[i] = x[i].sum() * 2\n    return out\n")
    findings = _loop_findings(code)
    assert len(findings) == 1 and findings[0].fixes, findings
