#!/usr/bin/env python
"""Scale benchmark (issue 13, the spec's "scale" budget), over the language server as an editor drives it:

  1. opening a 200,000-line file: didOpen -> its first publishDiagnostics              (budget < 5 s)
  2. an edit inside one function of that file: didChange -> diagnostics, p50           (budget < 250 ms)
  3. the server's peak RSS (VmHWM) with that file open and edited                      (budget < 1 GB)
  4. a cell edit in a 1,000-cell notebook: didChange -> that cell's diagnostics, p50   (budget < 250 ms)

The large file is real code: the corpus (/work/shared/corpus, else --corpus DIR, else examples/) concatenated
by ``gen_code.from_corpus``, each copy's top-level names renamed apart; ``--source generated`` uses
``gen_code.generate`` instead. The notebook is generated model code cut into 1,000 cells at top-level
statements. The server runs with TORCHWISE_DEBOUNCE_MS=0: the figures are analysis latency.

Run:  .venv/bin/python benchmarks/bench_scale.py [--lines 200000] [--cells 1000] [--edits 7] [--json out.json]

Exit status: 0 every budget met, 1 one missed, 2 the benchmark itself failed (a timeout, a dead server).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import MB, BenchError, Session, dist, ms, proc_status  # noqa: E402
from gen_code import from_corpus, generate, pitfall_line  # noqa: E402

from lsprotocol import types  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path("/work/shared/corpus")


def big_file(lines: int, source: str, corpus: Path | None) -> str:
    if source == "generated":
        return generate(lines, seed=13)
    roots = [r for r in (corpus, CORPUS, REPO / "examples") if r is not None and r.is_dir()]
    return from_corpus(lines, roots[:1] + [REPO / "examples"])


def function_lines(text: str, count: int, seed: int) -> list[tuple[int, str]]:
    """(0-based line, indentation) before the last statement of ``count`` top-level functions spread over the
    file: where an edit inside one function goes."""
    tree = ast.parse(text)
    lines = text.split("\n")
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(s.body) > 1
            and s.body[-1].lineno == s.body[-1].end_lineno]
    chosen = random.Random(seed).sample(defs, min(count, len(defs)))
    points = []
    for node in chosen:
        line = node.body[-1].lineno - 1
        code = lines[line]
        points.append((line, code[:len(code) - len(code.lstrip())]))
    return points


def notebook_cells(count: int) -> list[str]:
    """``count`` cells of generated model code, cut at top-level statements (about 20 lines each)."""
    text = generate(count * 20, seed=21)
    tree = ast.parse(text)
    lines = text.split("\n")
    starts = sorted({min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", []))]) - 1 for s in tree.body})
    step = max(len(starts) // count, 1)
    cuts = starts[::step][:count] + [len(lines)]
    cuts[0] = 0
    return ["\n".join(lines[a:b]).strip("\n") + "\n" for a, b in zip(cuts, cuts[1:])]


async def bench_file(root: Path, text: str, edits: int, timeout: float) -> dict:
    session = Session(root, timeout, debounce_ms=0)
    path = root / "scale_big.py"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    try:
        await session.start()
        sent = session.open(uri, text)
        arrived, count = await session.published(uri, 1)
        opened = arrived - sent
        points = function_lines(text, edits, seed=5)
        points.sort(reverse=True)  # bottom first: an insertion leaves the lines above where they were
        latencies = []
        for i, (line, indent) in enumerate(points):
            version = i + 2
            sent = session.change(uri, version, line, 0, pitfall_line(indent, 20_000 + i) + "\n")
            arrived, last = await session.published(uri, version)
            latencies.append(arrived - sent)
        status = proc_status(session.pid)
    finally:
        await session.close()
    return {"lines": text.count("\n"), "open_s": opened, "diagnostics": count, "diagnostics_after": last,
            "edits": dist(latencies), "peak_rss": status["VmHWM"]}


def _cell_change(notebook: str, version: int, cell: str, cell_version: int, line: int, text: str):
    where = types.Position(line=line, character=0)
    return types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(version=version, uri=notebook),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=cell, version=cell_version),
                changes=[types.TextDocumentContentChangePartial(range=types.Range(start=where, end=where),
                                                                text=text)])])))


async def bench_notebook(root: Path, cells: list[str], edits: int, timeout: float) -> dict:
    session = Session(root, timeout, debounce_ms=0)
    path = root / "scale.ipynb"
    uri = path.as_uri()
    cell_uris = [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(cells))]
    try:
        await session.start()
        sent = time.perf_counter()
        session.client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=uri, notebook_type="jupyter-notebook", version=1,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=u) for u in cell_uris]),
            cell_text_documents=[types.TextDocumentItem(uri=u, language_id="python", version=1, text=t)
                                 for u, t in zip(cell_uris, cells)]))
        arrived, _ = await session.published(cell_uris[-1], 1)
        opened = arrived - sent
        rng = random.Random(3)
        latencies, versions = [], [1] * len(cells)
        for i in range(edits):
            k = rng.randrange(len(cells))
            versions[k] += 1
            sent = time.perf_counter()  # a pitfall line at the top of the cell
            session.client.notebook_document_did_change(_cell_change(uri, i + 2, cell_uris[k], versions[k], 0,
                                                                     pitfall_line("", 30_000 + i) + "\n"))
            arrived, _ = await session.published(cell_uris[k], versions[k])
            latencies.append(arrived - sent)
        status = proc_status(session.pid)
    finally:
        await session.close()
    return {"cells": len(cells), "lines": sum(c.count("\n") for c in cells), "open_s": opened,
            "edits": dist(latencies), "peak_rss": status["VmHWM"]}


def report(name: str, value: float, shown: str, budget: float, unit_ms: bool = True) -> bool:
    ok = value < budget
    limit = f"< {budget * 1000:.0f} ms" if unit_ms else f"< {budget / MB:.0f} MB"
    print(f"  {name:<44} {shown:<44} {limit:<10} {'ok' if ok else 'MISSED'}")
    return ok


async def run(args: argparse.Namespace, root: Path) -> tuple[dict, bool]:
    t = time.perf_counter()
    text = big_file(args.lines, args.source, args.corpus)
    print(f"built a {text.count(chr(10)):,}-line file ({args.source}) in {time.perf_counter() - t:.1f} s", flush=True)
    big = await bench_file(root, text, args.edits, args.timeout)
    book = await bench_notebook(root, notebook_cells(args.cells), args.edits, args.timeout)
    print(f"torchwise scale benchmark ({big['lines']:,}-line file, {book['cells']:,}-cell notebook of "
          f"{book['lines']:,} lines)")
    ok = [
        report("open the large file -> first diagnostics", big["open_s"], ms(big["open_s"]), 5.0),
        report("edit inside one function -> diagnostics", big["edits"]["p50"],
               f"p50 {ms(big['edits']['p50'])}, max {ms(big['edits']['max'])} (n={big['edits']['n']})", 0.25),
        report("server peak RSS (large file)", big["peak_rss"], f"{big['peak_rss'] / MB:.0f} MB", 1024 * MB, False),
        report("notebook cell edit -> diagnostics", book["edits"]["p50"],
               f"p50 {ms(book['edits']['p50'])}, max {ms(book['edits']['max'])} (n={book['edits']['n']})", 0.25),
    ]
    print(f"  (info) notebook open -> last cell's diagnostics {ms(book['open_s'])}; "
          f"notebook server peak RSS {book['peak_rss'] / MB:.0f} MB")
    return {"file": big, "notebook": book}, all(ok)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="torchwise scale benchmark (issue 13)")
    parser.add_argument("--lines", type=int, default=200_000, help="lines of the large file (default 200,000)")
    parser.add_argument("--cells", type=int, default=1000, help="cells of the notebook (default 1,000)")
    parser.add_argument("--edits", type=int, default=7, help="edits of each (default 7)")
    parser.add_argument("--source", choices=("corpus", "generated"), default="corpus",
                        help="the large file: real code concatenated (default), or gen_code.generate")
    parser.add_argument("--corpus", type=Path, help="a folder of real code (default /work/shared/corpus)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds any single wait may take")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the figures (with samples) as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="torchwise-scale-") as tmp:
        try:
            figures, ok = asyncio.run(run(args, Path(tmp)))
        except BenchError as err:
            print(f"benchmark failed: {err}", file=sys.stderr)
            return 2
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
