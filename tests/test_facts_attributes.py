"""What a method reads from ``self``, checked against the code run for real: attributes ``__init__`` sets are
facts in every method only as long as nothing else can change them.

- an attribute stored from outside the class (``m = M(); m.scale = 2.5``, ``self.attn.scale = s``, ``for m in
  model.modules(): m.eps = ...``) is not what ``__init__`` set (a name bound only to what a call of an imported
  name makes, ``C = CN()``, is no instance of the file's classes: its stores do not count);
- a list (or dict) attribute is a list of items not known: ``policy.rewards.append(r)`` outside the class, or
  ``del self.rewards[:]`` in another method, changes it after ``__init__``.

Each program runs under ``realmodels.recorder``; ``realmodels.checking`` compares every fact the engine states at
every name that ran. None may be wrong.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).parent))
from realmodels.checked import checked, first_fact  # noqa: E402

from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue  # noqa: E402

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="the recorder needs co_positions (Python 3.11+)")

STORED_OUTSIDE = """\
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2
        self.shift = 1

    def forward(self, x):
        y = x * self.scale
        z = x + self.shift
        return y, z


def run():
    m = Scaled()
    m.scale = 2.5
    m(torch.ones(2, dtype=torch.int64))
    m(torch.ones(3, dtype=torch.int64))
"""

LIST_ATTRIBUTE = """\
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.rewards = []
        self.table = {}
        self.pair = ([], 3)

    def forward(self, x):
        return x

    def finish(self):
        n = len(self.rewards)
        returns = torch.tensor(self.rewards)
        size = len(self.table)
        first, k = self.pair
        count = len(first)
        del self.rewards[:]
        return n, returns, size, count, k


def run():
    policy = Policy()
    for r in (1.0, 2.0, 0.5):
        policy.rewards.append(r)
    policy.table["a"] = 1
    policy.pair[0].append(7)
    policy.finish()
    policy.rewards.append(3.0)
    policy.finish()
"""


def test_an_attribute_stored_from_outside_is_not_what_init_set(tmp_path):
    analysis, checker = checked(STORED_OUTSIDE, tmp_path, "stored_outside")
    y, z = first_fact(analysis, "y"), first_fact(analysis, "z")
    assert not (isinstance(y, TensorValue) and y.dtype is not None)  # int64 * 2.5 is float32
    assert isinstance(z, TensorValue) and z.shape is not None  # `shift` is stored by __init__ alone
    assert checker.counts["observations"] >= 8


def test_a_list_attribute_has_items_not_known_in_other_methods(tmp_path):
    analysis, checker = checked(LIST_ATTRIBUTE, tmp_path, "list_attribute")
    n, returns, k = first_fact(analysis, "n"), first_fact(analysis, "returns"), first_fact(analysis, "k")
    assert not (isinstance(n, ScalarValue) and isinstance(n.value, int))  # 3 then 1 at runtime, not 0
    assert not (isinstance(returns, TensorValue) and returns.shape is not None and returns.shape[0] == 0)
    assert isinstance(k, ScalarValue) and k.value == 3  # a tuple's items stay (its list's items do not)
    assert isinstance(first_fact(analysis, "first"), SeqValue)
    assert checker.counts["observations"] >= 10


# Plain Python classes (no base but object, no metaclass, no decorator, nothing that changes how instances are made,
# called or read): instances are modelled as a module's are, without forward. `Agent().act(state)` runs `act`
# with the call's facts, and the method's own analysis takes its parameters from the calls the file shows.
PLAIN_CLASS = """\
import torch


class Agent:
    def __init__(self, gamma=0.99, width=2):
        self.gamma = gamma
        self.width = width
        self.eps = 1e-6
        self.memory = []

    def act(self, state):
        scores = state @ torch.ones(state.shape[-1], self.width)
        probs = scores.softmax(dim=-1)
        return probs

    def discount(self, rewards):
        R = 0
        returns = []
        for r in rewards[::-1]:
            R = r + self.gamma * R
            returns.insert(0, R)
        n = len(self.memory)
        scaled = torch.tensor(returns) * self.gamma
        return scaled, n


class Lazy:
    def __init__(self):
        self.width = 2

    def __getattr__(self, name):
        return 3

    def act(self, state):
        out = state @ torch.ones(state.shape[-1], self.width)
        return out


class Odd(object):
    def __init__(self):
        self.size = 2

    def act(self, state):
        got = state @ torch.ones(state.shape[-1], self.size)
        return got


def run():
    agent = Agent()
    for _ in range(2):
        probs = agent.act(torch.randn(5, 4))
        agent.memory.append(probs)
        agent.discount([1.0, 0.0, 2.0])
    agent.gamma = 0.5
    agent.discount([1.0, 2.0])
    Lazy().act(torch.randn(3, 4))
    odd = Odd()
    odd.size = 5
    odd.act(torch.randn(2, 4))
"""


def test_a_plain_class_is_modelled_like_a_module(tmp_path):
    analysis, checker = checked(PLAIN_CLASS, tmp_path, "plain_class")
    scores, probs = first_fact(analysis, "scores"), first_fact(analysis, "probs")
    # the call's facts; `self.width` the class's own symbol (Agent() is built in a function: self is any instance)
    assert isinstance(scores, TensorValue) and scores.shape is not None and scores.shape[0] == 5 \
        and len(scores.shape) == 2
    assert isinstance(probs, TensorValue) and probs.shape == scores.shape
    n = first_fact(analysis, "n")
    assert not (isinstance(n, ScalarValue) and isinstance(n.value, int))  # memory grows outside the class
    out = first_fact(analysis, "out")  # a class with __getattr__ is not modelled
    assert not (isinstance(out, TensorValue) and out.shape is not None)
    got = first_fact(analysis, "got")  # `odd.size = 5` from outside: not what __init__ set
    assert not (isinstance(got, TensorValue) and got.shape is not None and got.shape[1] == 2)
    assert checker.counts["observations"] >= 20
