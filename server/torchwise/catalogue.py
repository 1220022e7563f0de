"""``torchwise rules [CODE]``: the rule docs, generated from the rules themselves."""

from __future__ import annotations

import textwrap

from torchwise.fixing import apply_edits
from torchwise.rules import ALL_RULES, RULES_BY_CODE
from torchwise.rules.base import Rule


def render_index() -> str:
    lines = [f"{'code':<7}{'severity':<9}{'name':<32}summary"]
    for rule in ALL_RULES:
        lines.append(f"{rule.code:<7}{rule.severity.label:<9}{rule.name:<32}{rule.summary}")
    lines.append("")
    lines.append("`torchwise rules CODE` shows a rule's docs and examples.")
    return "\n".join(lines) + "\n"


def _block(code: str) -> str:
    return "```python\n" + code.rstrip("\n") + "\n```"


def render_rule(rule: Rule) -> str:
    from torchwise.engine import analyze  # the engine imports the catalogue's rules; keep this lazy

    parts = [f"# {rule.code} {rule.name} ({rule.severity.label})", "", "## What it does", rule.summary, "",
             "## Why is this bad?", textwrap.fill(rule.why, 100), ""]
    example = next((ex for ex in rule.invalid if ex.fixed), rule.invalid[0])
    parts += ["## Example", _block(example.code), ""]
    if example.fixed:
        ex = example
        finding = next(f for f in analyze(ex.code).findings if f.code == rule.code)
        parts += ["Use instead:", _block(apply_edits(ex.code, finding.fixes[0].edits)), ""]
    if rule.fix_summary:
        parts += ["## Fix", rule.fix_summary, ""]
    else:
        parts += ["## Fix", "None: the change needs a decision only you can make.", ""]
    parts += ["## Not flagged", *(_block(v.code) for v in rule.valid[:3]), ""]
    return "\n".join(parts)


def render(code: str | None) -> str:
    if code is None:
        return render_index()
    rule = RULES_BY_CODE.get(code.upper())
    if rule is None:
        raise KeyError(code)
    return render_rule(rule)
