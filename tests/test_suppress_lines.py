"""``find_suppressions`` reads only lines with a `#` that either comment pattern matches (found at C speed); it
answers as reading every line did, over random lines of comments, codes, case and spacing."""

from __future__ import annotations

import random

from torchwise import suppress

PIECES = ["#", "# ", "noqa", "NoQA", "noq", ": ", ":", "TW101", "tw2", "E501", ",", " ", "torchwise:", "torchwise",
          "ignore", "IGNORE", "-file", "[TW1]", "[", "]", "x = 1", "\t", "\u017f", "K", "\n"]


def _every_line(lines):  # the loop before: every line read
    whole_file, by_line = False, {}
    for number, line in enumerate(lines):
        if "#" not in line:
            continue
        codes = set()
        for match in suppress._IGNORE.finditer(line):
            if match.group("file"):
                whole_file = True
            else:
                codes |= suppress._codes(match.group("codes"))
        for match in suppress._NOQA.finditer(line):
            codes |= suppress._codes(match.group("codes"))
        if codes:
            by_line[number] = frozenset(codes)
    return suppress.Suppressions(whole_file, by_line)


def test_suppressions_as_when_every_line_was_read():
    rng = random.Random(30)
    found = 0
    for _ in range(3000):
        lines = ["".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 9))) for _ in range(rng.randrange(0, 8))]
        ours = suppress.find_suppressions(lines)
        assert ours == _every_line(lines), lines
        found += bool(ours.by_line) or ours.whole_file
    assert found > 150  # the cases do suppress
