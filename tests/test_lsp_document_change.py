"""The server's incremental document change (``lsp/protocol.py``, C-speed joins) against pygls's own, over random
texts (every line end LSP knows and those it does not, characters outside the BMP) and random ranges: in and out
of bounds, inverted, at the end of the file. (tests/test_hardening_lsp.py edits a file with odd line ends over the
real server.)"""

from __future__ import annotations

import random

from lsprotocol import types
from pygls.workspace.text_document import TextDocument

from torchwise.lsp import protocol

PIECES = ["x", "torch", " ", "é", "😀", "\n", "\r\n", "\r", "\x0c", "\u2028", "\x85", "# c", "\t", ""]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 40)))


def _position(rng: random.Random, lines: int) -> types.Position:
    return types.Position(line=rng.randrange(0, lines + 3), character=rng.randrange(0, 8))


def _pygls(doc: TextDocument, change) -> str:
    protocol.PYGLS_INCREMENTAL_CHANGE(doc, change)
    return doc.source


def test_incremental_change_is_pygls_s():
    rng = random.Random(29)
    for case in range(4000):
        text = _text(rng)
        ours, theirs = TextDocument("file:///a.py", text), TextDocument("file:///a.py", text)
        for _ in range(rng.randrange(1, 4)):
            lines = len(ours.lines)
            start, end = _position(rng, lines), _position(rng, lines)
            if rng.random() < 0.7 and (start.line, start.character) > (end.line, end.character):
                start, end = end, start  # mostly ordered ranges, some inverted
            change = types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end),
                                                            text=_text(rng)[:rng.randrange(0, 12)])
            ours.apply_change(change)
            assert ours.source == _pygls(theirs, change), (case, text, change)
            assert ours.lines == tuple(protocol.split_lines(ours.source))
