"""The fast paths of a join and of "did this statement's facts change" give what the plain loops they replace give:
names bound to the very same object are skipped at C speed, every other name is compared as before."""

from __future__ import annotations

import random

from torchwise.analysis.infer import _differing_names
from torchwise.analysis.values import ScalarValue, TensorValue
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
