"""The benchmark worker, seen from the server: started lazily, kept warm, killed on limit or cancel.

The worker (``worker_main.py``) runs in the user's interpreter, so the server never imports
torch. One worker per session, one request at a time: a second request waits for the first.
``run`` blocks (the CLI); ``run_async`` is the same from asyncio (the language server), and
cancelling the awaiting task (or ``cancel()``) kills the worker and starts a fresh one at once, so
the next request neither waits behind the cancelled code nor pays the torch import again. Every
outcome is a dict with ``ok``; a failure carries ``error`` (a kind) and ``message`` (one clear
sentence), never an exception.

Error kinds: ``interpreter_not_found``, ``no_torch``, ``torch_broken``, ``timeout``, ``cancelled``,
``worker_died``, and those the worker reports (``setup_error``, ``loop_error``,
``vectorized_error``, ``oom``, ``no_device``, ``bad_request``, ``internal``).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Callable, Optional

WORKER = str(Path(__file__).with_name("worker_main.py"))
_EOF = object()
_STDERR_KEEP = 40  # lines of the worker's stderr kept for error messages


class _Token:
    """One request: whether it was cancelled, and whether it holds the worker now."""

    def __init__(self) -> None:
        self.cancelled = False
        self.running = False


class _Worker:
    """One worker process with a reader thread per pipe."""

    def __init__(self, python: str, cwd: Optional[str], env: Optional[dict]):
        kwargs = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True  # its own process group: killing it takes its children too
        else:
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        merged = dict(os.environ if env is None else env)
        merged["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen(
            [python, WORKER, "--parent", str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=cwd, env=merged, **kwargs)
        self.messages: Queue = Queue()
        self.stderr: collections.deque = collections.deque(maxlen=_STDERR_KEEP)
        self.hello: Optional[dict] = None
        self.started = time.monotonic()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        for raw in self.proc.stdout:
            try:
                message = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                self.stderr.append(raw.decode("utf-8", "replace").rstrip())
                continue
            if isinstance(message, dict) and message.get("type") == "hello" and message.get("ok"):
                self.hello = message  # warm from now on, even if nobody is waiting (a worker started ahead)
            self.messages.put(message)
        self.messages.put(_EOF)

    def _read_stderr(self) -> None:
        for raw in self.proc.stderr:
            self.stderr.append(raw.decode("utf-8", "replace").rstrip())

    def send(self, obj: dict) -> None:
        self.proc.stdin.write((json.dumps(obj) + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:
                    self.proc.kill()
            except (ProcessLookupError, PermissionError, OSError):
                try:
                    self.proc.kill()
                except OSError:
                    pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                pipe.close()
            except OSError:
                pass

    def last_error_line(self) -> str:
        for line in reversed(self.stderr):
            if line.strip() and not line.startswith(" "):
                return line.strip()
        return ""


class BenchSession:
    """A warm benchmark worker for one interpreter.

    ``python``: the user's interpreter (its torch, its CUDA); ``time_limit``: seconds one request
    may take, worker start-up (the torch import) included, before the worker is killed.
    """

    def __init__(self, python: Optional[str] = None, time_limit: float = 30.0, cwd: Optional[str] = None,
                 env: Optional[dict] = None, restart_on_cancel: bool = True):
        self._python = python or sys.executable
        self.time_limit = float(time_limit)
        self.cwd = cwd
        self.env = env
        self._worker: Optional[_Worker] = None
        self._lock = threading.Lock()  # one request at a time
        self._state = threading.Lock()  # guards _worker and _current
        self._current: Optional[_Token] = None
        self._ids = itertools.count(1)
        self.starts = 0  # worker processes started (a restart after a kill counts)
        self.restart_on_cancel = restart_on_cancel
        self._closed = False

    # -- configuration
    @property
    def python(self) -> str:
        return self._python

    @python.setter
    def python(self, path: Optional[str]) -> None:
        path = path or sys.executable
        if path != self._python:
            self._python = path
            self._drop_worker()

    @property
    def warm(self) -> bool:
        worker = self._worker
        return worker is not None and worker.alive() and worker.hello is not None

    @property
    def hello(self) -> Optional[dict]:
        """What the warm worker said about its interpreter (torch version, devices), if any."""
        worker = self._worker
        return worker.hello if worker is not None else None

    # -- running
    def run(self, request: dict, on_progress: Optional[Callable[[str], None]] = None,
            time_limit: Optional[float] = None) -> dict:
        """Send one ``bench`` request and wait for its result, at most the time limit."""
        return self._run(request, on_progress, time_limit, _Token())

    async def run_async(self, request: dict, on_progress: Optional[Callable[[str], None]] = None,
                        time_limit: Optional[float] = None) -> dict:
        """``run`` off the event loop; cancelling the awaiting task kills the worker (it restarts on next use).

        ``on_progress`` is called on the event loop's thread.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        token = _Token()

        def progress(stage: str) -> None:
            if on_progress is not None:
                try:
                    loop.call_soon_threadsafe(on_progress, stage)
                except RuntimeError:
                    pass

        def work() -> None:
            try:
                result = self._run(request, progress, time_limit, token)
                outcome = (_set_result, result)
            except BaseException as exc:  # a bug of ours: hand it to the awaiting task
                outcome = (_set_exception, exc)
            try:
                loop.call_soon_threadsafe(outcome[0], future, outcome[1])
            except RuntimeError:  # the event loop is gone (server exiting)
                pass

        threading.Thread(target=work, name="torchwise-bench", daemon=True).start()
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            self._cancel(token)
            raise

    def cancel(self) -> None:
        """Kill the request in progress, if any (from any thread)."""
        with self._state:
            token = self._current
        if token is not None:
            self._cancel(token)

    def shutdown(self) -> None:
        """Stop the worker (politely, then by force)."""
        with self._state:
            self._closed = True  # no restart after a cancel from now on
            worker, self._worker = self._worker, None
        if worker is None:
            return
        if worker.alive():
            try:
                worker.send({"type": "shutdown"})
                worker.proc.wait(timeout=1.0)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        worker.kill()

    def start(self) -> None:
        """Start the worker now (it imports torch) without waiting for it; ``run`` would start it anyway."""
        with self._state:
            self._closed = False
            if self._worker is None or not self._worker.alive():
                try:
                    self._worker = self._spawn()
                except OSError:
                    self._worker = None

    # -- internals
    def _spawn(self) -> _Worker:
        self.starts += 1
        return _Worker(self._python, self.cwd, self.env)

    def _drop_worker(self) -> None:
        with self._state:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.kill()

    def _cancel(self, token: _Token) -> None:
        token.cancelled = True
        with self._state:
            kill = token.running and self._worker is not None
            worker = self._worker if kill else None
            if kill:
                self._worker = None
        if worker is not None:
            worker.kill()  # the waiting thread sees EOF and returns "cancelled"
            if self.restart_on_cancel:
                self._prestart()

    def _prestart(self) -> None:
        """A fresh worker after a kill, importing torch while nobody waits for it."""
        with self._state:
            if self._closed or (self._worker is not None and self._worker.alive()):
                return
            try:
                self._worker = self._spawn()
            except OSError:
                self._worker = None  # the next run says why

    def _run(self, request: dict, on_progress, time_limit: Optional[float], token: _Token) -> dict:
        limit = self.time_limit if time_limit is None else float(time_limit)
        with self._lock:
            if token.cancelled:
                return _failure("cancelled", "Benchmark cancelled.")
            started = time.monotonic()
            deadline = started + limit
            with self._state:
                token.running = True
                self._current = token
                worker = self._worker
                cold = worker is None or not worker.alive() or worker.hello is None
                if worker is None or not worker.alive():
                    self._closed = False  # in use again after a shutdown
                    try:
                        worker = self._worker = self._spawn()
                    except OSError as err:
                        token.running = False
                        self._current = None
                        return _failure("interpreter_not_found",
                                        f"Cannot start the Python interpreter {self._python}: {err.strerror or err}. "
                                        "Set torchwise.interpreter (or --python) to the Python that has your torch.")
            try:
                result = self._exchange(worker, request, on_progress, deadline, limit, token)
            finally:
                with self._state:
                    token.running = False
                    self._current = None
            result.setdefault("cold", cold)
            result["wall_s"] = time.monotonic() - started
            if worker.hello:
                result.setdefault("torch", worker.hello.get("torch"))
                result.setdefault("python", worker.hello.get("python"))
                result["interpreter"] = worker.hello.get("executable") or self._python
            else:
                result["interpreter"] = self._python
            return result

    def _exchange(self, worker: _Worker, request: dict, on_progress, deadline: float, limit: float,
                  token: _Token) -> dict:
        stage = "starting Python and importing torch"
        if worker.hello is None:
            message = self._next(worker, deadline)
            if message is _EOF or message is None or message.get("type") != "hello":
                return self._lost(worker, message, token, limit, stage)
            if not message.get("ok"):
                self._discard(worker)
                return _no_torch(message, self._python)
            worker.hello = message
        request = dict(request, type="bench", id=next(self._ids))
        try:
            worker.send(request)
        except (OSError, ValueError):
            return self._lost(worker, _EOF, token, limit, stage)
        stage = "running"
        while True:
            message = self._next(worker, deadline)
            if message is None or message is _EOF:
                return self._lost(worker, message, token, limit, stage)
            kind = message.get("type")
            if kind == "progress" and message.get("id") == request["id"]:
                stage = message.get("stage") or stage
                if on_progress is not None:
                    try:
                        on_progress(stage)
                    except Exception:
                        pass
            elif kind == "result" and message.get("id") == request["id"]:
                message.pop("type", None)
                message.pop("id", None)
                return message

    def _next(self, worker: _Worker, deadline: float):
        """The worker's next message; None when the deadline passed."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        try:
            return worker.messages.get(timeout=remaining)
        except Empty:
            return None

    def _discard(self, worker: _Worker) -> None:
        with self._state:
            if self._worker is worker:
                self._worker = None
        worker.kill()

    def _lost(self, worker: _Worker, message, token: _Token, limit: float, stage: str) -> dict:
        """No answer: cancelled, over the time limit, or the worker died. Kill it either way."""
        self._discard(worker)
        if token.cancelled:
            return _failure("cancelled", "Benchmark cancelled; its process was stopped.")
        if message is None:
            return _failure("timeout", f"Stopped after {_seconds(limit)} (the time limit) while {stage}: "
                                       "the code did not finish. Raise torchwise.benchmark.timeLimit "
                                       "(--time-limit) or use smaller sizes.", stage=stage)
        code = worker.proc.returncode
        detail = worker.last_error_line()
        how = _exit_description(code)
        message = f"The benchmark process {how} while {stage}" + (f": {detail}" if detail else ".")
        return _failure("worker_died", message,
                        stage=stage, exit_code=code)


def _set_result(future: asyncio.Future, value) -> None:
    if not future.done():
        future.set_result(value)


def _set_exception(future: asyncio.Future, exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


def _failure(kind: str, message: str, **extra) -> dict:
    return {"ok": False, "error": kind, "message": message, **extra}


def _no_torch(hello: dict, python: str) -> dict:
    executable = hello.get("executable") or python
    version = hello.get("python")
    where = f"{executable} (Python {version})" if version else executable
    if hello.get("error") == "no_torch":
        return _failure("no_torch", f"torch is not installed in {where}: the benchmark runs in your interpreter, "
                                    "with its torch. Install torch there, or point torchwise.interpreter (--python) "
                                    "at the Python that has it.", interpreter=executable)
    return _failure("torch_broken", f"torch does not import in {where}: {hello.get('message')}",
                    interpreter=executable)


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _exit_description(code) -> str:
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except (ValueError, AttributeError):
            name = f"signal {-code}"
        return f"was killed ({name})"
    return f"exited with code {code}"
