"""Text in, findings out: the one entry point the CLI and the language server share."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

from torchwise.analysis.infer import Inference
from torchwise.analysis.scopes import ModuleIndex
from torchwise.config import RuleConfig
from torchwise.findings import Finding
from torchwise.rules import ALL_RULES
from torchwise.rules.base import Context, Rule
from torchwise.source import ParseError, SourceFile
from torchwise.suppress import find_suppressions


@dataclass
class Analysis:
    source: SourceFile
    findings: list[Finding] = field(default_factory=list)
    facts: Inference | None = None  # what every expression is: hover reads it

    @property
    def parse_error(self) -> ParseError | None:
        return self.source.parse_error


def analyze(text: str, path: str = "<string>", config: RuleConfig = RuleConfig(),
            rules: Sequence[Rule] = ALL_RULES, previous: Analysis | None = None) -> Analysis:
    """Findings for ``text``; ``previous`` (the same document's last analysis) lets unchanged code skip parsing."""
    source = SourceFile(text, path, previous.source if previous is not None else None)
    analysis = Analysis(source)
    tree = source.tree
    if tree is None:
        return analysis
    suppressions = find_suppressions(source.lines)
    if suppressions.whole_file:
        return analysis
    active = [rule for rule in rules if config.enabled(rule.code)]
    if not active:
        return analysis
    by_type: dict[type[ast.AST], list[Rule]] = defaultdict(list)
    for rule in active:
        for node_type in rule.node_types:
            by_type[node_type].append(rule)
    # Calls are most nodes and most rules care about a few callee names: dispatch on the name.
    by_call_name: dict[str, list[Rule]] = defaultdict(list)
    any_call = [rule for rule in by_type.get(ast.Call, ()) if rule.call_names is None]
    for rule in by_type.get(ast.Call, ()):
        for name in rule.call_names or ():
            by_call_name[name].append(rule)
    index = ModuleIndex(tree, wanted=tuple({ast.Call, *by_type}))  # the inference reads the calls too
    ctx = Context(source, index, Inference(index).run())
    analysis.facts = ctx.facts
    for node, scope in index.nodes:
        if type(node) is ast.Call:
            # `x.view(...)` is always `view`; a bare name may be an alias (`from torch import tensor as t`).
            func = node.func
            if type(func) is ast.Attribute:
                interested = any_call + by_call_name[func.attr] if func.attr in by_call_name else any_call
            else:
                interested = by_type[ast.Call]
        else:
            interested = by_type.get(type(node), ())
        for rule in interested:
            for finding in rule.check(node, scope, ctx):
                if suppressions.suppresses(finding.code, finding.span.start.line):
                    continue
                finding.severity = config.severity_of(finding.code, finding.severity) or finding.severity
                analysis.findings.append(finding)
    analysis.findings.sort(key=lambda f: (f.span.start, f.code))
    return analysis


def infer(source: SourceFile) -> Inference | None:
    """The facts alone (for hover when a document's facts were dropped to save memory)."""
    tree = source.tree
    return Inference(ModuleIndex(tree)).run() if tree is not None else None
