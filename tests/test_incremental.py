"""Incremental parsing gives exactly the tree a full parse gives, for any edit."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from torchwise.source import SourceFile

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))
TEXTS = [p.read_text(encoding="utf-8") for p in EXAMPLES]
SNIPPETS = ["", "x = 1\n", "    y = torch.zeros(3)\n", "def f(:\n", "(\n", ")\n", '"""\n', "# c\n",
            "class A:\n    pass\n", "@dec\n", "else:\n", "        return x\n", "import torch\n", "\n\n"]


def dump(tree) -> str:
    return ast.dump(tree, include_attributes=True)


def full(text: str):
    try:
        return dump(ast.parse(text))
    except SyntaxError:
        return "error"


def incremental(text: str, previous: SourceFile):
    source = SourceFile(text, previous=previous)
    return dump(source.tree) if source.tree is not None else "error"


@settings(max_examples=400, deadline=None)
@given(which=st.integers(0, len(TEXTS) - 1), start=st.integers(0, 200), length=st.integers(0, 6),
       snippet=st.sampled_from(SNIPPETS), edits=st.integers(1, 3))
def test_incremental_parse_equals_full_parse(which, start, length, snippet, edits):
    text = TEXTS[which]
    previous = SourceFile(text)
    assert previous.tree is not None
    for n in range(edits):
        lines = text.splitlines(keepends=True)
        at = min(start + 7 * n, len(lines))
        text = "".join(lines[:at]) + snippet + "".join(lines[at + length:])
        assert incremental(text, previous) == full(text)
        candidate = SourceFile(text, previous=previous)
        if candidate.tree is not None:
            previous = candidate


def test_unchanged_text_reuses_the_tree():
    first = SourceFile(TEXTS[0])
    assert SourceFile(TEXTS[0], previous=first).tree is first.tree
