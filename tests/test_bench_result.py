"""How a benchmark result reads: inline line, hover details, the LSP command's JSON."""

from __future__ import annotations

import json

from torchwise.bench.result import format_seconds, format_speedup, hover_markdown, inline_text, public_json

RESULT = {"ok": True, "loop_s": 0.812, "loop_iqr_s": 0.012, "loop_runs": 3, "vectorized_s": 0.0021,
          "vectorized_iqr_s": 0.0001, "vectorized_runs": 120, "speedup": 0.812 / 0.0021, "device": "cuda:0",
          "device_name": "NVIDIA H200", "match": True, "max_diff": 1.5e-5, "message": "results match",
          "torch": "2.13.0", "python": "3.11.7", "threads": 8, "scaled": None, "code": "TW401", "line": 20,
          "inputs": "your setup code (lines 14–19).", "notes": []}


def test_units():
    assert format_seconds(0.812) == "812 ms"
    assert format_seconds(0.0021) == "2.1 ms"
    assert format_seconds(4.2e-5) == "42 µs"
    assert format_seconds(3.5) == "3.5 s"
    assert format_seconds(8e-8) == "80 ns"
    assert format_seconds(None) == "?"
    assert format_speedup(386.7) == "387" and format_speedup(2.46) == "2.5" and format_speedup(0.62) == "0.62"
    assert format_speedup(4719.2) == "4,719"


def test_inline_text_as_in_the_issue():
    assert inline_text(RESULT) == "⏱ loop 812 ms → vectorized 2.1 ms (387×) · cuda:0 · results match"
    assert inline_text(RESULT, ascii=True) == "loop 812 ms -> vectorized 2.1 ms (387x) on cuda:0, results match"
    scaled = dict(RESULT, scaled="N=1000 of 10000")
    assert inline_text(scaled) == "⏱ loop 812 ms → vectorized 2.1 ms (387×) at N=1000 of 10000 · cuda:0 · results match"
    assert inline_text(RESULT, stale=True).startswith("⏱ (stale) loop 812 ms")


def test_a_mismatch_is_loud_and_a_failure_is_one_message():
    wrong = dict(RESULT, match=False, max_diff=1.0, message="RESULTS DIFFER for `out`: max difference 1")
    assert inline_text(wrong).endswith("· ✗ RESULTS DIFFER (max diff 1)")
    assert "please report it as a torchwise bug" in hover_markdown(wrong)
    failed = {"ok": False, "error": "timeout", "message": "Stopped after 30 s (the time limit)."}
    assert inline_text(failed) == "⏱ benchmark failed: Stopped after 30 s (the time limit)."
    assert public_json(failed)["loop_s"] is None and public_json(failed)["message"].startswith("Stopped")


def test_hover_details():
    text = hover_markdown(RESULT)
    for part in ("TW401, line 21", "| loop | 812 ms | 12 ms | 3 |", "| vectorized | 2.1 ms | 100 µs | 120 |",
                 "`cuda:0` (NVIDIA H200)", "torch 2.13.0", "Python 3.11.7", "8 CPU threads", "Results match",
                 "Inputs: your setup code"):
        assert part in text, part


def test_the_commands_json():
    out = public_json(dict(RESULT, max_diff=float("nan")))
    assert list(out)[:6] == ["loop_s", "vectorized_s", "speedup", "device", "match", "message"]
    assert out["device"] == "cuda:0" and out["match"] is True and out["max_diff"] is None
    assert out["text"] == inline_text(RESULT)
    json.dumps(out, allow_nan=False)


MEASURED = dict(RESULT, memory={"loop_peak_bytes": 22 * 2 ** 30, "vectorized_peak_bytes": 40 * 2 ** 20, "method": "cuda"},
                scaling=[{"n": 625, "loop_s": 0.05, "vectorized_s": 0.0002}, {"n": 2500, "loop_s": 0.2, "vectorized_s": 0.0008},
                         {"n": 10000, "loop_s": 0.812, "vectorized_s": 0.0021}])


def test_memory_and_scaling_in_the_hover_and_the_whole_result_in_the_message():
    from torchwise.bench.result import format_bytes

    assert format_bytes(1536) == "1.5 KiB" and format_bytes(22 * 2 ** 30) == "22 GiB" and format_bytes(None) == "?"
    text = hover_markdown(MEASURED)
    assert "| loop | 812 ms | 12 ms | 3 | 22 GiB |" in text and "| vectorized | 2.1 ms | 100 µs | 120 | 40 MiB |" in text
    assert "CUDA caching allocator" in text
    assert "| 625 | 50 ms | 200 µs | 250× |" in text and "| 10000 | 812 ms | 2.1 ms | 387× |" in text
    message = public_json(MEASURED)["message"]
    assert message.startswith("loop 812 ms ± 12 ms → vectorized 2.1 ms ± 100 µs (387×) on cuda:0, results match")
    assert "peak memory 22 GiB → 40 MiB" in message and "N=625: 50 ms → 200 µs (250×)" in message
    assert public_json(MEASURED)["memory"]["method"] == "cuda" and len(public_json(MEASURED)["scaling"]) == 3


def test_within_noise_when_the_middle_halves_overlap():
    from torchwise.bench.result import within_noise

    assert within_noise(1.0, 0.2, 1.05, 0.2) and not within_noise(1.0, 0.01, 0.5, 0.01)
    close = dict(RESULT, vectorized_s=0.80, vectorized_iqr_s=0.02, speedup=0.812 / 0.80)
    assert inline_text(close) == "⏱ loop 812 ms → vectorized 800 ms (1.0×, within noise) · cuda:0 · results match"
    assert "(within noise)" in public_json(close)["message"] and public_json(close)["within_noise"] is True
    assert "**Within noise**" in hover_markdown(close)
    assert public_json(RESULT)["within_noise"] is False
