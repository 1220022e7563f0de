"""Plain data shared by the engine, the CLI and the language server.

Positions are 0-based lines and code-point columns (Python ``str`` indices);
each front end converts them to what its client wants (UTF-16 for LSP).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Sequence


class Severity(enum.IntEnum):
    # Values follow LSP's DiagnosticSeverity so the server can pass them through.
    ERROR = 1
    WARNING = 2
    INFO = 3
    HINT = 4

    @classmethod
    def parse(cls, text: str) -> "Severity | None":
        """``"warning"`` -> WARNING; ``"off"`` -> None (rule disabled)."""
        names = {"error": cls.ERROR, "warning": cls.WARNING, "info": cls.INFO,
                 "information": cls.INFO, "hint": cls.HINT}
        key = text.strip().lower()
        if key == "off":
            return None
        if key not in names:
            raise ValueError(f"unknown severity {text!r} (use error, warning, info, hint or off)")
        return names[key]

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, order=True)
class Position:
    line: int
    col: int


@dataclass(frozen=True, order=True)
class Span:
    start: Position
    end: Position

    def contains_line(self, line: int) -> bool:
        return self.start.line <= line <= self.end.line


@dataclass(frozen=True)
class Edit:
    span: Span
    new_text: str


class Fix:
    """A quick fix: a title and text edits, built only when someone asks for them.

    Building an edit parses a small piece of code with libcst, so the keystroke
    path (diagnostics) never pays for it; code actions and ``--fix`` do.
    """

    def __init__(self, title: str, build: Callable[[], Sequence[Edit]], preferred: bool = False):
        self.title = title
        self.preferred = preferred
        self._build = build
        self._edits: tuple[Edit, ...] | None = None

    @property
    def edits(self) -> tuple[Edit, ...]:
        if self._edits is None:
            self._edits = tuple(self._build())
        return self._edits

    def __repr__(self) -> str:
        return f"Fix({self.title!r})"


@dataclass
class Finding:
    code: str
    message: str
    severity: Severity
    span: Span
    fixes: list[Fix] = field(default_factory=list)
    cell: int | None = None  # in a notebook: the 1-based cell number (``span`` is then inside that cell)

    @property
    def autofix(self) -> Fix | None:
        """The fix ``--fix`` applies: the first one marked preferred (none when no fix is sure enough to apply
        unasked, e.g. a move that changes which random numbers a seeded script draws)."""
        return next((fix for fix in self.fixes if fix.preferred), None)
