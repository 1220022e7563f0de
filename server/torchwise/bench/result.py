"""How a benchmark result reads: the inline line, the hover details, the JSON of the LSP command.

A result is the plain dict ``run_benchmark`` returns (the worker's fields plus the job's):
``ok``, ``loop_s``, ``vectorized_s``, ``speedup``, ``device``, ``match``, ``message`` and, when
known, ``loop_iqr_s``, ``loop_runs``, ``vectorized_iqr_s``, ``vectorized_runs``, ``device_name``,
``max_diff``, ``scaled``, ``torch``, ``python``, ``threads``, ``code``, ``line``, ``notes``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

PUBLIC_KEYS = ("loop_s", "vectorized_s", "speedup", "device", "match", "message")
EXTRA_KEYS = ("ok", "error", "loop_iqr_s", "loop_runs", "vectorized_iqr_s", "vectorized_runs", "device_name",
              "max_diff", "scaled", "n", "n_full", "torch", "python", "interpreter", "threads", "cold", "wall_s",
              "code", "line", "fingerprint", "notes", "inputs", "error_line", "stage", "runs")


def format_seconds(seconds: Optional[float]) -> str:
    """``0.812`` -> ``812 ms``; ``2.1e-3`` -> ``2.1 ms``; ``4.2e-5`` -> ``42 µs``; ``3.5`` -> ``3.5 s``."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{_three(seconds / scale)} {unit}"
    return f"{_three(seconds / 1e-9)} ns"


def _three(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def format_speedup(speedup: Optional[float]) -> str:
    if speedup is None or not math.isfinite(speedup) or speedup <= 0:
        return "?"
    if speedup >= 10:
        return f"{speedup:,.0f}"
    return f"{speedup:.2g}" if speedup < 1 else f"{speedup:.1f}"


def inline_text(result: Mapping[str, Any], ascii: bool = False, stale: bool = False) -> str:
    """One line for the code lens / inline hint / CLI:
    ``⏱ loop 812 ms → vectorized 2.1 ms (390×) · cuda:0 · results match``.

    ``ascii``: the same without non-ASCII characters (``loop 812 ms -> vectorized 2.1 ms (390x) on cuda:0,
    results match``). ``stale``: the loop changed since it was measured.
    """
    clock, arrow, times, dot = ("", "->", "x", ",") if ascii else ("⏱ ", "→", "×", " ·")
    prefix = ("(stale) " if ascii else "⏱ (stale) ") if stale else clock
    if not result.get("ok"):
        return f"{prefix}benchmark failed: {result.get('message') or 'unknown error'}"
    text = (f"{prefix}loop {format_seconds(result.get('loop_s'))} {arrow} vectorized "
            f"{format_seconds(result.get('vectorized_s'))} ({format_speedup(result.get('speedup'))}{times})")
    if result.get("scaled"):
        text += f" at {result['scaled']}"
    text += f" on {result.get('device')}{dot}" if ascii else f"{dot} {result.get('device')}{dot}"
    if result.get("match"):
        text += " results match"
    else:
        diff = result.get("max_diff")
        text += " RESULTS DIFFER" if ascii else " ✗ RESULTS DIFFER"
        if diff is not None:
            text += f" (max diff {diff:.3g})"
    return text


def hover_markdown(result: Mapping[str, Any]) -> str:
    """The details: n, median and IQR of both, device name, torch and Python versions, inputs, notes."""
    where = ""
    if result.get("line") is not None:
        where = f" — {result.get('code') or 'loop'} on line {int(result['line']) + 1}"
    lines = [f"**torchwise benchmark**{where}", ""]
    if not result.get("ok"):
        lines.append(f"Failed: {result.get('message')}")
    else:
        lines += ["| | median | IQR | runs |", "|---|---|---|---|",
                  f"| loop | {format_seconds(result.get('loop_s'))} | {format_seconds(result.get('loop_iqr_s'))} "
                  f"| {result.get('loop_runs', '?')} |",
                  f"| vectorized | {format_seconds(result.get('vectorized_s'))} "
                  f"| {format_seconds(result.get('vectorized_iqr_s'))} | {result.get('vectorized_runs', '?')} |",
                  ""]
        device = f"`{result.get('device')}`"
        if result.get("device_name"):
            device += f" ({result['device_name']})"
        lines.append(f"**{format_speedup(result.get('speedup'))}×** faster on {device}.")
        if result.get("scaled"):
            lines.append(f"Both measured at {result['scaled']}: the full loop would not fit the time budget.")
        if result.get("match"):
            diff = result.get("max_diff")
            lines.append("Results match" + (f" (max difference {diff:.3g})." if diff else "."))
        else:
            lines.append(f"**{result.get('message')}** — the rewrite is wrong for these inputs; "
                         "please report it as a torchwise bug.")
    facts = []
    if result.get("torch"):
        facts.append(f"torch {result['torch']}")
    if result.get("python"):
        facts.append(f"Python {result['python']}")
    if result.get("threads"):
        facts.append(f"{result['threads']} CPU thread{'s' if result['threads'] != 1 else ''}")
    if facts:
        lines += ["", ", ".join(facts) + (f" ({result['interpreter']})" if result.get("interpreter") else "") + "."]
    if result.get("inputs"):
        lines += ["", f"Inputs: {result['inputs']}"]
    if result.get("runs"):
        lines += ["", result["runs"]]
    for note in result.get("notes") or ():
        lines.append(f"- {note}")
    return "\n".join(lines)


def public_json(result: Mapping[str, Any]) -> dict:
    """The LSP command's answer: ``{"loop_s", "vectorized_s", "speedup", "device", "match", "message"}``
    (``None`` where not measured), then the details."""
    out = {key: _finite(result.get(key)) for key in PUBLIC_KEYS}
    if out["message"] is None:
        out["message"] = "results match" if result.get("match") else ""
    if result.get("runs"):  # which of the user's lines ran: the message says it wherever it is shown
        said = out["message"].rstrip()
        out["message"] = (said + ("" if said.endswith((".", "!", "?")) else ".") + " " if said else "") + result["runs"]
    for key in EXTRA_KEYS:
        if key in result:
            out[key] = _finite(result[key])
    out["text"] = inline_text(result)
    return out


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
