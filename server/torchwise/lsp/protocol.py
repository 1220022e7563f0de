"""JSON-RPC that never goes deaf: every request gets an answer, bad input gets an error, never silence.

pygls reads frames and structures messages in one step, and drops what it cannot structure: a
request with an object id, a frame whose Content-Length is shorter than its body (every later
frame then misses its header), invalid params, requests before ``initialize`` or after
``shutdown``. Here the envelope is checked first, with the answer the spec asks for:

- a body that is not JSON: Parse error (-32700, id null); the reader then finds the next header
  even when it follows leftover bytes on the same line;
- not a request object, an id that is neither a number nor a string, a method that is not a string:
  Invalid Request (-32600, id null);
- a request before ``initialize``: ServerNotInitialized (-32002); after ``shutdown``: Invalid Request;
- params that do not fit the method: Invalid params (-32602);
- a handler that raises: Internal error (-32603) with one line, no traceback (that goes to the log).

``$/cancelRequest`` of a request whose handler runs as a task of its own (``workspace/executeCommand``
runs the command's coroutine apart from the request) cancels that task too, so the benchmark
command's cleanup (killing the worker) runs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import traceback
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace.text_document import TextDocument

from torchwise.source import split_lines

logger = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
SERVER_NOT_INITIALIZED = -32002
MAX_BODY = 256 * 1024 * 1024  # a declared length beyond this is junk, not a message to wait for
_CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n$", re.IGNORECASE)

# LSP lines end at \n, \r\n and \r only; pygls splits with str.splitlines, which also breaks at \f, \x85,
# \u2028..., so an incremental edit below such a character landed on the wrong line.
def _lines(self) -> tuple:
    # Split once per text, not on every access (a 200k-line file's split is ~20 ms); an edit updates the split.
    cached = self.__dict__.get("_torchwise_lines")
    source = self.source
    if cached is None or cached[0] is not source:
        cached = self.__dict__["_torchwise_lines"] = (source, tuple(split_lines(source)))
    return cached[1]


def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
    """pygls's incremental change, exactly (tests/test_lsp_document_change.py compares them), at C speed: pygls
    writes every line of the file through a Python loop and splits the whole text again, ~60 ms an edit of a
    200k-line file. Here only the edited lines, with one unchanged line on each side, are split again: a split
    is local but for a \r that a \n right after would join, and two neighbouring lines of a split never are."""
    lines = self.lines
    where = self._position_codec.range_from_client_units(lines, change.range)
    start, end = where.start.line, where.end.line
    if start == len(lines):
        self._source = self.source + change.text
        return
    if start > end or start > len(lines):
        return  # (pygls's loop writes every line back as it was)
    rest = lines[end][where.end.character:] if end < len(lines) else ""
    lo, hi = max(start - 1, 0), min(end + 2, len(lines)) if end < len(lines) else len(lines)
    edited = "".join((*lines[lo:start], lines[start][:where.start.character], change.text, rest,
                      *lines[end + 1:hi]))
    new = (*lines[:lo], *split_lines(edited), *lines[hi:])
    self._source = "".join(new)
    self.__dict__["_torchwise_lines"] = (self._source, new)


PYGLS_INCREMENTAL_CHANGE = TextDocument._apply_incremental_change  # (the tests compare with it)
TextDocument.lines = property(_lines)  # type: ignore[assignment]
TextDocument._apply_incremental_change = _apply_incremental_change  # type: ignore[method-assign]


def _valid_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


class TorchwiseProtocol(LanguageServerProtocol):
    def __init__(self, server, converter):
        super().__init__(server, converter)
        self._initialize_seen = False
        self._children: dict = {}  # request id -> tasks its handler started (executeCommand's command)

    # -- frames ---------------------------------------------------------------------------------------------
    async def read_frames(self, reader, stop_event) -> None:
        """The message loop: headers, body, message; whatever arrives, it keeps listening."""
        length = None
        while not stop_event.is_set():
            line = await reader.readline()
            if not line:
                return
            found = _CONTENT_LENGTH.search(line)
            if found:  # also after leftover bytes of a frame whose declared length was too short
                length = int(found.group(1))
                continue
            if line.strip() or length is None:
                continue  # another header (Content-Type), or junk between frames
            if length > MAX_BODY:
                self._error(None, INVALID_REQUEST, f"a message of {length} bytes is more than torchwise reads")
                length = None
                continue
            wanted, length = length, None
            body = await reader.readexactly(wanted) if wanted else b""
            if wanted and not body:
                return  # end of input
            try:
                self.receive(body)
            except Exception:  # a bug of ours must not stop the loop
                logger.exception("torchwise: handling a message failed")

    def receive(self, body: bytes) -> None:
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as err:
            self._error(None, PARSE_ERROR, f"Parse error: {err}")
            return
        except RecursionError:  # `[[[[...` 100,000 deep: it went unanswered
            self._error(None, PARSE_ERROR, "Parse error: nested too deeply")
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            self._error(None, INVALID_REQUEST, "Invalid Request: expected a JSON-RPC 2.0 object")
            return
        has_id, method = "id" in data, data.get("method")
        if has_id and not _valid_id(data["id"]) and not (data["id"] is None and method is None):
            self._error(None, INVALID_REQUEST, "Invalid Request: an id is a number or a string")
            return
        if method is not None and not isinstance(method, str):
            self._error(data["id"] if has_id else None, INVALID_REQUEST, "Invalid Request: method must be a string")
            return
        if has_id and method is not None:  # a request
            if not self._initialize_seen and method != types.INITIALIZE:
                self._error(data["id"], SERVER_NOT_INITIALIZED, "The server is not initialized: send initialize first")
                return
            if self._shutdown:
                self._error(data["id"], INVALID_REQUEST, "The server is shutting down: only exit is accepted")
                return
            if method == types.INITIALIZE:
                self._initialize_seen = True
        elif method is not None and not self._initialize_seen and method != types.EXIT:
            return  # notifications before initialize are dropped (the spec)
        try:
            message = self.structure_message(data)
        except JsonRpcException:  # pygls could not structure the params for the method
            if has_id and method is not None:
                self._error(data["id"], INVALID_PARAMS, f"Invalid params for {method}")
            else:
                logger.warning("torchwise: dropped a notification with invalid params: %s", method)
            return
        self.handle_message(message)

    def _error(self, msg_id, code: int, message: str) -> None:
        # A plain dict: the id must be there even when it is null (a parse error, an invalid id).
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    # -- answers: one line, never a traceback ---------------------------------------------------------------
    def _send_response(self, msg_id, result=None, error=None):
        if error is not None and error.data is not None:
            logger.error("torchwise: request %s failed: %s", msg_id, error.data)
            error = types.ResponseError(code=error.code, message=str(error.message).splitlines()[0][:300])
        super()._send_response(msg_id, result, error)

    # -- cancelling a command's own task ---------------------------------------------------------------------
    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        outer = self.msg_id  # the request being handled, when a builtin feature runs a user handler
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        inner = self._request_futures.get(msg_id)
        if outer is not None and outer != msg_id and isinstance(inner, asyncio.Future):
            children = self._children.setdefault(outer, [])
            children.append(inner)
            inner.add_done_callback(lambda _: self._forget_child(outer, inner))

    def _forget_child(self, outer, inner) -> None:
        children = self._children.get(outer)
        if children and inner in children:
            children.remove(inner)
            if not children:
                del self._children[outer]

    def _handle_cancel_notification(self, msg_id):
        for child in list(self._children.get(msg_id, ())):
            child.cancel()
        super()._handle_cancel_notification(msg_id)


def start_io(server: LanguageServer) -> int:
    """Serve LSP over stdio until ``exit`` or end of input; the exit status the spec asks for (0 after
    ``shutdown``, else 1)."""
    import sys
    from threading import Event

    from pygls.io_ import StdinAsyncReader, StdoutWriter

    protocol: TorchwiseProtocol = server.protocol
    server._stop_event = stop = Event()
    reader = StdinAsyncReader(sys.stdin.buffer, server.thread_pool)
    protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(protocol.read_frames(reader, stop))
    except BrokenPipeError:
        logger.error("torchwise: the client is gone")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        try:
            server.shutdown()
        except Exception:  # noqa: BLE001 - exiting anyway
            logger.debug("shutdown: %s", traceback.format_exc())
    return 0 if protocol._shutdown else 1


__all__ = ["TorchwiseProtocol", "start_io"]
