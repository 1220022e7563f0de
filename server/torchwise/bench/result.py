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
              "code", "line", "fingerprint", "notes", "inputs", "error_line", "stage", "runs", "memory", "scaling",
              "within_noise")


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


def format_bytes(count: Optional[float]) -> str:
    """``1536`` -> ``1.5 KiB``; ``3.2e9`` -> ``3 GiB``; None -> ``?``."""
    if count is None or not math.isfinite(count) or count < 0:
        return "?"
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if count >= scale:
            return f"{_three(count / scale)} {unit}"
    return f"{int(count)} B"


def within_noise(loop_s, loop_iqr, vec_s, vec_iqr) -> bool:
    """Whether the two medians are closer than their spreads: the intervals median ± IQR/2 (the middle half of
    the runs) overlap, so which one is faster cannot be told from these runs."""
    if None in (loop_s, vec_s):
        return False
    return abs(loop_s - vec_s) <= ((loop_iqr or 0.0) + (vec_iqr or 0.0)) / 2


def _noise(result: Mapping[str, Any]) -> bool:
    return within_noise(result.get("loop_s"), result.get("loop_iqr_s"), result.get("vectorized_s"),
                        result.get("vectorized_iqr_s"))


def _memory_text(result: Mapping[str, Any], arrow: str = "→") -> str:
    memory = result.get("memory") or {}
    if memory.get("loop_peak_bytes") is None or memory.get("vectorized_peak_bytes") is None:
        return ""
    return (f"peak memory {format_bytes(memory['loop_peak_bytes'])} {arrow} "
            f"{format_bytes(memory['vectorized_peak_bytes'])}")


def _scaling_text(result: Mapping[str, Any], arrow: str = "→") -> str:
    label = ((result.get("scaled") or "N=").split("=")[0]) or "N"
    points = result.get("scaling") or []
    return "; ".join(f"{label}={p['n']}: {format_seconds(p['loop_s'])} {arrow} {format_seconds(p['vectorized_s'])}"
                     f" ({format_speedup(p['loop_s'] / p['vectorized_s']) if p.get('vectorized_s') else '?'}×)"
                     for p in points)


def summary_text(result: Mapping[str, Any]) -> str:
    """The whole result on one line, for the command's reply (what VS Code's message and Neovim's notify show):
    both medians ± IQR, the speedup or "within noise", device, verdict, peak memory, scaling."""
    if not result.get("ok"):
        return result.get("message") or "benchmark failed"
    speed = "within noise" if _noise(result) else f"{format_speedup(result.get('speedup'))}×"
    text = (f"loop {format_seconds(result.get('loop_s'))} ± {format_seconds(result.get('loop_iqr_s'))} → vectorized "
            f"{format_seconds(result.get('vectorized_s'))} ± {format_seconds(result.get('vectorized_iqr_s'))} "
            f"({speed})")
    if result.get("scaled"):
        text += f" at {result['scaled']}"
    text += f" on {result.get('device')}"
    text += ", results match" if result.get("match") else f", {result.get('message') or 'RESULTS DIFFER'}"
    for part in (_memory_text(result), _scaling_text(result)):
        if part:
            text += f"; {part}"
    return text


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
    speed = f"{format_speedup(result.get('speedup'))}{times}"
    if _noise(result):
        speed += ", within noise"
    text = (f"{prefix}loop {format_seconds(result.get('loop_s'))} {arrow} vectorized "
            f"{format_seconds(result.get('vectorized_s'))} ({speed})")
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
        first, last = int(result["line"]) + 1, int(result.get("end_line", result["line"])) + 1
        # The timed region: the loop, from the output it allocates when that comes first.
        where = f" — {result.get('code') or 'loop'}, " + (f"lines {first}–{last}" if last > first else f"line {first}")
    lines = [f"**torchwise benchmark**{where}", ""]
    if not result.get("ok"):
        lines.append(f"Failed: {result.get('message')}")
    else:
        memory = result.get("memory") or {}
        measured = memory.get("loop_peak_bytes") is not None and memory.get("vectorized_peak_bytes") is not None
        lines += ["| | median | IQR | runs |" + (" peak memory |" if measured else ""),
                  "|---|---|---|---|" + ("---|" if measured else "")]
        for label, key in (("loop", "loop"), ("vectorized", "vectorized")):
            row = (f"| {label} | {format_seconds(result.get(key + '_s'))} | {format_seconds(result.get(key + '_iqr_s'))} "
                   f"| {result.get(key + '_runs', '?')} |")
            lines.append(row + (f" {format_bytes(memory[key + '_peak_bytes'])} |" if measured else ""))
        lines.append("")
        points = result.get("scaling") or []
        if points:
            label = ((result.get("scaled") or "N=").split("=")[0]) or "N"
            lines += [f"| {label} | loop | vectorized | speedup |", "|---|---|---|---|"]
            lines += [f"| {p['n']} | {format_seconds(p['loop_s'])} | {format_seconds(p['vectorized_s'])} | "
                      f"{format_speedup(p['loop_s'] / p['vectorized_s']) if p.get('vectorized_s') else '?'}× |"
                      for p in points]
            lines.append("")
        device = f"`{result.get('device')}`"
        if result.get("device_name"):
            device += f" ({result['device_name']})"
        if _noise(result):
            lines.append(f"**Within noise** on {device}: the middle halves of the runs overlap "
                         f"({format_speedup(result.get('speedup'))}× by the medians).")
        else:
            lines.append(f"**{format_speedup(result.get('speedup'))}×** faster on {device}.")
        if result.get("scaled"):
            lines.append(f"Both measured at {result['scaled']}: the full loop would not fit the time budget.")
        if result.get("match"):
            diff = result.get("max_diff")
            lines.append("Results match" + (f" (max difference {diff:.3g})." if diff else "."))
        else:
            lines.append(f"**{result.get('message')}** — the rewrite is wrong for these inputs; "
                         "please report it as a torchwise bug.")
        if measured:
            how = {"cuda": "the CUDA caching allocator's peak", "rss": "the process's resident-set peak"}.get(
                memory.get("method"), "measured")
            lines += ["", f"Peak memory: of one run of each, beyond what was allocated before it ({how})."]
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
    if result.get("ok"):
        out["message"] = summary_text(result)  # every number, wherever the reply is shown
    if out["message"] is None:
        out["message"] = "results match" if result.get("match") else ""
    if result.get("runs"):  # which of the user's lines ran: the message says it wherever it is shown
        said = out["message"].rstrip()
        out["message"] = (said + ("" if said.endswith((".", "!", "?")) else ".") + " " if said else "") + result["runs"]
    for key in EXTRA_KEYS:
        if key in result:
            out[key] = _finite(result[key])
    if result.get("ok"):
        out["within_noise"] = _noise(result)
    out["text"] = inline_text(result)
    return out


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
