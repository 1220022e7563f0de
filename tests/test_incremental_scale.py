"""Scale (issue 13): what an incremental analysis keeps from the last one equals what it would build afresh.

The module index is put together from one part per top-level statement, and the parts of the statements the
incremental parse reused are the last index's. Random edits (hypothesis) to real files: after each, the index
built from the previous one must equal an index built from scratch on the same tree, scope for scope.

Rules with a reach (``Rule.reach``) are asked again about a reused def or class only where what they read beyond
it changed: after random edits made to move exactly that, the findings and facts must be a fresh analysis's.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchwise.analysis.scopes import ModuleIndex, Scope
from torchwise.engine import analyze

sys.path.insert(0, str(Path(__file__).parent))
from test_incremental_analysis import edit, observed  # noqa: E402  (one edit maker and comparison for both)

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
        sorted(index.callee_names.items(), key=repr),
        sorted(index.name_stores.items()),
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
    kept = [stmt for stmt, _, _ in new.top_level if stmt in old.parts]
    assert len(kept) >= len(new.top_level) - 3
    for stmt in kept:
        assert new.parts[stmt] is old.parts[stmt]
        assert new.scope_of_node.get(stmt, new.module_scope).module is new.module_scope


# -- rules with a reach: asked again about a reused unit only where what they read changed ------------------------
sys.path.insert(0, str(ROOT / "benchmarks"))
from gen_code import from_corpus  # noqa: E402  (the scale benchmark's file: real files one after another)

# Several files in one module: defs and classes that name each other, module-level scripts between them.
JOINED = from_corpus(900, [ROOT / "tests" / "corpus"])
REACH_TEXTS = TEXTS + [JOINED]
REACH_NAMES = [p.name for p in FILES] + ["joined.py"]

# Edits that move what those rules read beyond a unit: whether the file trains, clears gradients, seeds, draws,
# checks for CUDA, imports torch; what a module-level name is bound to (a loss, a model, a tensor, a size, a
# view); a def's code and summary; a class's module-ness; and the findings themselves.
REACH_SNIPPETS = [
    "loss.backward()\n",
    "optimizer.step()\n",
    "optimizer.zero_grad()\n",
    "criterion = nn.CrossEntropyLoss()\n",
    "loss = criterion(torch.softmax(out, 1), y)\n",
    "model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.1))\n",
    "with torch.no_grad():\n    pred = model(x)\n",
    "torch.manual_seed(0)\n",
    "np.random.seed(0)\n",
    "v = np.random.rand(3)\n",
    "if torch.cuda.is_available():\n    pass\n",
    "device = 'cuda'\n",
    "t = torch.Tensor(n, 3)\n",
    "n = 4\n",
    "n = len(x)\n",
    "range(n)\n",
    "x = torch.randn(8, 3)\n",
    "x = [1, 2]\n",
    "for i in range(len(x)):\n    print(x[i].item())\n",
    "w = torch.zeros(3).cuda()\n",
    "import numpy as np\n",
    "a = torch.randn(2, 3)\n",
    "b = a.view(6)\n",
    "b.add_(1)\n",
    "print(a)\n",
    "global x\n",
    "def helper(t):\n    t.grad = None\n    return t\n",
    "out = helper(x)\n",
    "class Net(nn.Module):\n    def forward(self, x):\n        return x\n",
    "class Net:\n    pass\n",
    "m = Net().cuda()\n",
    "pass\n",
    "",
]


@settings(max_examples=70, deadline=None)
@given(which=st.integers(0, len(REACH_TEXTS) - 1),
       edits=st.lists(st.tuples(st.integers(0, 900), st.integers(0, 2), st.sampled_from(REACH_SNIPPETS)),
                      min_size=1, max_size=4))
def test_rules_with_a_reach_find_what_a_fresh_analysis_finds(which, edits):
    text, name = REACH_TEXTS[which], REACH_NAMES[which]
    previous = analyze(text, name)
    for at, delete, snippet in edits:
        text = edit(text, at % (text.count("\n") + 1), delete, snippet)
        incremental = analyze(text, name, previous=previous)
        assert observed(incremental) == observed(analyze(text, name))
        if incremental.parse_error is None:
            previous = incremental


# Each: a unit left as it was (``f``, ``fit``, ``evaluate``) whose finding appears or goes away because of an edit
# elsewhere, where the unit's own facts stay the same: only the rules' reach says to ask them again.
_TRAIN = ("    for x in batches:\n        loss = model(x).sum()\n        loss.backward()\n        opt.step()\n")
REACH_CASES = {
    # TW704: a loop calling a function of the file that clears the gradients, until it no longer does (decorated:
    # the call is not analysed through its code, so the loop's facts stay the same).
    "clearing-function": (
        "import torch\n\n\n@hook\ndef reset(m):\n    m.zero_grad()\n\n\ndef fit(model, opt, batches):\n" + _TRAIN
        + "        reset(model)\n",
        "import torch\n\n\n@hook\ndef reset(m):\n    pass\n\n\ndef fit(model, opt, batches):\n" + _TRAIN
        + "        reset(model)\n"),
    # TW203: a module-level name becomes a tensor by what it is bound to (`.cpu()`), unknown to the facts.
    "tensor-by-binding": (
        "import torch\ndata = load().numpy()\n\n\ndef f():\n    out = []\n    for v in data:\n"
        "        out.append(v.item())\n    return out\n",
        "import torch\ndata = load().cpu()\n\n\ndef f():\n    out = []\n    for v in data:\n"
        "        out.append(v.item())\n    return out\n"),
    # TW101: a module-level name passed as a size elsewhere in module code is an int everywhere.
    "size-by-use": (
        "import torch\nn = cfg()\n\n\ndef f():\n    return torch.Tensor(n)\n",
        "import torch\nn = cfg()\nrange(n)\n\n\ndef f():\n    return torch.Tensor(n)\n"),
    # TW701: the loss a module-level name is bound to.
    "loss-by-binding": (
        "import torch\nimport torch.nn as nn\ncriterion = nn.CrossEntropyLoss(**kw)\n\n\ndef f(out, y):\n"
        "    return criterion(torch.softmax(out, 1), y)\n",
        "import torch\nimport torch.nn as nn\ncriterion = nn.MSELoss(**kw)\n\n\ndef f(out, y):\n"
        "    return criterion(torch.softmax(out, 1), y)\n"),
    # TW703: the class a module-level model is built from gains a dropout layer.
    "model-class-code": (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n\nmodel = Net()\n\n\n"
        "def evaluate(opt, batches):\n" + _TRAIN + "        opt.zero_grad()\n    with torch.no_grad():\n"
        "        return model(batches[0])\n",
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Dropout(0.5)\n\n\nmodel = Net()\n\n\n"
        "def evaluate(opt, batches):\n" + _TRAIN + "        opt.zero_grad()\n    with torch.no_grad():\n"
        "        return model(batches[0])\n"),
    # TW201: `.cuda()` of an instance, once its class is an nn.Module.
    "module-class": (
        "import torch\nfrom torch import nn\n\n\nclass Net:\n    pass\n\n\ndef f():\n    m = Net()\n    m.cuda()\n",
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    pass\n\n\ndef f():\n    m = Net()\n"
        "    m.cuda()\n"),
    # TW304: the base of a module-level view, read by module-level code after the write.
    "view-base-read-after": (
        "import torch\na = torch.randn(2, 3)\nb = a.view(6)\n\n\ndef f():\n    b.add_(1)\n",
        "import torch\na = torch.randn(2, 3)\nb = a.view(6)\n\n\ndef f():\n    b.add_(1)\n\n\nprint(a)\n"),
    # TW601: the file starts drawing from numpy's generator.
    "numpy-draw": (
        "import torch\nimport numpy as np\n\n\ndef f():\n    torch.manual_seed(0)\n",
        "import torch\nimport numpy as np\nv = np.random.rand(3)\n\n\ndef f():\n    torch.manual_seed(0)\n"),
    # TW203 on a module-level loop kept as it was: what the function it walks returns changes.
    "module-loop-walks-a-function": (
        "import torch\n\n\ndef make():\n    return torch.randn(5)\n\n\nout = []\nfor v in make():\n"
        "    out.append(v.item())\n",
        "import torch\n\n\ndef make():\n    return [1.0, 2.0]\n\n\nout = []\nfor v in make():\n"
        "    out.append(v.item())\n"),
    # ...and what a module-level name it walks is bound to, by a function.
    "module-loop-walks-a-name": (
        "import torch\n\n\ndef make():\n    return torch.randn(5)\n\n\ndata = make()\nout = []\nfor v in data:\n"
        "    out.append(v.item())\n",
        "import torch\n\n\ndef make():\n    return [1.0, 2.0]\n\n\ndata = make()\nout = []\nfor v in data:\n"
        "    out.append(v.item())\n"),
    # TW703 on a module-level evaluation kept as it was (its names untouched): the module-level loop before it
    # starts stepping the optimizer.
    "module-code-around": (
        "import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5))\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\ndef later(o):\n    o.step()\n\n\n"
        "for batch in range(3):\n    opt.zero_grad()\n    model(torch.randn(2, 4)).sum().backward()\n\n"
        "with torch.no_grad():\n    pred = model(torch.randn(2, 4))\n",
        "import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5))\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\ndef later(o):\n    o.step()\n\n\n"
        "for batch in range(3):\n    opt.zero_grad()\n    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\n\n"
        "with torch.no_grad():\n    pred = model(torch.randn(2, 4))\n"),
    # TW704 on a module-level loop kept as it was: module-level code elsewhere clears the gradients.
    "module-code-clears": (
        "import torch\nmodel = torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for step in range(3):\n    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\n",
        "import torch\nmodel = torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for step in range(3):\n    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\nopt.zero_grad()\n"),
    # TW205: the file starts checking for CUDA.
    "cuda-check": (
        "import torch\n\n\ndef f(x):\n    return x.to('cuda')\n",
        "import torch\nif torch.cuda.is_available():\n    pass\n\n\ndef f(x):\n    return x.to('cuda')\n"),
}


@pytest.mark.parametrize("name", sorted(REACH_CASES))
def test_an_edit_elsewhere_reaches_a_unit(name):
    first, edited = REACH_CASES[name]
    for before, after in ((first, edited), (edited, first)):
        fresh = analyze(after, "f.py")
        assert observed(analyze(after, "f.py", previous=analyze(before, "f.py"))) == observed(fresh)
