"""``torchwise bench FILE:LINE [--json] [--device auto|cpu|cuda|mps] [--python PATH] [--time-limit S]
[--budget S] [--size NAME=VALUE ...]``: benchmark the loop at LINE (1-based) against its rewrite.

Exit status: 0 results match, 1 the results differ (a wrong rewrite), 2 nothing measured (usage,
file, no rewritable loop, no torch, the code raised, time limit).
"""

from __future__ import annotations

import argparse
import math
import os
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

EXIT_MATCH, EXIT_MISMATCH, EXIT_ERROR = 0, 1, 2
DEVICES = ("auto", "cpu", "cuda", "mps")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``bench`` subcommand's arguments (for ``torchwise.cli``'s subparser)."""
    parser.add_argument("target", metavar="FILE:LINE", help="the file and the 1-based line of the loop")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="where to run: auto = cuda if available, else mps, else cpu")
    parser.add_argument("--python", metavar="PATH", default=None,
                        help="the interpreter whose torch runs the benchmark (default: this one)")
    parser.add_argument("--time-limit", type=float, default=30.0, metavar="S",
                        help="stop the run after S seconds, torch import included (default 30)")
    parser.add_argument("--budget", type=float, default=1.0, metavar="S",
                        help="about how long to measure; slower loops are measured on a smaller N (default 1)")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="torch CPU threads while timing (default 1, torch.utils.benchmark's convention)")
    parser.add_argument("--size", action="append", default=[], metavar="NAME=VALUE",
                        help="a size the analysis cannot infer (a symbolic dimension or an int variable)")


def parse_target(target: str) -> tuple[Path, int]:
    path, sep, line = target.rpartition(":")
    if not sep or not path or not line.strip().isdigit() or int(line) < 1:
        raise ValueError(f"expected FILE:LINE with a line number from 1, got {target!r}")
    return Path(path), int(line)


def parse_sizes(items: Sequence[str]) -> dict:
    sizes = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name.replace(".", "_").isidentifier():
            raise ValueError(f"--size wants NAME=VALUE, got {item!r}")
        try:
            sizes[name] = int(value)
        except ValueError:
            raise ValueError(f"--size {name}: {value!r} is not an integer") from None
        if sizes[name] < 0:
            raise ValueError(f"--size {name}: sizes are not negative")
    return sizes


def run(args: argparse.Namespace, out=None, err=None) -> int:
    """Run the parsed ``bench`` command; print the result; the exit status."""
    from torchwise.bench.api import run_benchmark
    from torchwise.bench.result import inline_text, public_json
    from torchwise.bench.session import BenchSession
    from torchwise.source import split_lines
    from torchwise.textio import read_python

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        path, line = parse_target(args.target)
        sizes = parse_sizes(args.size)
    except ValueError as error:
        print(f"torchwise bench: {error}", file=err)
        return EXIT_ERROR
    if not (0 < args.time_limit < math.inf and 0 < args.budget < math.inf):  # nan and inf too (inf: a traceback)
        print("torchwise bench: --time-limit and --budget must be positive numbers of seconds", file=err)
        return EXIT_ERROR
    try:
        text, _ = read_python(path)
    except (OSError, UnicodeDecodeError) as error:
        why = error.reason if isinstance(error, UnicodeDecodeError) else error.strerror or error
        print(f"torchwise bench: cannot read {path}: {why}", file=err)
        return EXIT_ERROR
    if line > len(split_lines(text)):
        print(f"torchwise bench: {path} has no line {line}", file=err)
        return EXIT_ERROR
    python = args.python
    if python and (os.sep in python or (os.altsep and os.altsep in python)) and not os.path.isabs(python):
        # The worker starts in the file's folder; `--python .venv/bin/python` means the one under *this* one.
        python = os.path.abspath(python)
    session = BenchSession(python, args.time_limit, cwd=str(path.parent.resolve()))
    try:
        result = run_benchmark(session, text, line - 1, device=args.device, sizes=sizes, budget_s=args.budget,
                               path=str(path), threads=args.threads)
    finally:
        session.shutdown()
    if args.json:
        answer = public_json(result)
        if answer.get("line") is not None:
            answer["line"] += 1  # the CLI counts lines from 1 (the LSP command from 0)
        print(json.dumps(answer, indent=2, ensure_ascii=False), file=out)
    elif result.get("ok"):
        # The line asked for (the loop's): the timed region may start earlier, at the output it allocates.
        print(f"{path}:{line}: {_printable(inline_text(result), out)}", file=out)
        details = _details(result)
        if details:
            print(_printable(details, out), file=out)
    else:
        message = public_json(result).get("message") or "failed"  # with which of your lines ran
        print(f"torchwise bench: {path}:{line}: {_printable(message, err)}", file=err)
    if not result.get("ok"):
        return EXIT_ERROR
    return EXIT_MATCH if result.get("match") else EXIT_MISMATCH


def _details(result: dict) -> str:
    from torchwise.bench.result import format_bytes, format_seconds, format_speedup, within_noise

    lines = [f"  loop:       median {format_seconds(result.get('loop_s'))}, IQR "
             f"{format_seconds(result.get('loop_iqr_s'))}, {result.get('loop_runs')} runs",
             f"  vectorized: median {format_seconds(result.get('vectorized_s'))}, IQR "
             f"{format_seconds(result.get('vectorized_iqr_s'))}, {result.get('vectorized_runs')} runs"]
    memory = result.get("memory") or {}
    if memory.get("loop_peak_bytes") is not None and memory.get("vectorized_peak_bytes") is not None:
        how = {"cuda": "CUDA allocator peak", "rss": "resident-set peak"}.get(memory.get("method"), "peak")
        lines.append(f"  memory:     loop {format_bytes(memory['loop_peak_bytes'])}, vectorized "
                     f"{format_bytes(memory['vectorized_peak_bytes'])} ({how} of one run)")
    for point in result.get("scaling") or ():
        speedup = format_speedup(point["loop_s"] / point["vectorized_s"]) if point.get("vectorized_s") else "?"
        lines.append(f"  at n={point['n']}: loop {format_seconds(point['loop_s'])}, vectorized "
                     f"{format_seconds(point['vectorized_s'])} ({speedup}x)")
    if within_noise(result.get("loop_s"), result.get("loop_iqr_s"), result.get("vectorized_s"),
                    result.get("vectorized_iqr_s")):
        lines.append("  within noise: the middle halves of the two sets of runs overlap")
    if not result.get("match"):
        lines.append(f"  {result.get('message')}")
    facts = [f"torch {result.get('torch')}", f"Python {result.get('python')}"]
    if result.get("device_name"):
        facts.insert(0, str(result["device_name"]))
    if result.get("threads"):
        facts.append(f"{result['threads']} thread{'s' if result['threads'] != 1 else ''}")
    lines.append("  " + ", ".join(facts))
    if result.get("inputs"):
        lines.append(f"  inputs: {result['inputs']}")
    if result.get("runs"):
        lines.append(f"  {result['runs']}")
    for note in result.get("notes") or ():
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def _printable(text: str, stream) -> str:
    """The text, or its ASCII spelling when the stream cannot encode it (a Windows console)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
        return text
    except (UnicodeEncodeError, LookupError):
        return (text.replace("⏱ ", "").replace("→", "->").replace("×", "x").replace(" · ", ", ")
                .replace("µs", "us").replace("–", "-").replace("✗ ", "").encode("ascii", "replace").decode("ascii"))


def run_cli(argv: Optional[Sequence[str]] = None) -> int:
    """``torchwise bench`` on its own: ``run_cli(["examples/vectorize_me.py:21", "--json"])``."""
    parser = argparse.ArgumentParser(prog="torchwise bench", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_ERROR if exit_.code else EXIT_MATCH
    return run(args)
