"""Name resolution of the single-pass index: imports, shadowing, global and nonlocal, aliases."""

from __future__ import annotations

import ast

from torchwise.analysis.scopes import ModuleIndex


def index(src: str) -> ModuleIndex:
    return ModuleIndex(ast.parse(src), wanted=(ast.Call, ast.Name))


def scope_of_name(idx: ModuleIndex, name: str, nth: int = 0):
    found = [scope for node, scope in idx.nodes if isinstance(node, ast.Name) and node.id == name]
    return found[nth]


def test_global_rebinding_makes_the_module_name_unknown_everywhere():
    idx = index("import torch\ndef f():\n    global torch\n    torch = 3\ndef g():\n    return torch.zeros(2)\n")
    assert idx.module_scope.import_of("torch") is None
    assert scope_of_name(idx, "torch", -1).qualname(ast.parse("torch.zeros", mode="eval").body) is None


def test_global_in_a_nested_block_and_in_a_class_body():
    idx = index("def f():\n    if True:\n        global a\n    a = 1\nclass C:\n    global b\n    b = 2\n")
    assert {"a", "b"} <= set(idx.module_scope.bindings)


def test_nonlocal_binds_in_the_enclosing_function():
    idx = index("import torch as T\ndef f():\n    x = T.zeros(2)\n    def g():\n        nonlocal x\n        x = 1\n"
                "    return x\n")
    inner = idx.scope_of_node[idx.module_scope.node.body[1].body[1]]
    assert inner.owner_of("x") is idx.scope_of_node[idx.module_scope.node.body[1]]


def test_aliases_skip_shadowed_names():
    idx = index("import torch as T\nimport torch\ndef f():\n    torch = 1\n    return T\n")
    function = idx.scope_of_node[idx.module_scope.node.body[2]]
    assert list(function.aliases_of("torch")) == ["T"]
    assert sorted(idx.module_scope.aliases_of("torch")) == ["T", "torch"]


def test_a_name_bound_by_two_different_imports_is_unknown():
    idx = index("import numpy as t\nimport torch as t\n")
    assert idx.module_scope.import_of("t") is None and list(idx.module_scope.aliases_of("torch")) == []
