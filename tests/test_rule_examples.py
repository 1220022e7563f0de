"""Every rule's own examples: silent on `valid`, fires on `invalid`, and its first fix gives `fixed`."""

from __future__ import annotations

import ast

import pytest

from torchwise.engine import analyze
from torchwise.fixing import apply_edits
from torchwise.rules import ALL_RULES

VALID = [(rule, i, ex) for rule in ALL_RULES for i, ex in enumerate(rule.valid)]
INVALID = [(rule, i, ex) for rule in ALL_RULES for i, ex in enumerate(rule.invalid)]


def _ids(cases):
    return [f"{rule.code}-{i}" for rule, i, _ in cases]


@pytest.mark.parametrize(("rule", "i", "example"), VALID, ids=_ids(VALID))
def test_valid_example_is_silent(rule, i, example):
    codes = [f.code for f in analyze(example.code).findings]
    assert rule.code not in codes


@pytest.mark.parametrize(("rule", "i", "example"), INVALID, ids=_ids(INVALID))
def test_invalid_example_fires_and_fixes(rule, i, example):
    findings = [f for f in analyze(example.code).findings if f.code == rule.code]
    assert len(findings) == 1, findings
    finding = findings[0]
    if example.fixed is None:
        assert not finding.fixes
        return
    assert finding.fixes, "expected a fix"
    fixed = apply_edits(example.code, finding.fixes[0].edits)
    assert fixed == example.fixed
    ast.parse(fixed)
    assert rule.code not in [f.code for f in analyze(fixed).findings], "the fix must clear the finding"


def test_every_rule_is_documented_and_has_examples():
    codes = [rule.code for rule in ALL_RULES]
    assert len(codes) == len(set(codes))
    for rule in ALL_RULES:
        assert rule.name and rule.summary and rule.why
        assert rule.valid and rule.invalid, rule.code
