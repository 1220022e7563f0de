"""The one call the front ends make: benchmark the loop on a line, get a result dict.

    session = BenchSession(python=<the user's interpreter>, time_limit=30)
    result = run_benchmark(session, text, line, device="auto", sizes={"N": 1000})
    await run_benchmark_async(...)   # the same from asyncio; cancelling kills the run

The result is always a dict (``result.public_json`` gives the LSP command's answer,
``result.inline_text`` the line shown on the loop); a loop that cannot be prepared comes back
with ``ok: False, error: "cannot_prepare"`` and the reason, without starting any process.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, Optional

from torchwise.bench.prepare import BenchJob, Problem, prepare
from torchwise.bench.session import BenchSession

DEFAULT_BUDGET_S = 1.0  # seconds of measuring per run (both versions together, roughly)


def prepare_job(text: str, line: int, sizes: Optional[Mapping[str, int]] = None, *, analysis=None,
                path: str = "<string>", findings=None):
    """``prepare`` (a BenchJob or a Problem), for callers that want to look before running."""
    return prepare(text, line, sizes, analysis=analysis, path=path, findings=findings)


def problem_result(problem: Problem, line: Optional[int] = None) -> dict:
    return {"ok": False, "error": "cannot_prepare", "message": problem.message, "sizes": list(problem.sizes),
            "loop_s": None, "vectorized_s": None, "speedup": None, "device": None, "match": None,
            "line": line}


def run_benchmark(session: BenchSession, text: str, line: int, *, device: str = "auto",
                  sizes: Optional[Mapping[str, int]] = None, budget_s: float = DEFAULT_BUDGET_S, analysis=None,
                  path: str = "<string>", findings=None, on_progress: Optional[Callable[[str], None]] = None,
                  threads: Optional[int] = None) -> dict:
    job = prepare(text, line, sizes, analysis=analysis, path=path, findings=findings)
    if isinstance(job, Problem):
        return problem_result(job, line)
    if on_progress is not None:
        on_progress(job.runs)  # what it is about to run, before it runs
    return finish(job, session.run(job.request(device, budget_s, threads), on_progress))


async def run_benchmark_async(session: BenchSession, text: str, line: int, *, device: str = "auto",
                              sizes: Optional[Mapping[str, int]] = None, budget_s: float = DEFAULT_BUDGET_S,
                              analysis=None, path: str = "<string>", findings=None,
                              on_progress: Optional[Callable[[str], None]] = None,
                              threads: Optional[int] = None) -> dict:
    job = prepare(text, line, sizes, analysis=analysis, path=path, findings=findings)
    if isinstance(job, Problem):
        return problem_result(job, line)
    if on_progress is not None:
        on_progress(job.runs)  # what it is about to run, before it runs
    return finish(job, await session.run_async(job.request(device, budget_s, threads), on_progress))


def finish(job: BenchJob, result: dict) -> dict:
    """The worker's answer with the job's facts added and error lines mapped to the file's."""
    result = dict(result)
    result.update(code=job.code, line=job.line, end_line=job.end_line, fingerprint=job.fingerprint,
                  inputs=job.inputs, notes=list(job.notes), runs=job.runs)
    for key in ("loop_s", "vectorized_s", "speedup", "device", "match"):
        result.setdefault(key, None)
    message = result.get("message") or ""
    found = re.search(r"\(line (\d+) of the (loop|setup)\)", message)
    if found:
        k, part = int(found.group(1)), found.group(2)
        if part == "loop":
            result["error_line"] = job.line + k  # 1-based line of the file
            message = message.replace(found.group(0), f"(line {job.line + k})")
        else:
            origin = job.setup_lines[k - 1] if 0 < k <= len(job.setup_lines) else None
            lines = job.setup.split("\n")  # as the worker numbers them
            if origin is not None:
                result["error_line"] = origin
                message = message.replace(found.group(0), f"(your setup code, line {origin})")
            elif 0 < k <= len(lines):
                message = message.replace(found.group(0), f"(making the input `{lines[k - 1].strip()}`)")
    result["message"] = message
    return result
