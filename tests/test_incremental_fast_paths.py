"""The fast paths of a join and of "did this statement's facts change" give what the plain loops they replace give:
names bound to the very same object are skipped at C speed, every other name is compared as before."""

from __future__ import annotations

import ast
import random

from torchwise.analysis.infer import _differing_names, _identical, _same
from torchwise.analysis.values import InstanceValue, ScalarValue, TensorValue
from torchwise.engine import _equal_fact, _some_fact_differs


def _values(rng: random.Random) -> list:
    shared = [TensorValue(shape=(2, 3)), ScalarValue("int", 4), None, ScalarValue("float")]
    return shared + [TensorValue(shape=(rng.randint(1, 3),)) for _ in range(4)]


def test_differing_names_are_the_names_not_bound_to_the_same_object():
    rng = random.Random(7)
    for _ in range(500):
        pool = _values(rng)
        mine = {f"n{i}": rng.choice(pool) for i in range(rng.randint(0, 12))}
        theirs = {k: (v if rng.random() < 0.6 else rng.choice(pool)) for k, v in mine.items() if rng.random() < 0.9}
        theirs.update({f"extra{i}": rng.choice(pool) for i in range(rng.randint(0, 2))})
        expected = [k for k, v in mine.items() if v is not theirs.get(k)]
        assert _differing_names(mine, theirs) == expected


def test_some_fact_differs_agrees_with_comparing_every_node():
    rng = random.Random(11)
    nodes = [object() for _ in range(10)]
    for _ in range(500):
        pool = _values(rng) + [TensorValue(shape=(2, 3))]  # equal to the first, not the same object
        now = {n: rng.choice(pool) for n in nodes if rng.random() < 0.8}
        then = {n: (now.get(n) if rng.random() < 0.7 else rng.choice(pool)) for n in nodes if rng.random() < 0.8}
        expected = any(now.get(n) is not then.get(n) and not _equal_fact(now.get(n), then.get(n)) for n in nodes)
        assert _some_fact_differs(nodes, now, then) == expected


def test_per_statement_agrees_with_the_plain_loop():
    # Memos gathered at C speed: each statement's value is its memo's, worked out again where the edit touched it
    # or where asked to (``again``), and for every statement when ``again`` is all of them.
    from torchwise.analysis.scopes import ModuleIndex

    rng = random.Random(13)
    text = "".join(f"x{i} = {i}\n" if i % 3 else f"def f{i}():\n    return {i}\n" for i in range(30))
    tree = ast.parse(text)
    index = ModuleIndex(tree)
    calls: list = []

    def compute(stmt):
        calls.append(stmt)
        return None if stmt.lineno % 4 == 0 else (stmt.lineno, len(calls))  # (None is a value too)

    for _ in range(50):
        for stmt in tree.body:
            if rng.random() < 0.2:
                index.parts[stmt].memo.pop("k", None)
        everywhere = rng.random() < 0.1
        again = index.parts if everywhere else set(rng.sample(tree.body, rng.randint(0, 3)))
        expected = [stmt for stmt in tree.body if everywhere or stmt in again or "k" not in index.parts[stmt].memo]
        calls.clear()
        found = index.per_statement("k", compute, again)
        assert sorted(map(id, calls)) == sorted(map(id, expected))  # each worked out once, where it must be
        assert found == [index.parts[stmt].memo["k"] for stmt in tree.body]
        assert all(value is None or value[0] == stmt.lineno for stmt, value in zip(tree.body, found))


def _nested(rng: random.Random, pool: list, depth: int = 0):
    """A random structure of tuples, lists, dicts and instances over ``pool``'s objects."""
    kind = rng.randrange(5) if depth < 3 else 0
    if kind == 0:
        return rng.choice(pool)
    items = [_nested(rng, pool, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind == 1:
        return tuple(items)
    if kind == 2:
        return items
    if kind == 3:
        return {f"k{i}": item for i, item in enumerate(items)}
    return InstanceValue("Net", tuple((f"p{i}", item) for i, item in enumerate(items)) or None)


def _rebuilt(rng: random.Random, value, pool: list):
    """``value`` with new containers around the very same objects, now and then one swapped for another."""
    if rng.random() < 0.05:
        return rng.choice(pool)
    if isinstance(value, (tuple, list)):
        return type(value)(_rebuilt(rng, v, pool) for v in value)
    if isinstance(value, dict):
        return {k: _rebuilt(rng, v, pool) for k, v in value.items()}
    if isinstance(value, InstanceValue):
        return InstanceValue(value.class_name, _rebuilt(rng, value.bindings, pool), value.token)
    return value


def test_identical_structures_are_equal_and_shown_alike():
    # 0.0 and -0.0 are equal but shown apart: the identity path must never call them the same.
    rng = random.Random(13)
    decided = 0
    for _ in range(3000):
        pool = _values(rng) + [ScalarValue("float", 0.0), ScalarValue("float", -0.0), 0.0, -0.0, 1, 1.0, True]
        a = _nested(rng, pool)
        b = _rebuilt(rng, a, pool)
        if _identical(a, b):
            decided += 1
            assert a == b and repr(a) == repr(b)
        assert _same(a, b) == (a is b or a == b and repr(a) == repr(b))
    assert decided > 1000


# Statements under grad off (only a `with` turns it off at module level: its body's grad state changes with its
# facts), and blocks.
_GRAD_SNIPPETS = ["with torch.no_grad():\n    y = x + h\n    for i in range(2):\n        z = y * i\n",
                  "g = torch.no_grad()\n", "with g:\n    k = x.sum()\n", "if True:\n    k = x.sum()\n"]


def test_facts_changed_among_statements_is_facts_changed_of_each():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_incremental_analysis import edit
    from test_incremental_module_rules import _MODULE, SNIPPETS

    from torchwise.engine import _UNITS, _facts_changed, _facts_changed_among, analyze

    rng = random.Random(17)
    seen = 0
    for _ in range(40):
        text, previous = _MODULE, analyze(_MODULE, "m.py")
        for _ in range(3):
            text = edit(text, rng.randint(0, 20), rng.randint(0, 1), rng.choice(SNIPPETS + _GRAD_SNIPPETS))
            now = analyze(text, "m.py", previous=previous)
            if now.facts is None or previous.facts is None:
                break
            stmts = [stmt for stmt, _, _ in now.facts.index.top_level if not isinstance(stmt, _UNITS)]
            expected = {stmt for stmt in stmts if _facts_changed(stmt, now.facts, previous.facts)}
            assert _facts_changed_among(stmts, now.facts, previous.facts) == expected
            seen += len(expected) > 0 and len(expected) < len(stmts)
            previous = now
    assert seen > 10
