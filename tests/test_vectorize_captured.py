"""Which nested code can reach a scope's variable (``proof.captured``).

A rewrite that deletes or moves a binding is refused when other code may hold the object; a sibling function's
own local of the same name (``def helper(): out = 0``) is another variable and must not block it, while a function
that reads the module's ``out`` (or declares it ``global``) still must.
"""

from __future__ import annotations

import ast

import pytest

torch = pytest.importorskip("torch")
from torchwise.vectorize import proof  # noqa: E402

from test_vectorize_truth import check, check_refused, loop_findings  # noqa: E402,I001

CAPTURED = {
    "def helper(n):\n    out = 0\n    return out\n": False,
    "def helper(out):\n    return out\n": False,
    "def helper():\n    if (out := 3):\n        pass\n    return out\n": False,
    "def helper():\n    for out in range(3):\n        pass\n": False,
    "def helper():\n    import out\n    return out\n": False,
    "class C:\n    def m(self):\n        out = 1\n        return out\n": False,
    "def f():\n    out = 2\n    def g():\n        return out\n": False,
    # reaching the module's `out`
    "def peek():\n    return out\n": True,
    "x = lambda: out\n": True,
    "def g(default=out):\n    return 1\n": True,
    "def g():\n    global out\n    from m import out\n": True,
    "def g():\n    y = [out for out in range(3)]\n    return out\n": True,
    "class C:\n    def m(self):\n        return out\n": True,
    "class C:\n    y = out\n": True,
    "def f():\n    out = 1\n    def g():\n        global out\n        out = 2\n": True,
    "def f():\n    def g():\n        return out\n": True,
    "def helper():\n    out.append(1)\n": True,
}


@pytest.mark.parametrize("source", list(CAPTURED))
def test_captured_tells_a_sibling_local_from_a_reach_into_the_module(source):
    assert proof.captured(ast.parse(source), "out") is CAPTURED[source]


def test_own_nodes_leave_out_the_bodies_of_top_level_functions():
    tree = ast.parse("def helper():\n    hidden = 1\nshown = 2\n")
    names = {n.id for n in proof.own_nodes(tree) if isinstance(n, ast.Name)}
    assert names == {"shown"}


STACKED = "import torch\nx = torch.randn(5, 3)\nout = []\nfor j in range(5):\n    out.append(x[j] * 2)\n" \
          "out = torch.stack(out)\n"
SIBLING = "def helper(n):\n    out = 0\n    for j in range(n):\n        out += j\n    return out\n"


def test_a_sibling_functions_local_of_the_same_name_does_not_block_the_rewrite():
    code = SIBLING + STACKED
    assert any(f.fixes for f in loop_findings(code)), [f.message for f in loop_findings(code)]
    check("captured-sibling-local", code, must_fix=True)


@pytest.mark.parametrize("helper", [
    "def peek():\n    return len(out)\n",
    "def grow():\n    out.append(torch.zeros(3))\n",
    "def reset():\n    global out\n    out = []\n",
])
def test_a_function_that_reaches_the_modules_list_still_blocks_it(helper):
    code = STACKED.replace("out = []\n", "out = []\n" + helper.replace("\n", "\n") + "print(len(x))\n", 1)
    compile(code, "<near-miss>", "exec")
    check_refused("captured-reaching-function", code)
