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
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text",
                       help="text (the default), json, sarif (GitHub code scanning) or github (workflow annotations)")
    check.add_argument("--fix", action="store_true", help="apply the preferred fix of each finding in place")
    check.add_argument("--diff", action="store_true",
                       help="print the changes --fix would make, as a unified diff, and write nothing")
    check.add_argument("--statistics", action="store_true", help="count the findings per rule instead of listing them")
    check.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even when there are findings (2 still means something could not be checked)")
    check.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                       help="check on N processes (default 0: one per core)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    check.add_argument("--cache-dir", metavar="DIR",
                       help=f"where results are kept by content (default: $TORCHWISE_CACHE_DIR, else ./{'.torchwise_cache'})")

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

        status = serve()  # LSP's own exit status: 0 after shutdown, 1 for an exit without one
        return status if isinstance(status, int) else EXIT_CLEAN
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
    from torchwise import batch, report
    from torchwise.config import RuleConfig
    from torchwise.discovery import BadPattern, discover
    from torchwise.textio import read_bytes

    if args.fix and args.diff:
        print("torchwise: --fix writes the fixes, --diff only shows them: choose one", file=sys.stderr)
        return EXIT_ERROR
    if args.jobs < 0:
        print("torchwise: --jobs takes a number of processes (0: one per core)", file=sys.stderr)
        return EXIT_ERROR
    jobs = args.jobs or batch.default_jobs()
    # --fix neither reads nor writes the cache: the file is read once, right before it is analysed and rewritten
    # (an edit landing in between is then caught, not overwritten), and it has another key afterwards anyway.
    cache = batch.Cache(batch.cache_folder(args.cache_dir, args.no_cache or args.fix))
    with_edits = args.format in ("json", "sarif")  # the formats that show each fix's edits
    cli_config = RuleConfig(select=_codes(args.select), ignore=_codes(args.ignore))
    unknown = _unknown_codes((*cli_config.select, *cli_config.ignore))
    if unknown:  # a typo (`--select TW1O1`) selected nothing and reported "All checks passed"
        print(f"torchwise: no rule code starts with {', '.join(unknown)}; `torchwise rules` lists them",
              file=sys.stderr)
        return EXIT_ERROR
    try:
        found = discover(args.paths, args.exclude)
    except FileNotFoundError as err:
        print(f"torchwise: no such file or folder: {err}", file=sys.stderr)
        return EXIT_ERROR
    except BadPattern as err:
        print(f"torchwise: {err}", file=sys.stderr)
        return EXIT_ERROR
    for folder in found.empty:
        print(f"torchwise: no Python files in {folder}", file=sys.stderr)
    results: list = []
    work, keys, sizes = [], [], []  # files not in the cache: checked on `jobs` processes
    told: set[str] = set()  # each bad pyproject.toml is named once on stderr, and is every file's error
    for item in found.files:
        if item.problem is not None:
            results.append(_failed(item.path, item.problem))
            continue
        config, problem = _config_for(item.path, cli_config)
        if problem is not None:
            if problem not in told:
                told.add(problem)
                print(f"torchwise: {problem}", file=sys.stderr)
            results.append(_failed(item.path, f"not checked: {problem}"))
            continue
        entry_key, record = None, None
        if cache.folder is not None:
            try:
                data = read_bytes(item.path)  # non-blocking: a FIFO swapped in since discovery must not hang us
            except OSError:
                data = None  # the check reports why it cannot read it
            if data is not None:
                entry_key = batch.key(item.path, data, config)
                record = cache.get(entry_key)
        cached = _cached(item.path, record, with_edits, args.diff) if record is not None else None
        if cached is not None:
            results.append(cached)
            continue
        results.append(len(work))
        work.append((item.path, config, args.fix, args.diff, item.tree, with_edits))
        keys.append(entry_key)
        sizes.append(_size(item.path))
    records = batch.run_all(_work, work, jobs, sizes)
    for entry_key, record in zip(keys, records):
        if entry_key is not None:
            cache.put(entry_key, record)
    results = [batch.from_record(work[r][0], records[r]) if isinstance(r, int) else r for r in results]
    if args.diff:
        sys.stdout.write(report.render_diff(results))
    elif args.statistics:
        sys.stdout.write(report.render_statistics(results, args.fix))
    elif args.format == "json":
        sys.stdout.write(report.render_json(results))
    elif args.format == "sarif":
        sys.stdout.write(report.render_sarif(results))
    elif args.format == "github":
        sys.stdout.write(report.render_github(results))
    else:
        sys.stdout.write(report.render_text(results, args.fix))
    if not results or any(r.error is not None for r in results):
        return EXIT_ERROR  # nothing could be checked, or something could not
    if args.exit_zero:
        return EXIT_CLEAN
    if args.diff:
        return EXIT_FINDINGS if any(r.diff for r in results) else EXIT_CLEAN
    return EXIT_FINDINGS if any(r.findings for r in results) else EXIT_CLEAN


def _cached(path: Path, record, with_edits: bool, diff: bool):
    """The cache's result for ``path``, if it serves this run. An entry of another shape (written by hand, or by
    something else) is a miss, not a KeyError traceback that stops the run."""
    from torchwise import batch

    try:
        if (with_edits and not record["edits"]) or (diff and not batch.nothing_to_fix(record)):
            return None
        return batch.from_record(path, record)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return None


def _unknown_codes(codes: Sequence[str]) -> list[str]:
    from torchwise.rules import ALL_RULES

    return [code for code in dict.fromkeys(codes) if not any(rule.code.startswith(code) for rule in ALL_RULES)]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _work(item) -> dict:
    """One file's check, as a record (what comes back from a worker process, and what the cache keeps)."""
    from torchwise.batch import to_record

    path, config, fix, diff, tree, with_edits = item
    return to_record(_check_file_guarded(path, config, fix, tree, diff), with_edits)


def _config_for(path: Path, cli_config):
    """(the file's rule config, None) or (None, why its pyproject.toml cannot be used)."""
    from torchwise.config import ConfigError, RuleConfig, project_config

    try:
        return RuleConfig().layered(project_config(path)).layered(cli_config), None
    except ConfigError as err:
        return None, str(err)


def _failed(path: Path, error: str):
    from torchwise.report import FileResult

    result = FileResult(path)
    result.error = error
    return result


def _check_file_guarded(path: Path, config, fix: bool, tree: Path | None = None, diff: bool = False):
    """One file's result; a bug of ours is that file's error, never a traceback that stops the run."""
    try:
        return _check_file(path, config, fix, tree, diff)
    except RecursionError:  # Python parses deeper code than the analysis can walk (`x + x + ...` 2,000 long)
        from torchwise.engine import TOO_DEEP

        return _failed(path, TOO_DEEP)
    except Exception as err:  # noqa: BLE001 - reported, with what a bug report needs
        return _failed(path, f"internal error ({type(err).__name__}: {err}); please report it with this file")


def _writable(path: Path, tree: Path | None) -> str | None:
    """Why ``--fix`` must not write ``path``, if it must not: a symlink whose target leaves the checked tree (as
    ruff, torchwise never writes through it to a file elsewhere)."""
    import os

    if tree is None:
        return None
    real = os.path.realpath(path)
    try:
        inside = os.path.commonpath([real, str(tree)]) == str(tree)
    except ValueError:  # another drive
        inside = False
    if not inside:
        return f"not fixed: it is a symlink to {real}, outside the checked folder {tree}"
    return None


def _unified(before: str, after: str, name: str) -> str:
    import difflib

    from torchwise.source import split_lines

    # Lines as Python and `patch` see them: a form feed or \u2028 inside a line does not end it.
    lines = difflib.unified_diff(split_lines(before), split_lines(after), name, name)
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def _check_file(path: Path, config, fix: bool, tree: Path | None = None, diff: bool = False):
    from torchwise.engine import analyze
    from torchwise.findings import Span
    from torchwise.fixing import apply_edits, preferred_edits
    from torchwise.report import FileResult
    from torchwise.textio import FileChanged, read_file, write_python

    result = FileResult(path)
    if path.suffix == ".ipynb":
        return _check_notebook(path, config, fix, result, tree, diff)
    try:
        read = read_file(path)
    except (OSError, UnicodeDecodeError) as err:
        result.error = f"cannot read: {err.strerror if isinstance(err, OSError) else err.reason}"
        return result
    text = read.text
    analysis = analyze(text, str(path), config)
    original = analysis
    if (fix or diff) and analysis.parse_error is None:
        fixed, failures = 0, []
        for _ in range(_MAX_FIX_PASSES):
            edits = preferred_edits(analysis.findings, failures)
            if not edits:
                break
            fixable_before = sum(1 for f in analysis.findings if f.autofix)
            new_text = apply_edits(text, edits)
            if new_text == text:
                break
            new_analysis = analyze(new_text, str(path), config)
            if new_analysis.parse_error is not None:
                break  # never write code that does not parse
            fixed += max(0, fixable_before - sum(1 for f in new_analysis.findings if f.autofix))
            text, analysis = new_text, new_analysis
        result.warnings += [_fix_failure(finding, why) for finding, why in _unique(failures)]
        if diff:
            if text != read.text:
                result.diff, result.fixed = _unified(read.text, text, str(path)), fixed
            analysis = original  # nothing written: the file's findings are those of the text as read
        elif text != read.text:
            refused = _writable(path, tree)
            try:
                if refused is not None:
                    raise FileChanged(0, refused)
                write_python(path, text, read.encoding, expected=read.data)
                result.fixed = fixed
            except FileChanged as err:  # the analysis of the text as read is still what we report
                result.warnings.append(err.strerror if refused else f"not fixed: {err.strerror}")
                analysis = analyze(read.text, str(path), config)
            except OSError as err:
                result.error = f"cannot write fixes: {err.strerror or err}; the file is unchanged"
                analysis = analyze(read.text, str(path), config)
    if analysis.parse_error is not None:
        error = analysis.parse_error
        result.error = f"cannot parse: {error.message or 'nested too deeply for Python'}"  # a MemoryError says ''
        result.error_span = Span(error.position, error.position)
    result.findings = analysis.findings
    return result


def _unique(failures: list) -> list:
    """Failures of a fix builder, once per finding position (the fix passes ask again)."""
    seen, out = set(), []
    for finding, why in failures:
        key = (finding.code, finding.span.start, why)
        if key not in seen:
            seen.add(key)
            out.append((finding, why))
    return out


def _fix_failure(finding, why: str) -> str:
    start = finding.span.start
    return (f"the {finding.code} fix at {start.line + 1}:{start.col + 1} could not be built ({why}); "
            "it was left out, please report it")


def _check_notebook(path: Path, config, fix: bool, result, tree: Path | None = None, diff: bool = False):
    """A notebook's code cells as one module; findings and fixes mapped back to their cells."""
    from torchwise import notebook
    from torchwise.engine import analyze
    from torchwise.fixing import apply_edits, edits_of, preferred_edits
    from torchwise.textio import FileChanged, read_bytes, replace_file

    try:
        data = read_bytes(path)
        document, cells = notebook.read_ipynb(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        result.error = f"cannot read: {getattr(err, 'strerror', None) or err}"
        return result
    combined = notebook.combine(cells)
    analysis = analyze(combined.text, str(path), config)
    if fix or diff:
        failures: list = []
        edits = preferred_edits(analysis.findings, failures)
        result.warnings += [_fix_failure(finding, why) for finding, why in _unique(failures)]
        by_cell = notebook.Combined.edits_by_cell(combined, edits) or {}
        sources = dict(cells)
        changed = {number: apply_edits(sources[number], cell_edits) for number, cell_edits in by_cell.items()}
        changed = {number: text for number, text in changed.items() if text != sources[number]}
        if changed:
            fixed_cells = [(number, changed.get(number, source)) for number, source in cells]
            fixed_combined = notebook.combine(fixed_cells)
            fixed_analysis = analyze(fixed_combined.text, str(path), config)
            if diff:
                result.diff = "".join(_unified(sources[number], text, f"{path}:cell {number}")
                                      for number, text in sorted(changed.items()))
                before = sum(1 for f in analysis.findings if f.autofix)
                result.fixed = max(0, before - sum(1 for f in fixed_analysis.findings if f.autofix))
                changed = {}
        if changed:
            refused = _writable(path, tree)
            try:
                if refused is not None:
                    raise FileChanged(0, refused)
                replace_file(path, notebook.write_ipynb(document, changed).encode("utf-8"), expected=data)
            except FileChanged as err:
                result.warnings.append(err.strerror if refused else f"not fixed: {err.strerror}")
            except OSError as err:
                result.error = f"cannot write fixes: {err.strerror or err}; the file is unchanged"
                return result
            else:
                before = sum(1 for f in analysis.findings if f.autofix)
                result.fixed = max(0, before - sum(1 for f in fixed_analysis.findings if f.autofix))
                cells, combined, analysis = fixed_cells, fixed_combined, fixed_analysis
    for finding in analysis.findings:
        mapped = combined.to_cell(finding.span)
        if mapped is not None:
            finding.cell, finding.span = mapped[0].key, mapped[1]
            finding.fixes = [_cell_fix(combined, fix, finding.cell) for fix in finding.fixes]
            finding.fixes = [f for f in finding.fixes if edits_of(f)]
            result.findings.append(finding)
    return result


def _cell_fix(combined, fix, cell):
    """The fix with its edits inside the finding's cell (empty when it must touch another cell)."""
    from torchwise.findings import Fix

    def build():
        from torchwise.fixing import edits_of

        by_cell = combined.edits_by_cell(edits_of(fix)) or {}
        return by_cell.get(cell, []) if set(by_cell) <= {cell} else []
    return Fix(fix.title, build, fix.preferred)
