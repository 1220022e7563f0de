"""Inline suppression comments.

``# noqa`` / ``# noqa: TW101, TW102`` and ``# torchwise: ignore`` /
``# torchwise: ignore[TW101]`` silence findings that start on that line;
``# torchwise: ignore-file`` anywhere silences the file. A bare ``noqa`` or
``ignore`` silences every code on the line, as in ruff and flake8. Codes may be
prefixes (``TW1``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import contains

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:[\s,]+[A-Z]+[0-9]*)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*torchwise:\s*ignore(?P<file>-file)?(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
# A line either pattern matches somewhere: only such lines are read further (most comments are neither).
_EITHER = re.compile(r"#\s*(?:noqa|torchwise:\s*ignore)", re.IGNORECASE)
_ALL = frozenset({""})  # the empty prefix matches every code


@dataclass
class Suppressions:
    whole_file: bool
    by_line: dict[int, frozenset[str]]  # 0-based line -> code prefixes

    def suppresses(self, code: str, line: int) -> bool:
        if self.whole_file:
            return True
        prefixes = self.by_line.get(line)
        return prefixes is not None and any(code.startswith(p) for p in prefixes)


def _codes(text: str | None) -> frozenset[str]:
    if not text:
        return _ALL
    return frozenset(c.upper() for c in re.split(r"[\s,]+", text.strip()) if c) or _ALL


def find_suppressions(lines: list[str]) -> Suppressions:
    whole_file = False
    by_line: dict[int, frozenset[str]] = {}
    # The lines with a `#` are found at C speed (200k lines: 20 -> 12 ms an edit, a Python loop over every line).
    for number in compress(count(), map(contains, lines, repeat("#"))):
        line = lines[number]
        if _EITHER.search(line) is None:
            continue
        codes: set[str] = set()
        for match in _IGNORE.finditer(line):
            if match.group("file"):
                whole_file = True
            else:
                codes |= _codes(match.group("codes"))
        for match in _NOQA.finditer(line):
            codes |= _codes(match.group("codes"))
        if codes:
            by_line[number] = frozenset(codes)
    return Suppressions(whole_file, by_line)
