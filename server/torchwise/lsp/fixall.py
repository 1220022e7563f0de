"""Fix-all for the editor: ``source.fixAll.torchwise`` (format-on-save's ``editor.codeActionsOnSave``) and
"Fix all TWxxx in this file".

Only preferred fixes (:attr:`Finding.autofix`, what ``torchwise check --fix`` applies) are used, over the same
passes as ``--fix`` (fixes that overlap are applied one pass after another), and never a result that does not
parse. The answer is one text edit covering what changed, so the editor keeps the cursor and undo is one step.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from torchwise.findings import Edit, Finding, Position, Span
from torchwise.fixing import apply_edits, preferred_edits

PASSES = 5  # as `torchwise check --fix`


def fixed_file(text: str, findings: list[Finding], reanalyze: Callable[[str], Optional[list[Finding]]],
               wanted: Callable[[Finding], bool] = lambda finding: True) -> str:
    """``text`` with the preferred fixes of the ``wanted`` findings applied; ``reanalyze`` gives a text's findings,
    or None when it does not parse (that pass is then not kept)."""
    for _ in range(PASSES):
        edits = preferred_edits([f for f in findings if wanted(f)])
        if not edits:
            break
        new_text = apply_edits(text, edits)
        if new_text == text:
            break
        new_findings = reanalyze(new_text)
        if new_findings is None:
            break
        text, findings = new_text, new_findings
    return text


def fixed_cell(text: str, local_edits: list[tuple[Span, str]], python_source: Callable[[str], Optional[str]]) -> str:
    """A notebook cell's text with edits (in its own coordinates) applied, in one pass: the notebook is analysed as
    a whole, so a cell cannot be analysed again alone; the result must still parse."""
    new_text = apply_edits(text, [Edit(span, new) for span, new in local_edits])
    source = python_source(new_text)
    try:
        ast.parse(source if source is not None else "")
    except (SyntaxError, ValueError):
        return text
    return new_text


def changed_region(old: str, new: str) -> Optional[tuple[int, int, str]]:
    """(start, end, replacement): the one span of ``old`` that differs from ``new`` (None when they are equal)."""
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return start, end_old, new[start:end_new]


def position_at(lines: list[str], offset: int) -> Position:
    """The position of a character offset into ``"".join(lines)`` (``lines`` keep their line ends)."""
    for number, line in enumerate(lines):
        if offset < len(line) or (offset == len(line) and number == len(lines) - 1):
            return Position(number, offset)
        offset -= len(line)
    last = len(lines) - 1
    return Position(max(last, 0), len(lines[last]) if lines else 0)
