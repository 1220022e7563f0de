"""Rendering results of ``torchwise check``: text (like ruff), JSON and SARIF 2.1.0.

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
