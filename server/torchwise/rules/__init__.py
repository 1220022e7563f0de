"""The rule catalogue. A rule family is one module; adding a rule touches one file."""

from __future__ import annotations

from torchwise.rules import (
    autograd, creation, devices, loops, losses, patterns, reproducibility, results, shapes, sync, training, transfers,
    views,
)
from torchwise.rules.base import Rule

ALL_RULES: tuple[Rule, ...] = tuple(sorted(
    (cls() for family in (creation, transfers, devices, sync, views, autograd, results, loops, shapes, losses, patterns,
                          reproducibility, training) for cls in family.RULES), key=lambda rule: rule.code))
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
