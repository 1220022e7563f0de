"""A long text parsed a piece at a time (incremental.parse_whole) gives exactly ast.parse's tree, or its very
error, and holds far less memory at its peak than one ast.parse of the whole text."""

from __future__ import annotations

import ast
import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchwise import incremental
from torchwise.source import SourceFile, split_lines

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TORCHWISE_CORPUS", ROOT.parent / "shared" / "corpus"))
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def outcome(parse, text: str):
    """The tree with positions, or the error as a user sees it."""
    try:
        return ast.dump(parse(text), include_attributes=True)
    except (SyntaxError, ValueError) as err:
        return type(err).__name__, str(err), getattr(err, "lineno", None), getattr(err, "offset", None), \
            getattr(err, "end_lineno", None), getattr(err, "end_offset", None)


def pieces(text: str):
    return incremental.parse_whole(text, split_lines(text), "<string>")


def whole(text: str):
    return ast.parse(text, filename="<string>")


@pytest.fixture
def small_pieces(monkeypatch):
    monkeypatch.setattr(incremental, "PIECE_LINES", 2)


# Cuts fall before a line of code at column 0. Each text puts such a line where it is no statement's start
# (inside a string, a bracket, after a backslash or a decorator) or where it continues a statement.
TRICKY = [
    'x = """\nimport os\nimport sys\ny = 1\n"""\nz = 2\nw = 3\nv = 4\n',
    "a = 1\nb = 2\nc = 3\nf(\nd\n, e)\ng = 4\nh = 5\ni = 6\n",
    "a = 1\nb = 2\nc = 3 + \\\nd\ne = 4\nf = 5\ng = 6\n",
    "a = 1\nb = 2\n@dec\n@other\ndef f():\n    pass\nc = 3\nd = 4\ne = 5\n",
    "a = 1\nb = 2\nif a:\n    pass\nelif b:\n    pass\nelse:\n    pass\nc = 3\nd = 4\n",
    "a = 1\nb = 2\ntry:\n    pass\nexcept E:\n    pass\nexcept* F:\n    pass\nfinally:\n    pass\nc = 3\nd = 4\n",
    "a = 1\nb = 2\nfor x in y:\n    pass\nelse:\n    pass\nwhile z:\n    pass\nelse:\n    pass\nc = 3\n",
    "a = 1\r\nb = 2\r\nc = '''\r\nd\r\ne\r\n'''\r\nf = 3\r\ng = 4\r\nh = 5\r\n",
    "a = 1\rb = 2\rc = (\rd\re)\rf = 3\rg = 4\rh = 5\r",
    "a = 1\nb = 2\n\x0cc = 3\nd = 4\ne = 5\nf = 6\n",
    "a = 1\nb = 2\nclass A:\n    x = 1\n\n# comment\n    y = 2\nc = 3\nd = 4\ne = 5\n",
    # a string across more than two cuts: parsed whole
    's = """\na\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"""\nk = 1\nl = 2\nm = 3\n',
    # errors: each must be ast.parse's own
    "a = 1\nb = 2\nc = (\nd = 3\ne = 4\nf = 5\ng = 6\nh = 7\ni = 8\n",
    "a = 1\nb = 2\nc = 3\nd = 4\ne = 5 +\nf = 6\ng = 7\nh = 8\n",
    "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nh = '''\n",
    "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nelse:\n    pass\n",
    "a = 1\nb = 2\nc = 3\nd = 4\n  e = 5\nf = 6\ng = 7\nh = 8\n",
    "a = 1\nb = 2\nc = 3\nd = 4\ne = '\x00'\nf = 6\ng = 7\nh = 8\n",
    "a = 1\nb = 2\nc = 3\nd = 4\n@dec\nf = 6\ng = 7\nh = 8\n",
    "# -*- coding: latin-1 -*-\na = 'é'\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n",
]


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_texts_in_small_pieces_equal_one_parse(small_pieces, text):
    assert outcome(pieces, text) == outcome(whole, text)


def test_the_examples_in_small_pieces_equal_one_parse(small_pieces):
    for path in EXAMPLES:
        text = path.read_text(encoding="utf-8")
        assert outcome(pieces, text) == outcome(whole, text), path.name


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus at {CORPUS}")
def test_the_corpus_in_pieces_equals_one_parse(monkeypatch):
    monkeypatch.setattr(incremental, "PIECE_LINES", 25)  # real files of 50+ lines are cut, often inside strings
    for path in sorted(CORPUS.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert outcome(pieces, text) == outcome(whole, text), path


LINES = ["x = 1\n", "    y = 2\n", "def f():\n", "class A:\n", "if x:\n", "else:\n", "elif y:\n", "try:\n",
         "except E:\n", "finally:\n", "@dec\n", "(\n", ")\n", '"""\n', "'''\n", "z = [\n", "]\n", "a = b \\\n",
         "# c\n", "\n", "    pass\n", "pass\n", "        return x\n", "import torch\n", "s = 'a'\n", "\x0c\n"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=40))
def test_any_lines_in_small_pieces_equal_one_parse(lines):
    text = "".join(lines)
    incremental.PIECE_LINES, saved = 2, incremental.PIECE_LINES
    try:
        assert outcome(pieces, text) == outcome(whole, text)
    finally:
        incremental.PIECE_LINES = saved


def test_opening_a_long_file_peaks_at_little_more_than_its_tree(monkeypatch):
    # ast.parse of one long text holds its C tree beside the Python one: the traced peak was 2.1x what the tree
    # keeps (a 50k-line file: 168 MB against 81 MB), and the server's peak RSS kept it.
    text = "".join(path.read_text(encoding="utf-8") for path in EXAMPLES)
    text = text.replace("from __future__ import annotations\n", "") * 6
    monkeypatch.setattr(incremental, "PIECE_LINES", 500)
    assert len(split_lines(text)) > 6 * incremental.PIECE_LINES
    tracemalloc.start()
    try:
        tree = SourceFile(text).tree
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tree is not None and len(tree.body) > 100
    assert peak < 1.3 * kept
