"""Applying fixes to text (``torchwise check --fix`` and the tests)."""

from __future__ import annotations

from typing import Iterable

from torchwise.findings import Edit, Finding
from torchwise.source import SourceFile


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits; an edit overlapping an earlier-applied one is skipped."""
    source = SourceFile(text)
    chosen: list[tuple[int, int, str]] = []
    for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        start, end = source.offset(edit.span.start), source.offset(edit.span.end)
        if chosen and start < chosen[-1][1]:
            continue
        chosen.append((start, end, edit.new_text))
    out, last = [], 0
    for start, end, new_text in chosen:
        out += [text[last:start], new_text]
        last = end
    out.append(text[last:])
    return "".join(out)


def preferred_edits(findings: Iterable[Finding]) -> list[Edit]:
    """The edits of each finding's first fix, deduplicated (two fixes may add the same import)."""
    seen: set[Edit] = set()
    result = []
    for finding in findings:
        if finding.fixes:
            for edit in finding.fixes[0].edits:
                if edit not in seen:
                    seen.add(edit)
                    result.append(edit)
    return result
