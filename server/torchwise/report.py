"""Rendering results of ``torchwise check``: text (like ruff), JSON, SARIF 2.1.0, GitHub workflow annotations,
statistics and diffs.

Lines and columns are 1-based in every format; columns count code points.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from torchwise import __version__
from torchwise.findings import Finding, Severity, Span
from torchwise.fixing import edits_of
from torchwise.rules import ALL_RULES


@dataclass
class FileResult:
    path: Path
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # could not read or parse
    error_span: Span | None = None
    fixed: int = 0  # findings whose fixes were written
    warnings: list[str] = field(default_factory=list)  # checked, but something was not done (fixes not written)
    diff: str | None = None  # --diff: the changes --fix would make, as a unified diff


def _where(path: Path, line: int, col: int, cell: int | None = None) -> str:
    if cell is not None:
        return f"{path}:cell {cell}:{line + 1}:{col + 1}"  # as ruff reports notebooks
    return f"{path}:{line + 1}:{col + 1}"


def render_text(results: Sequence[FileResult], fix_applied: bool) -> str:
    out = []
    total = fixable = fixed = 0
    for result in results:
        fixed += result.fixed
        if result.error is not None:
            start = result.error_span.start if result.error_span else None
            where = _where(result.path, start.line, start.col) if start else str(result.path)
            out.append(f"{where}: error: {result.error}")
        for warning in result.warnings:
            out.append(f"{result.path}: warning: {warning}")
        for finding in result.findings:
            total += 1
            marker = ""
            if finding.autofix:
                fixable += 1
                marker = "[*] "
            start = finding.span.start
            out.append(f"{_where(result.path, start.line, start.col, finding.cell)}: {finding.code} "
                       f"{marker}{finding.message}")
    errors = sum(1 for r in results if r.error is not None)
    if fix_applied and fixed:
        out.append(f"Fixed {fixed} finding{'s' if fixed != 1 else ''}.")
    if total:
        out.append(f"Found {total} finding{'s' if total != 1 else ''} in {len(results)} file"
                   f"{'s' if len(results) != 1 else ''}.")
        if fixable and not fix_applied:
            out.append(f"[*] {fixable} fixable with `torchwise check --fix`.")
    elif not results:
        out.append("No Python files to check.")
    elif not errors:
        out.append(f"All checks passed ({len(results)} file{'s' if len(results) != 1 else ''}).")
    if errors:
        out.append(f"{errors} file{'s' if errors != 1 else ''} could not be checked.")
    return "\n".join(out) + "\n"


def _location(span: Span) -> dict:
    return {"row": span.start.line + 1, "column": span.start.col + 1,
            "end_row": span.end.line + 1, "end_column": span.end.col + 1}


def render_json(results: Sequence[FileResult]) -> str:
    items = []
    for result in results:
        if result.error is not None:
            loc = _location(result.error_span) if result.error_span else None
            items.append({"filename": str(result.path), "code": None, "severity": "error",
                          "message": result.error, "location": loc, "fixes": []})
        for warning in result.warnings:
            items.append({"filename": str(result.path), "code": None, "severity": "warning",
                          "message": warning, "location": None, "fixes": []})
        for f in result.findings:
            items.append({
                "filename": str(result.path), "code": f.code, "severity": f.severity.label,
                "message": f.message, "location": _location(f.span), "cell": f.cell,
                "fixes": [{"title": fix.title,
                           "edits": [{"location": _location(e.span), "content": e.new_text} for e in edits_of(fix)]}
                          for fix in f.fixes],
            })
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note", Severity.HINT: "note"}


def _region(span: Span) -> dict:
    return {"startLine": span.start.line + 1, "startColumn": span.start.col + 1,
            "endLine": span.end.line + 1, "endColumn": span.end.col + 1}


def render_sarif(results: Sequence[FileResult]) -> str:
    rule_index = {rule.code: i for i, rule in enumerate(ALL_RULES)}
    sarif_results, notifications = [], []
    for result in results:
        artifact = {"uri": result.path.as_posix()}
        if result.error is not None:
            location = {"physicalLocation": {"artifactLocation": artifact}}
            if result.error_span:
                location["physicalLocation"]["region"] = _region(result.error_span)
            notifications.append({"level": "error", "message": {"text": result.error}, "locations": [location]})
        for warning in result.warnings:
            notifications.append({"level": "warning", "message": {"text": warning},
                                  "locations": [{"physicalLocation": {"artifactLocation": artifact}}]})
        for f in result.findings:
            entry = {
                "ruleId": f.code, "ruleIndex": rule_index.get(f.code, -1), "level": _SARIF_LEVEL[f.severity],
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": _region(f.span)}}],
            }
            edits = edits_of(f.fixes[0]) if f.fixes else ()
            if edits:
                fix = f.fixes[0]
                entry["fixes"] = [{"description": {"text": fix.title}, "artifactChanges": [{
                    "artifactLocation": artifact,
                    "replacements": [{"deletedRegion": _region(e.span), "insertedContent": {"text": e.new_text}}
                                     for e in edits]}]}]
            sarif_results.append(entry)
    driver = {
        "name": "torchwise", "version": __version__, "informationUri": "https://github.com/torchwise/torchwise",
        "rules": [{
            "id": rule.code, "name": rule.name, "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.why}, "help": {"text": f"{rule.summary} {rule.why}"},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        } for rule in ALL_RULES],
    }
    run = {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": sarif_results,
           "invocations": [{"executionSuccessful": not any(n["level"] == "error" for n in notifications),
                            "toolExecutionNotifications": notifications}]}
    doc = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def render_statistics(results: Sequence[FileResult], fix_applied: bool) -> str:
    """``--statistics``: one line per rule, the most frequent first (as ruff's): count, code, [*] when fixable, name."""
    names = {rule.code: rule.name for rule in ALL_RULES}
    counts: dict[str, list[int]] = {}
    for result in results:
        for finding in result.findings:
            entry = counts.setdefault(finding.code, [0, 0])
            entry[0] += 1
            entry[1] += finding.autofix is not None
    out = []
    width = max((len(str(n)) for n, _ in counts.values()), default=1)
    for code, (n, fixable) in sorted(counts.items(), key=lambda item: (-item[1][0], item[0])):
        out.append(f"{n:>{width}}\t{code}\t{'[*] ' if fixable else '    '}{names.get(code, '')}")
    for result in results:
        if result.error is not None:
            out.append(f"{result.path}: error: {result.error}")
    fixed = sum(r.fixed for r in results)
    if fix_applied and fixed:
        out.append(f"Fixed {_plural(fixed, 'finding')}.")
    total = sum(n for n, _ in counts.values())
    out.append(f"Found {_plural(total, 'finding')} in {_plural(len(results), 'file')}." if total else
               "No findings." if results else "No Python files to check.")
    return "\n".join(out) + "\n"


def render_diff(results: Sequence[FileResult]) -> str:
    """``--diff``: what ``--fix`` would change, file by file, then how many findings it would fix."""
    out = [r.diff for r in results if r.diff]
    for result in results:
        if result.error is not None:
            out.append(f"{result.path}: error: {result.error}\n")
        for warning in result.warnings:
            out.append(f"{result.path}: warning: {warning}\n")
    fixed, files = sum(r.fixed for r in results if r.diff), sum(1 for r in results if r.diff)
    out.append(f"Would fix {_plural(fixed, 'finding')} in {_plural(files, 'file')}.\n" if files else
               "No fixes to apply.\n")
    return "".join(out)


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice",
                 Severity.HINT: "notice"}


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(results: Sequence[FileResult]) -> str:
    """``--format github``: workflow commands that GitHub Actions shows as annotations on the pull request's lines.
    A notebook's findings point at the notebook (GitHub cannot show a cell's line)."""
    out = []
    for result in results:
        name = _gh_property(result.path.as_posix())
        if result.error is not None:
            where = f"file={name}"
            if result.error_span:
                where += f",line={result.error_span.start.line + 1},col={result.error_span.start.col + 1}"
            out.append(f"::error {where},title=torchwise::{_gh_data(result.error)}")
        for warning in result.warnings:
            out.append(f"::warning file={name},title=torchwise::{_gh_data(warning)}")
        for f in result.findings:
            span = f.span
            if f.cell is not None:
                where = f"file={name}"
                message = f"cell {f.cell}:{span.start.line + 1}:{span.start.col + 1}: {f.message}"
            else:
                where = (f"file={name},line={span.start.line + 1},col={span.start.col + 1},"
                         f"endLine={span.end.line + 1},endColumn={span.end.col + 1}")
                message = f.message
            out.append(f"::{_GITHUB_LEVEL[f.severity]} {where},title=torchwise {f.code}::{_gh_data(f.code + ' ' + message)}")
    return "\n".join(out) + ("\n" if out else "")
