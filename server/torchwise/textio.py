"""Reading and writing Python files exactly: declared encodings and line endings kept.

A write never leaves a file half-written and never loses a change made meanwhile: the new
text goes to a temporary file in the same folder, is flushed to disk, and is renamed over the
original (with its mode) only if the original still holds exactly the bytes that were read.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path


class FileChanged(OSError):
    """The file on disk is no longer what was read: writing would lose that change."""


@dataclass(frozen=True)
class ReadFile:
    text: str
    encoding: str
    data: bytes  # the bytes as read: a write goes ahead only while the file still holds them


def read_bytes(path: Path) -> bytes:
    """A regular file's bytes. Non-blocking open, so a FIFO swapped in for the file cannot hang the run."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(0, "not a regular file", str(path))
        return handle.read()


def decode_python(data: bytes) -> tuple[str, str]:
    """(text, encoding) by PEP 263. Raises UnicodeDecodeError with a clear reason."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        raise UnicodeDecodeError("utf-8", data, 0, 1, str(err)) from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as err:  # say where: "invalid start byte" alone sends the user searching the file
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line = data.count(b"\n", 0, err.start) + 1
        column = len(data[line_start:err.start].decode(encoding, errors="replace")) + 1
        raise UnicodeDecodeError(err.encoding, err.object, err.start, err.end,
                                 f"not valid {encoding}: {err.reason} at line {line}, column {column}") from None


def read_file(path: Path) -> ReadFile:
    data = read_bytes(path)
    text, encoding = decode_python(data)
    return ReadFile(text, encoding, data)


def read_python(path: Path) -> tuple[str, str]:
    """(text, encoding). Raises OSError or UnicodeDecodeError with a clear message."""
    read = read_file(path)
    return read.text, read.encoding


def write_python(path: Path, text: str, encoding: str, expected: bytes | None = None) -> None:
    """Replace the file with ``text`` (the text holds its own line endings). ``expected``: the bytes it was read
    with; raises FileChanged when it no longer holds them."""
    replace_file(path, text.encode(encoding), expected)


def replace_file(path: Path, data: bytes, expected: bytes | None) -> None:
    """Write ``data`` atomically at ``path``'s real location, keeping its mode. Raises OSError (FileChanged when the
    file changed since it was read); the original is then untouched."""
    real = Path(os.path.realpath(path))
    before = os.stat(real)
    # A rename needs only the folder's permission: without this, a file the user made read-only would be replaced
    # (and by root, who may write anything, a file without any write bit).
    if not stat.S_IMODE(before.st_mode) & 0o222 or not os.access(real, os.W_OK):
        raise PermissionError(errno.EACCES, "it is read-only", str(path))
    fd, temporary = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".torchwise")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(before.st_mode))
        if hasattr(os, "chown"):
            try:
                os.chown(temporary, before.st_uid, before.st_gid)
            except OSError:
                pass  # only root may give a file away; ours is fine
        if expected is not None and read_bytes(real) != expected:
            raise FileChanged(0, "it changed on disk while it was being fixed; run again", str(path))
        os.replace(temporary, real)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    _sync_folder(real.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); best effort."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
