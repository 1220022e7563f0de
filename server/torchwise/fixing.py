"""Applying fixes to text (``torchwise check --fix`` and the tests)."""

from __future__ import annotations

import re
from typing import Iterable, Optional

from torchwise.findings import Edit, Finding, Fix
from torchwise.source import SourceFile


_FIRST_END = re.compile(r"\r\n|\r|\n")
_BARE_LF = re.compile(r"(?<!\r)\n")


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits; an edit overlapping an earlier-applied one is skipped. New lines in an edit end
    as the file's first line does (fixes are written with \\n: a CRLF file got lines ending in LF alone)."""
    source = SourceFile(text)
    first_end = _FIRST_END.search(text)
    newline = first_end.group() if first_end is not None else "\n"
    chosen: list[tuple[int, int, str]] = []
    for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        start, end = source.offset(edit.span.start), source.offset(edit.span.end)
        if chosen and start < chosen[-1][1]:
            continue
        new_text = edit.new_text if newline == "\n" else _BARE_LF.sub(newline, edit.new_text)
        chosen.append((start, end, new_text))
    out, last = [], 0
    for start, end, new_text in chosen:
        out += [text[last:start], new_text]
        last = end
    out.append(text[last:])
    return "".join(out)


def edits_of(fix: Fix, failures: Optional[list] = None) -> tuple[Edit, ...]:
    """The fix's edits; a fix whose builder raises (a bug of ours) has none, and the failure is noted, so that
    one broken fix never stops the others."""
    try:
        return fix.edits
    except Exception as err:  # noqa: BLE001 - reported by the caller
        if failures is not None:
            failures.append((fix, f"{type(err).__name__}: {err}"))
        return ()


def preferred_edits(findings: Iterable[Finding], failures: Optional[list] = None) -> list[Edit]:
    """The edits of each finding's preferred fix (:attr:`Finding.autofix`), deduplicated (two fixes may add the
    same import). ``failures`` collects ``(finding, why)`` for fixes that could not be built."""
    seen: set[Edit] = set()
    result = []
    for finding in findings:
        if finding.autofix is not None:
            broken: list = []
            for edit in edits_of(finding.autofix, broken):
                if edit not in seen:
                    seen.add(edit)
                    result.append(edit)
            if failures is not None:
                failures.extend((finding, why) for _, why in broken)
    return result
