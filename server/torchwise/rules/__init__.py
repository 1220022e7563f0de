"""The rule catalogue. A rule family is one module; adding a rule touches one file."""

from __future__ import annotations

from torchwise.rules import creation
from torchwise.rules.base import Rule

ALL_RULES: tuple[Rule, ...] = tuple(cls() for cls in creation.RULES)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
