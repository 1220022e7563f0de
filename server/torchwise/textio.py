"""Reading and writing Python files exactly: declared encodings and line endings kept."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path


def read_python(path: Path) -> tuple[str, str]:
    """(text, encoding). Raises OSError or UnicodeDecodeError with a clear message."""
    data = path.read_bytes()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        raise UnicodeDecodeError("utf-8", data, 0, 1, str(err)) from None
    return data.decode(encoding), encoding


def write_python(path: Path, text: str, encoding: str) -> None:
    # newline="" keeps the file's own line endings (the text already holds them).
    with path.open("w", encoding=encoding, newline="") as handle:
        handle.write(text)
