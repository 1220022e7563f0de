"""Which rules run, and at which severity.

Precedence, lowest to highest (each layer may set ``select``, ``ignore``, ``severity``):

1. the rules' defaults (every rule on, at its default severity);
2. editor settings (``torchwise.select`` / ``ignore`` / ``severity`` in VS Code);
3. ``[tool.torchwise]`` in the nearest ``pyproject.toml`` above the file: the
   project's choice, shared with CI, so the editor shows what ``torchwise check`` shows;
4. command-line flags (``torchwise check --select/--ignore``);
5. inline comments (``# noqa: TW101``, ``# torchwise: ignore[...]``, ``ignore-file``).

A layer's ``select`` replaces the one below; ``ignore`` lists add up; ``severity``
entries override per code. A code is on when it matches a selected prefix (or
nothing is selected), matches no ignored prefix, and its severity is not "off".
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from torchwise.findings import Severity

try:
    import tomllib
except ImportError:  # Python < 3.11: the same parser, as a package (a dependency there)
    import tomli as tomllib


class ConfigError(ValueError):
    """A setting that cannot be understood; the message says where and why."""


@dataclass(frozen=True)
class RuleConfig:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity | None] = field(default_factory=dict)

    def enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        if any(code.startswith(p) for p in self.ignore):
            return False
        return self.severity_of(code, Severity.HINT) is not None

    def severity_of(self, code: str, default: Severity) -> Severity | None:
        return self.severity.get(code, default)

    def layered(self, top: "RuleConfig | None") -> "RuleConfig":
        """This config with ``top`` laid over it."""
        if top is None:
            return self
        return replace(
            self,
            select=top.select or self.select,
            ignore=self.ignore + tuple(c for c in top.ignore if c not in self.ignore),
            severity={**self.severity, **top.severity},
        )


def _codes(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of rule codes such as [\"TW101\", \"TW2\"]")
    return tuple(v.strip().upper() for v in value if v.strip())


def parse_rule_config(data: Mapping[str, Any] | None, where: str,
                      problems: list[str] | None = None) -> RuleConfig:
    """Read ``select``/``ignore``/``severity`` from a settings mapping; unknown keys are ignored.

    With ``problems`` given, a bad entry is reported there and skipped (the editor keeps
    working with the rest); without it, the first bad entry raises ConfigError.
    """
    def bad(message: str) -> None:
        if problems is None:
            raise ConfigError(message)
        problems.append(message)

    if not data:
        return RuleConfig()
    if not isinstance(data, Mapping):
        bad(f"{where}: expected a table of settings")
        return RuleConfig()
    lists = {}
    for key in ("select", "ignore"):
        try:
            lists[key] = _codes(data.get(key), f"{where}: {key}")
        except ConfigError as err:
            bad(str(err))
            lists[key] = ()
    severities = data.get("severity") or {}
    if not isinstance(severities, Mapping):
        bad(f"{where}: severity must be a table such as {{TW201 = \"off\"}}")
        severities = {}
    parsed: dict[str, Severity | None] = {}
    for code, text in severities.items():
        try:
            parsed[str(code).upper()] = Severity.parse(str(text))
        except ValueError as err:
            bad(f"{where}: severity of {code}: {err}")
    return RuleConfig(lists["select"], lists["ignore"], parsed)


def find_pyproject(path: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``path``'s folder that has ``[tool.torchwise]``."""
    folder = path if path.is_dir() else path.parent
    for candidate in (folder, *folder.parents):
        found = _torchwise_table(candidate / "pyproject.toml")
        if found is not None:
            return candidate / "pyproject.toml"
    return None


@lru_cache(maxsize=64)
def _read_toml(path: Path, mtime_ns: int) -> Mapping[str, Any]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def _torchwise_table(pyproject: Path) -> Mapping[str, Any] | None:
    try:
        status = pyproject.stat()
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode):
        return None  # a folder (or a FIFO) of that name is no configuration, and must not be opened
    try:
        data = _read_toml(pyproject, status.st_mtime_ns)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{pyproject}: cannot read: {err}") from None
    except RecursionError:  # tomllib recurses per nesting level: `x = [[[...]]]` ended the whole run
        raise ConfigError(f"{pyproject}: cannot read: nested too deeply") from None
    tool = data.get("tool")
    table = tool.get("torchwise") if isinstance(tool, Mapping) else None
    if table is not None and not isinstance(table, Mapping):
        raise ConfigError(f"{pyproject}: tool.torchwise must be a table ([tool.torchwise])")
    return table


def project_config(path: Path) -> RuleConfig | None:
    pyproject = find_pyproject(path.resolve())
    if pyproject is None:
        return None
    return parse_rule_config(_torchwise_table(pyproject), f"{pyproject} [tool.torchwise]")
