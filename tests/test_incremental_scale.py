"""Scale (issue 13): what an incremental analysis keeps from the last one equals what it would build afresh.

The module index is put together from one part per top-level statement, and the parts of the statements the
incremental parse reused are the last index's. Random edits (hypothesis) to real files: after each, the index
built from the previous one must equal an index built from scratch on the same tree, scope for scope.
"""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from torchwise.analysis.scopes import ModuleIndex, Scope
from torchwise.engine import analyze

ROOT = Path(__file__).parent.parent
FILES = sorted((ROOT / "tests" / "corpus").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
TEXTS = [p.read_text(encoding="utf-8") for p in FILES]

# Edits that move what the index records: module bindings (imports, globals, defs), scopes (lambdas,
# comprehensions, nested defs), calls by name, `self.` stores, loads, and text that does not parse.
SNIPPETS = [
    "x = torch.randn(4, 3)\n",
    "import numpy as torch\n",
    "from torch import tensor as T\n",
    "global HIDDEN\nHIDDEN = 3\n",
    "def helper(t):\n    return [u * 2 for u in t]\n",
    "f = lambda v: helper(v)\n",
    "self.fc = nn.Linear(8, 2)\n",
    "out = helper(torch.ones(5, 2)).float()\n",
    "class Net(nn.Module):\n    def forward(self, x):\n        nonlocal y\n        return x\n",
    "for i in range(3):\n    print(i)\n",
    "del x\n",
    "pass\n",
    "(\n",
    "",
]


def _indent_at(lines: list[str], at: int) -> str:
    for line in lines[at:]:
        if line.strip():
            return line[:len(line) - len(line.lstrip())]
    return ""


def edit(text: str, at: int, delete: int, snippet: str) -> str:
    lines = text.splitlines(keepends=True)
    at = min(at, len(lines))
    indent = _indent_at(lines, at)
    inserted = "".join(indent + line if line.strip() else line for line in snippet.splitlines(keepends=True))
    return "".join(lines[:at]) + inserted + "".join(lines[at + delete:])


def _dump(tree: ast.Module) -> str:
    return ast.dump(tree, include_attributes=True)


def index_signature(index: ModuleIndex):
    """Everything an index holds, with scopes told apart by their nodes (two builds make different objects)."""
    def scope(s: Scope | None):
        return None if s is None else (s.kind, id(s.node))

    def scope_details(s: Scope):
        bindings = {name: [(b.kind, id(b.node), b.qualname, id(b.value)) for b in found]
                    for name, found in s.bindings.items()}
        return (scope(s), scope(s.parent), scope(s.module), list(bindings.items()), sorted(s.global_names),
                sorted(s.nonlocal_names))

    return (
        [(id(node), scope(s)) for node, s in index.nodes],
        sorted((id(node), scope_details(s)) for node, s in index.scope_of_node.items()),
        sorted(index.name_loads.items()),
        {name: [(id(node), scope(s)) for node, s in found] for name, found in index.calls_by_name.items()},
        [(scope(s), base, attr) for s, base, attr in index.attribute_stores],
        sorted((id(node), attr) for node, attr in index.method_called_on.items()),
        [(id(stmt), start, end) for stmt, start, end in index.top_level],
        list(index.module_scope.bindings),  # the names' order too
    )


@settings(max_examples=60, deadline=None)
@given(which=st.integers(0, len(TEXTS) - 1),
       edits=st.lists(st.tuples(st.integers(0, 300), st.integers(0, 3), st.sampled_from(SNIPPETS)),
                      min_size=1, max_size=5))
def test_an_index_built_from_the_last_one_equals_a_fresh_one(which, edits):
    text = TEXTS[which]
    previous = analyze(text, FILES[which].name)
    for at, delete, snippet in edits:
        text = edit(text, at, delete, snippet)
        incremental = analyze(text, FILES[which].name, previous=previous)
        if incremental.facts is None:
            continue  # does not parse: the server keeps building on the last analysis that did
        index = incremental.facts.index
        assert index_signature(index) == index_signature(ModuleIndex(incremental.source.tree, index.wanted))
        assert _dump(incremental.source.tree) == _dump(ast.parse(text))  # line numbers moved where they belong
        previous = incremental


def test_an_unchanged_statement_keeps_its_part_and_scopes():
    text = TEXTS[0]
    first = analyze(text, "f.py")
    edited = "probe = 1\n" + text
    second = analyze(edited, "f.py", previous=first)
    old, new = first.facts.index, second.facts.index
    kept = [stmt for stmt, _, _ in new.top_level if stmt in old._parts]
    assert len(kept) >= len(new.top_level) - 3
    for stmt in kept:
        assert new._parts[stmt] is old._parts[stmt]
        assert new.scope_of_node.get(stmt, new.module_scope).module is new.module_scope
