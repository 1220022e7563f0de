"""The command line: ``torchwise check | rules | lsp``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from torchwise import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_MAX_FIX_PASSES = 5  # fixes that overlap are applied over several passes


def _codes(values: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(c.strip().upper() for v in values or () for c in v.split(",") if c.strip())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="torchwise", description="PyTorch pitfalls, diagnosed and fixed.")
    parser.add_argument("--version", action="version", version=f"torchwise {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="check Python files and folders")
    check.add_argument("paths", nargs="*", type=Path, default=[Path(".")], metavar="PATH")
    check.add_argument("--select", action="append", metavar="CODES",
                       help="only these rule codes or prefixes (comma-separated; e.g. TW1,TW301)")
    check.add_argument("--ignore", action="append", metavar="CODES", help="skip these rule codes or prefixes")
    check.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                       help="gitignore-style pattern of paths to skip (in addition to .gitignore and venvs)")
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    check.add_argument("--fix", action="store_true", help="apply the preferred fix of each finding in place")

    rules = sub.add_parser("rules", help="list the rules, or show one rule's docs")
    rules.add_argument("code", nargs="?")

    bench = sub.add_parser("bench", help="benchmark a loop against its vectorized rewrite (runs your code)")
    from torchwise.bench.cli import add_arguments

    add_arguments(bench)

    sub.add_parser("lsp", help="run the language server over stdio")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "check":
        return _check(args)
    if args.command == "rules":
        return _rules(args.code)
    if args.command == "bench":
        from torchwise.bench.cli import run

        return run(args)
    if args.command == "lsp":
        from torchwise.lsp.server import serve

        serve()
        return EXIT_CLEAN
    parser.print_help()
    return EXIT_ERROR


def _rules(code: str | None) -> int:
    from torchwise.catalogue import render

    try:
        sys.stdout.write(render(code))
    except KeyError:
        print(f"torchwise: no rule {code!r}; `torchwise rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_CLEAN


def _check(args: argparse.Namespace) -> int:
    from torchwise import report
    from torchwise.config import ConfigError, RuleConfig, project_config
    from torchwise.discovery import python_files

    cli_config = RuleConfig(select=_codes(args.select), ignore=_codes(args.ignore))
    try:
        files = list(python_files(args.paths, args.exclude))
    except FileNotFoundError as err:
        print(f"torchwise: no such file or folder: {err}", file=sys.stderr)
        return EXIT_ERROR
    results = []
    for path in files:
        try:
            config = RuleConfig().layered(project_config(path)).layered(cli_config)
        except ConfigError as err:
            print(f"torchwise: {err}", file=sys.stderr)
            return EXIT_ERROR
        results.append(_check_file_guarded(path, config, args.fix))
    if args.format == "json":
        sys.stdout.write(report.render_json(results))
    elif args.format == "sarif":
        sys.stdout.write(report.render_sarif(results))
    else:
        sys.stdout.write(report.render_text(results, args.fix))
    if any(r.error is not None for r in results):
        return EXIT_ERROR
    return EXIT_FINDINGS if any(r.findings for r in results) else EXIT_CLEAN


def _check_file_guarded(path: Path, config, fix: bool):
    """One file's result; a bug of ours is that file's error, never a traceback that stops the run."""
    try:
        return _check_file(path, config, fix)
    except Exception as err:  # noqa: BLE001 - reported, with what a bug report needs
        from torchwise.report import FileResult

        result = FileResult(path)
        result.error = f"internal error ({type(err).__name__}: {err}); please report it with this file"
        return result


def _check_file(path: Path, config, fix: bool):
    from torchwise.engine import analyze
    from torchwise.findings import Span
    from torchwise.fixing import apply_edits, preferred_edits
    from torchwise.report import FileResult
    from torchwise.textio import read_python, write_python

    result = FileResult(path)
    if path.suffix == ".ipynb":
        return _check_notebook(path, config, fix, result)
    try:
        text, encoding = read_python(path)
    except (OSError, UnicodeDecodeError) as err:
        result.error = f"cannot read: {err.strerror if isinstance(err, OSError) else err.reason}"
        return result
    analysis = analyze(text, str(path), config)
    if fix and analysis.parse_error is None:
        original = text
        for _ in range(_MAX_FIX_PASSES):
            edits = preferred_edits(analysis.findings)
            if not edits:
                break
            fixed_before = sum(1 for f in analysis.findings if f.fixes)
            new_text = apply_edits(text, edits)
            if new_text == text:
                break
            new_analysis = analyze(new_text, str(path), config)
            if new_analysis.parse_error is not None:
                break  # never write code that does not parse
            result.fixed += fixed_before - sum(1 for f in new_analysis.findings if f.fixes)
            text, analysis = new_text, new_analysis
        if text != original:
            try:
                write_python(path, text, encoding)
            except OSError as err:
                result.error = f"cannot write fixes: {err.strerror}"
    if analysis.parse_error is not None:
        error = analysis.parse_error
        result.error = f"cannot parse: {error.message}"
        result.error_span = Span(error.position, error.position)
    result.findings = analysis.findings
    return result


def _check_notebook(path: Path, config, fix: bool, result):
    """A notebook's code cells as one module; findings and fixes mapped back to their cells."""
    from torchwise import notebook
    from torchwise.engine import analyze
    from torchwise.fixing import apply_edits, preferred_edits

    try:
        document, cells = notebook.read_ipynb(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        result.error = f"cannot read: {getattr(err, 'strerror', None) or err}"
        return result
    combined = notebook.combine(cells)
    analysis = analyze(combined.text, str(path), config)
    if fix:
        by_cell = notebook.Combined.edits_by_cell(combined, preferred_edits(analysis.findings)) or {}
        sources = dict(cells)
        changed = {number: apply_edits(sources[number], edits) for number, edits in by_cell.items()}
        if changed:
            try:
                path.write_text(notebook.write_ipynb(document, changed), encoding="utf-8")
            except OSError as err:
                result.error = f"cannot write fixes: {err.strerror}"
                return result
            result.fixed = sum(1 for f in analysis.findings if f.fixes)
            cells = [(number, changed.get(number, source)) for number, source in cells]
            combined = notebook.combine(cells)
            analysis = analyze(combined.text, str(path), config)
    for finding in analysis.findings:
        mapped = combined.to_cell(finding.span)
        if mapped is not None:
            finding.cell, finding.span = mapped[0].key, mapped[1]
            finding.fixes = [_cell_fix(combined, fix, finding.cell) for fix in finding.fixes]
            finding.fixes = [f for f in finding.fixes if f.edits]
            result.findings.append(finding)
    return result


def _cell_fix(combined, fix, cell):
    """The fix with its edits inside the finding's cell (empty when it must touch another cell)."""
    from torchwise.findings import Fix

    def build():
        by_cell = combined.edits_by_cell(fix.edits) or {}
        return by_cell.get(cell, []) if set(by_cell) <= {cell} else []
    return Fix(fix.title, build, fix.preferred)
