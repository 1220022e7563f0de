"""A small program checked against itself run for real: the engine's facts on it, its ``run()`` under the
recorder, every fact compared. The recorder tests (``test_facts_items``, ``test_facts_attributes``) share this."""

from __future__ import annotations

import ast
from pathlib import Path

from torchwise.engine import analyze

from .checking import Checker
from .loading import imported
from .recorder import Recorder
from .sites import find_sites

# A module that only calls the one it wraps: the wrapped module's forward gets its facts from a call, as in a
# model whose blocks are wrapped (PreNorm, Residual).
WRAPPER = """\
class Wrapper(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)
"""


def checked(source: str, folder: Path, name: str):
    """(analysis, checker) of ``source`` written to ``folder/name.py`` and its ``run()`` recorded; no fact the
    engine states may be wrong."""
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    analysis = analyze(source, str(path))
    sites = find_sites(analysis.source.tree, analysis.facts.values)
    recorder = Recorder(str(path), sites)
    with imported(path) as module:
        with recorder:
            module.run()
    checker = Checker(path.name)
    checker.check(recorder.frames)
    assert not checker.problems, "\n".join(map(str, checker.sorted_problems))
    return analysis, checker


def stores(tree: ast.AST, name: str) -> list:
    """The places ``name`` is assigned, in source order."""
    return sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
                   and isinstance(n.ctx, ast.Store)), key=lambda n: (n.lineno, n.col_offset))


def first_fact(analysis, name: str):
    """The engine's fact at the first assignment of ``name``."""
    return analysis.facts.values.get(stores(analysis.source.tree, name)[0])
