"""torchwise benchmark worker: times a loop against its vectorized rewrite, in the user's Python.

Run as ``<the user's python> /abs/path/worker_main.py [--parent PID]``. Standalone on purpose:
standard library, torch, and numpy if present. It never imports torchwise, which the user's
environment need not have.

Protocol: JSON, one object per line. stdout and stdin are kept for the protocol only (file
descriptors 1 and 0 are re-pointed at stderr and /dev/null, so a ``print`` in user code, or C code
writing to fd 1, cannot corrupt it).

* On start: ``{"type": "hello", "ok": true, "torch": ..., "devices": [...], "cuda": bool,
  "mps": bool, ...}``, or ``{"type": "hello", "ok": false, "error": "no_torch", "message": ...}``
  followed by exit.
* Request ``{"type": "bench", "id", "setup", "loop", "vectorized", "outputs": [names],
  "device": "auto|cpu|cuda|mps", "budget_s", "scale": {"var", "full", "label"} | null,
  "no_grad": bool, "threads": int | null, "rtol"/"atol": optional}`` -> ``{"type": "progress", "id",
  "stage"}`` lines, then ``{"type": "result", "id", "ok": true, "loop_s", "loop_iqr_s", "loop_runs",
  "vectorized_s", "vectorized_iqr_s", "vectorized_runs", "speedup", "device", "device_name", "match",
  "max_diff", "message", "n", "n_full", "scaled", "torch", "python", "threads", "phases", ...}`` (medians
  and IQRs in seconds), or ``{"type": "result", "id", "ok": false, "error": kind, "message"}``.
* ``{"type": "ping"}`` -> ``{"type": "pong"}``; ``{"type": "shutdown"}`` (or EOF) -> exit.

How a run goes: ``setup`` runs once in a fresh namespace (factories default to the chosen device;
every tensor it leaves is moved there). The loop and the rewrite each run in their own deep copy
of that namespace, as the body of a function whose locals are preloaded from it, so in-place code
cannot leak from one to the other and both get fast locals as in real code. Their ``outputs`` are
compared with ``torch.testing.assert_close``. Both are timed with
``torch.utils.benchmark.Timer.blocked_autorange``. When ``scale`` names the setup variable that
holds the loop's trip count, a small probe estimates the loop's full time first, and a loop that
would not fit the budget is measured at a smaller count (both versions), reported as
``"N=1000 of 10000"``; both are then also timed at two smaller counts (N/16 and N/4: ``"scaling"``), since
small inputs may not gain from vectorizing.

Memory (``"memory"``): the peak of one run of each, beyond what was allocated before it. On CUDA, the caching
allocator's own statistics (``reset_peak_memory_stats``, ``max_memory_allocated``: tensor memory, whatever the
allocator keeps cached). On CPU (Linux), the process's resident-set high-water mark: freed heap memory is
handed back first (``malloc_trim``), the mark reset (``/proc/self/clear_refs``), and ``VmHWM`` minus ``VmRSS``
before the run is the peak it added, Python objects included. Elsewhere (MPS, other systems) it is not
measured (``None``).
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# The script's folder is sys.path[0]: drop it, so that nothing torch imports can pick up a
# module of ours by name.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import ast  # noqa: E402
import builtins  # noqa: E402
import copy  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402

torch = None  # imported in main(), after the protocol channels are set up

_MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                               "update", "add", "discard", "setdefault", "popitem"})
_PROBE_MAX = 100  # iterations of the probe run that estimates a scalable loop's full time
_RUN_SHARE = 0.3  # of the budget, the most one run of the loop should take; longer loops are scaled down
_SLACK = 1.5  # ...unless the estimate is within this factor (estimates are rough: do not scale on noise)


_SCALING_DIVISORS = (16, 4)  # the smaller counts timed besides N (N/16, N/4)
_SCALING_SHARE = 0.08  # of the budget, the measuring time of each version at each smaller count


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


class PeakMemory:
    """The peak memory one run adds (see the module's docstring); ``bytes`` is None where it cannot be measured."""

    def __init__(self, device):
        self.device = device
        self.bytes = None
        self.base = None
        self.method = None

    def __enter__(self):
        try:
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
                torch.cuda.reset_peak_memory_stats(self.device)
                self.base = torch.cuda.memory_allocated(self.device)
                self.method = "cuda"
            elif self.device.type == "cpu" and sys.platform.startswith("linux"):
                gc.collect()
                _malloc_trim()
                with open("/proc/self/clear_refs", "w") as f:
                    f.write("5")  # resets VmHWM to the current VmRSS
                self.base = _status_kb("VmRSS")
                self.method = "rss" if self.base is not None else None
        except Exception:  # not measurable here: the timing goes on
            self.method = None
        return self

    def __exit__(self, *exc):
        try:
            if self.method == "cuda":
                torch.cuda.synchronize(self.device)
                self.bytes = max(0, int(torch.cuda.max_memory_allocated(self.device)) - self.base)
            elif self.method == "rss":
                peak = _status_kb("VmHWM")
                self.bytes = max(0, peak - self.base) * 1024 if peak is not None else None
        except Exception:
            self.bytes = None
        return False


_LIBC = []


def _malloc_trim():
    if not _LIBC:
        try:
            import ctypes
            import ctypes.util
            _LIBC.append(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"))
        except Exception:
            _LIBC.append(None)
    if _LIBC[0] is not None and hasattr(_LIBC[0], "malloc_trim"):
        _LIBC[0].malloc_trim(0)


class BenchError(Exception):
    """A failure to report as one clear message (never a crash of the worker)."""

    def __init__(self, kind, message, **extra):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.extra = extra


# -- protocol ------------------------------------------------------------------------------------
class Channel:
    def __init__(self):
        # Keep private copies of fd 0 and 1 for the protocol, then point fd 1 at stderr and fd 0
        # at /dev/null: whatever user code prints goes to stderr and cannot read our requests.
        self.out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
        self.inp = os.fdopen(os.dup(0), "r", encoding="utf-8")
        try:
            sys.stdout.flush()
        except Exception:
            pass
        os.dup2(2, 1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdout = sys.stderr
        sys.stdin = open(os.devnull)
        self._lock = threading.Lock()

    def send(self, obj):
        line = json.dumps(_jsonable(obj))
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def requests(self):
        for line in self.inp:
            line = line.strip()
            if line:
                yield line


def _jsonable(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def _watch_parent(parent_pid):
    """Exit when the process that started us is gone (its pipes may not tell us while user code runs)."""
    def watch():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


# -- environment ---------------------------------------------------------------------------------
def _cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def _mps_available():
    backend = getattr(getattr(torch, "backends", None), "mps", None)
    try:
        return bool(backend is not None and backend.is_available())
    except Exception:
        return False


def hello(import_s):
    cuda = bool(torch.cuda.is_available())
    mps = _mps_available()
    devices = ["cpu"]
    names = {"cpu": _cpu_name()}
    if cuda:
        for i in range(torch.cuda.device_count()):
            devices.append("cuda:%d" % i)
            names["cuda:%d" % i] = torch.cuda.get_device_name(i)
    if mps:
        devices.append("mps")
        names["mps"] = "Apple MPS"
    try:
        import numpy
        numpy_version = numpy.__version__
    except Exception:
        numpy_version = None
    return {"type": "hello", "ok": True, "torch": torch.__version__, "python": platform.python_version(),
            "executable": sys.executable, "cuda": cuda, "mps": mps, "devices": devices, "device_names": names,
            "threads": torch.get_num_threads(), "numpy": numpy_version, "import_s": import_s, "pid": os.getpid()}


def pick_device(wanted):
    wanted = (wanted or "auto").lower()
    if wanted == "auto":
        if torch.cuda.is_available():
            wanted = "cuda"
        elif _mps_available():
            wanted = "mps"
        else:
            wanted = "cpu"
    if wanted.startswith("cuda"):
        if not torch.cuda.is_available():
            raise BenchError("no_device", "CUDA is not available to torch %s in %s"
                             % (torch.__version__, sys.executable))
        device = torch.device(wanted) if ":" in wanted else torch.device("cuda", torch.cuda.current_device())
        return device, "cuda:%d" % device.index, torch.cuda.get_device_name(device)
    if wanted == "mps":
        if not _mps_available():
            raise BenchError("no_device", "MPS is not available to torch %s in %s"
                             % (torch.__version__, sys.executable))
        return torch.device("mps"), "mps", "Apple MPS"
    if wanted == "cpu":
        return torch.device("cpu"), "cpu", _cpu_name()
    raise BenchError("bad_request", "unknown device %r (use auto, cpu, cuda or mps)" % wanted)


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


# -- running code --------------------------------------------------------------------------------
def _where(exc, label, first_line):
    """The 1-based line of ``label``'s code where ``exc`` was raised, if it was raised there."""
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == "<%s>" % label:
            line = lineno - first_line + 1
    return line


def _split_lines(code, keepends=False):
    """Lines as Python numbers them: only \\n, \\r\\n and \\r end a line (``str.splitlines`` would also split a
    string literal at a form feed or \\u2028)."""
    lines = re.findall(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z", code)
    return lines if keepends else [line.rstrip("\r\n") for line in lines]


def _describe(exc):
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    if len(first) > 300:
        first = first[:297] + "..."
    return "%s: %s" % (type(exc).__name__, first) if first else type(exc).__name__


def _is_oom(exc):
    oom = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or isinstance(exc, MemoryError) or \
        "out of memory" in str(exc).lower()


def _user_error(exc, label, first_line, what):
    line = _where(exc, label, first_line)
    where = " (line %d of the %s)" % (line, what) if line else ""
    if _is_oom(exc):
        return BenchError("oom", "Out of memory in the %s%s: %s. Try a smaller size." % (what, where, _describe(exc)),
                          stage=label, line=line)
    return BenchError("%s_error" % label, "The %s raised %s%s" % (what, _describe(exc), where), stage=label, line=line)


def _names(tree):
    loads, mutated = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            loads.add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.value, ast.Name):
                mutated.add(node.value.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.attr in _MUTATING_METHODS:
            mutated.add(node.func.value.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript) \
                and isinstance(node.target.value, ast.Name):
            mutated.add(node.target.value.id)
    return loads, mutated


def _copy_container(value):
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, set):
        return set(value)
    return value


class Compiled:
    """User code as the body of ``_tw_fn(ns)``: locals preloaded from ``ns``, outputs returned."""

    def __init__(self, code, label, outputs, ns, device=None):
        self.label = label
        try:
            tree = ast.parse(code, "<%s>" % label)
        except SyntaxError as exc:
            raise BenchError("bad_request", "the %s code does not parse: %s (line %s)" % (label, exc.msg, exc.lineno))
        if device is not None and device.type != "cpu":
            code = place_factories(code, tree, {k for k, v in ns.items() if v is torch and torch is not None})
        loads, mutated = _names(tree)
        lines = ["def _tw_fn(_tw_ns):"]
        for name in sorted(loads):
            if name in ns and not name.startswith("_tw_"):
                value = ns[name]
                if name in mutated and isinstance(value, (list, dict, set)):
                    lines.append("    %s = _tw_copy(_tw_ns[%r])" % (name, name))
                else:
                    lines.append("    %s = _tw_ns[%r]" % (name, name))
        self.first_line = len(lines) + 1
        lines += ["    " + line for line in _split_lines(code)]
        lines += ["    pass", "    _tw_locals = locals()",
                  "    return {k: _tw_locals[k] for k in %r if k in _tw_locals}" % (list(outputs),)]
        scope = dict(ns)
        scope["_tw_copy"] = _copy_container
        scope["_tw_device"] = device
        try:
            exec(compile("\n".join(lines) + "\n", "<%s>" % label, "exec"), scope)
        except SyntaxError as exc:  # e.g. `return` outside the function it came from is fine; others are not
            raise BenchError("bad_request", "the %s code does not compile: %s" % (label, exc.msg))
        self.fn = scope["_tw_fn"]

    def what(self):
        return "loop" if self.label == "loop" else "vectorized rewrite"

    def call(self, ns, device):
        try:
            out = self.fn(ns)
            synchronize(device)
            return out
        except BenchError:
            raise
        except BaseException as exc:  # SystemExit and friends from user code too
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise _user_error(exc, self.label, self.first_line, self.what())


_FACTORIES = frozenset({"empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "arange",
                        "linspace", "logspace", "eye", "tensor", "as_tensor", "scalar_tensor"})


def place_factories(code, tree, torch_names):
    """``code`` with ``device=_tw_device`` added to the torch factory calls that name no device.

    The setup's tensors are on the benchmark's device; a loop's preallocated ``out = torch.empty(N)``
    must be there too, as it is in GPU code, or the loop copies across devices on every write and the
    two versions' results sit on different devices. (``with device:``, as the setup uses, would also
    do, but its dispatch overhead on every op would slow the loop more than the rewrite.)
    """
    lines = _split_lines(code, keepends=True)
    inserts = []
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        if isinstance(node, ast.Call) and isinstance(func, ast.Attribute) and func.attr in _FACTORIES \
                and isinstance(func.value, ast.Name) and func.value.id in torch_names \
                and not any(k.arg in ("device", None) for k in node.keywords):
            row = node.end_lineno - 1
            col = len(lines[row].encode("utf-8")[:node.end_col_offset - 1].decode("utf-8", "replace"))
            before = ("".join(lines[:row]) + lines[row][:col]).rstrip()  # the code up to the closing paren
            inserts.append((row, col, "device=_tw_device" if before.endswith("(") else
                            " device=_tw_device" if before.endswith(",") else ", device=_tw_device"))
    for row, col, text in sorted(inserts, reverse=True):
        lines[row] = lines[row][:col] + text + lines[row][col:]
    placed = "".join(lines)
    try:
        ast.parse(placed)
    except SyntaxError:  # a comma before a comment before the paren, say: run the code as written
        return code
    return placed


def _data_items(ns):
    skip = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    return {k: v for k, v in ns.items()
            if not k.startswith("__") and not isinstance(v, skip) and not isinstance(v, (torch.device, torch.dtype))}


def _safe_copy(value, memo):
    key = id(value)
    if key in memo:
        return memo[key]
    if isinstance(value, torch.Tensor):
        result = value.detach().clone()
        if value.requires_grad:
            result.requires_grad_(True)
    elif isinstance(value, list):
        result = [_safe_copy(v, memo) for v in value]
    elif isinstance(value, tuple):
        result = tuple(_safe_copy(v, memo) for v in value)
    elif isinstance(value, dict):
        result = {k: _safe_copy(v, memo) for k, v in value.items()}
    else:
        try:
            result = copy.deepcopy(value)
        except Exception:
            result = value
    memo[key] = result
    return result


def clone_namespace(ns):
    """A copy of the namespace in which no tensor, list or dict is shared with ``ns`` (aliasing kept)."""
    data = _data_items(ns)
    try:
        copied = copy.deepcopy(data)
    except Exception:
        memo = {}
        copied = {k: _safe_copy(v, memo) for k, v in data.items()}
    result = dict(ns)
    result.update(copied)
    return result


def _to_device(value, device):
    if isinstance(value, torch.Tensor):
        if value.device == device:
            return value
        moved = value.detach().to(device)
        if value.requires_grad and value.is_floating_point():
            moved.requires_grad_(True)
        return moved
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    if isinstance(value, tuple) and type(value) is tuple:
        return tuple(_to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    if isinstance(value, torch.nn.Module):
        return value.to(device)
    return value


# -- comparing -----------------------------------------------------------------------------------
def _tolerances(expected, rtol, atol):
    if rtol is not None and atol is not None:
        return rtol, atol
    dtype = expected.dtype if isinstance(expected, torch.Tensor) else None
    if dtype in (torch.float16, torch.bfloat16):
        base = 1e-2
    elif dtype in (torch.float64, torch.complex128):
        base = 1e-7
    elif dtype is None or dtype.is_floating_point or dtype.is_complex:
        base = 1e-4
    else:
        return 0.0, 0.0  # integers and bools: exact
    scale = 1.0
    if isinstance(expected, torch.Tensor) and expected.numel():
        finite = expected.detach().abs()
        finite = finite[torch.isfinite(finite)]
        if finite.numel():
            scale = max(1.0, float(finite.max()))
    elif isinstance(expected, (int, float)) and math.isfinite(expected):
        scale = max(1.0, abs(float(expected)))
    return (base if rtol is None else rtol), (base * 0.1 * scale if atol is None else atol)


def _max_diff(a, b):
    try:
        ta = a if isinstance(a, torch.Tensor) else torch.as_tensor(a)
        tb = b if isinstance(b, torch.Tensor) else torch.as_tensor(b)
        ta, tb = ta.detach().cpu(), tb.detach().cpu()
        if ta.shape != tb.shape:
            return None
        if ta.dtype.is_complex or tb.dtype.is_complex:
            diff = (ta.to(torch.complex128) - tb.to(torch.complex128)).abs()
        else:
            diff = (ta.to(torch.float64) - tb.to(torch.float64)).abs()
        both_nan = torch.isnan(ta.to(torch.float64)) & torch.isnan(tb.to(torch.float64)) \
            if not (ta.dtype.is_complex or tb.dtype.is_complex) else torch.zeros_like(diff, dtype=torch.bool)
        diff = torch.where(both_nan, torch.zeros_like(diff), diff)
        if diff.numel() == 0:
            return 0.0
        worst = int(torch.argmax(torch.nan_to_num(diff, nan=float("inf"))))
        value = float(diff.reshape(-1)[worst])
        index = tuple(int(i) for i in _unravel(worst, tuple(diff.shape)))
        return value, index
    except Exception:
        return None


def _unravel(flat, shape):
    index = []
    for size in reversed(shape):
        index.append(flat % size if size else 0)
        flat = flat // size if size else 0
    return list(reversed(index))


def _describe_value(value):
    if isinstance(value, torch.Tensor):
        return "Tensor[%s, %s]" % (str(value.dtype).replace("torch.", ""), tuple(value.shape))
    if isinstance(value, (list, tuple)):
        return "%s of %d" % (type(value).__name__, len(value))
    return type(value).__name__


def compare(outputs, loop_out, vec_out, rtol=None, atol=None):
    """(match, max_diff, message); the loop's result is the expected one."""
    worst = 0.0
    for name in outputs:
        if name not in loop_out:
            return False, None, "the loop did not set `%s`" % name
        if name not in vec_out:
            return False, None, "the vectorized rewrite did not set `%s`" % name
        expected, actual = loop_out[name], vec_out[name]
        r, a = _tolerances(expected, rtol, atol)
        try:
            torch.testing.assert_close(actual, expected, rtol=r, atol=a, equal_nan=True)
        except AssertionError as exc:
            found = _max_diff(expected, actual)
            detail = str(exc).strip().splitlines()
            reason = detail[0] if detail else "values differ"
            if found is not None and found[0] > 0:
                diff, index = found
                where = "`%s[%s]`" % (name, ", ".join(map(str, index))) if index else "`%s`" % name
                return False, diff, "RESULTS DIFFER for `%s`: max difference %.4g at %s (loop %s, rewrite %s)" % (
                    name, diff, where, _describe_value(expected), _describe_value(actual))
            return False, None, "RESULTS DIFFER for `%s`: %s (loop %s, rewrite %s)" % (
                name, reason, _describe_value(expected), _describe_value(actual))
        except Exception as exc:  # values assert_close cannot compare
            return False, None, "RESULTS DIFFER for `%s`: cannot compare (%s; loop %s, rewrite %s)" % (
                name, _describe(exc), _describe_value(expected), _describe_value(actual))
        found = _max_diff(expected, actual)
        if found is not None:
            worst = max(worst, found[0])
    return True, worst, "results match"


# -- timing --------------------------------------------------------------------------------------
def _measure(compiled, ns, device, min_run_time, no_grad, threads):
    """Median and IQR with ``blocked_autorange`` (code slower than ``min_run_time`` runs twice: one
    run to size the blocks, one measured).""" 
    from torch.utils import benchmark

    stmt = "_tw_fn(_tw_ns)"
    if device.type == "mps":  # torch.utils.benchmark synchronizes CUDA by itself, not MPS
        stmt = "_tw_fn(_tw_ns); _tw_torch.mps.synchronize()"
    if no_grad:
        stmt = "with _tw_torch.no_grad():\n    " + stmt.replace("; ", "\n    ")
    timer = benchmark.Timer(stmt=stmt, globals={"_tw_fn": compiled.fn, "_tw_ns": ns, "_tw_torch": torch},
                            num_threads=threads, label=compiled.label)
    try:
        m = timer.blocked_autorange(min_run_time=min_run_time)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _user_error(exc, compiled.label, compiled.first_line, compiled.what())
    return {"median": float(m.median), "iqr": float(m.iqr), "runs": len(m.times) * int(m.number_per_run),
            "blocks": len(m.times)}


class Bench:
    def __init__(self, req, send):
        self.req = req
        self.id = req.get("id")
        self.send = send
        self.device, self.device_label, self.device_name = pick_device(req.get("device"))
        self.budget = max(0.05, float(req.get("budget_s") or 1.0))
        self.outputs = [str(n) for n in req.get("outputs") or ()]
        if not self.outputs:
            raise BenchError("bad_request", "no outputs to compare")
        self.scale = req.get("scale") or None
        self.no_grad = bool(req.get("no_grad"))
        self.rtol, self.atol = req.get("rtol"), req.get("atol")
        self.phases = []  # [stage, seconds]
        # One CPU thread unless asked: torch.utils.benchmark's convention, and the only reproducible
        # choice on a busy machine (two threads contending for a core made a 1 ms matmul take 8-16 ms
        # on the 2-vCPU test VM). The loop itself runs on one thread either way.
        self.threads = int(req.get("threads") or 1)
        self.vec_once = 0.0
        self.memory = None  # peak bytes of one run of each, from the last check

    def progress(self, stage):
        now = time.perf_counter()
        if self.phases:
            self.phases[-1][1] = now - self.phases[-1][1]
        self.phases.append([stage, now])
        self.send({"type": "progress", "id": self.id, "stage": stage})

    # -- namespaces
    def make_namespace(self, n):
        ns = {"__name__": "__torchwise_bench__", "__builtins__": builtins, "torch": torch, "DEVICE": self.device}
        if self.scale:
            ns[self.scale["var"]] = n
        torch.manual_seed(0)
        try:
            import numpy
            numpy.random.seed(0)
        except Exception:
            pass
        code = self.req.get("setup") or ""
        try:
            compiled = compile(code, "<setup>", "exec")
        except SyntaxError as exc:
            raise BenchError("bad_request", "the setup code does not parse: %s (line %s)" % (exc.msg, exc.lineno))
        try:
            if self.device.type != "cpu" and hasattr(self.device, "__enter__"):
                with self.device:
                    exec(compiled, ns)
            else:
                exec(compiled, ns)
            for name, value in list(_data_items(ns).items()):
                ns[name] = _to_device(value, self.device)
            synchronize(self.device)
        except BenchError:
            raise
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise _user_error(exc, "setup", 1, "setup")
        return ns

    def check(self, n, warm=False):
        """Run both once on copies of a fresh setup: (loop namespace, vectorized namespace, loop seconds, match...)."""
        base = self.make_namespace(n)
        ns_loop, ns_vec = clone_namespace(base), clone_namespace(base)
        del base
        loop = Compiled(self.req.get("loop") or "", "loop", self.outputs, ns_loop, self.device)
        vec = Compiled(self.req.get("vectorized") or "", "vectorized", self.outputs, ns_vec, self.device)
        grad = torch.no_grad() if self.no_grad else _null()
        with grad:
            synchronize(self.device)
            with PeakMemory(self.device) as loop_peak:
                start = time.perf_counter()
                loop_out = loop.call(ns_loop, self.device)
                loop_once = time.perf_counter() - start
            if warm:  # the first run in a process pays one-time costs: time a second one
                start = time.perf_counter()
                loop.call(clone_namespace(ns_loop), self.device)
                loop_once = min(loop_once, time.perf_counter() - start)
            with PeakMemory(self.device) as vec_peak:
                start = time.perf_counter()
                vec_out = vec.call(ns_vec, self.device)
                self.vec_once = time.perf_counter() - start
        self.memory = {"loop_peak_bytes": loop_peak.bytes, "vectorized_peak_bytes": vec_peak.bytes,
                       "method": loop_peak.method if loop_peak.bytes is not None else None}
        match = compare(self.outputs, loop_out, vec_out, self.rtol, self.atol)
        del loop_out, vec_out
        return ns_loop, ns_vec, loop, vec, loop_once, match

    def plan(self):
        """The trip count to measure at: the full one, unless a probe says the loop would not fit the budget."""
        if not self.scale:
            return None, None
        full = int(self.scale["full"])
        cap = self.budget * _RUN_SHARE  # what one run of the loop should take at most
        probe = min(_PROBE_MAX, max(1, full // 10))
        if full < 2 * probe or full <= 16:
            return full, full
        self.progress("probing")
        try:
            _, _, _, _, seconds, _ = self.check(probe, warm=True)
        except BenchError:
            return full, full  # the scaled setup may not be valid code for this program: measure as written
        estimate = seconds * full / probe
        if estimate <= cap * _SLACK:
            return full, full
        return max(probe, _round_down(full * cap / estimate)), full

    def scaling(self, n, as_written, loop_t, vec_t):
        """Both versions timed at N/16 and N/4 too (a list of points, smallest first, N last), where the trip count is
        a setup variable; None otherwise, or when a smaller count does not run or does not match."""
        if not self.scale or n is None or n < 16 or as_written == "pinned" or self.req.get("scaling") is False:
            return None
        points = []
        self.progress("scaling")
        for divisor in _SCALING_DIVISORS:
            m = max(1, n // divisor)
            try:
                ns_loop, ns_vec, loop, vec, _, match = self.check(m)
                if not match[0]:
                    return None
                share = self.budget * _SCALING_SHARE
                points.append(_point(m, _measure(loop, ns_loop, self.device, share, self.no_grad, self.threads),
                                     _measure(vec, ns_vec, self.device, share, self.no_grad, self.threads)))
            except BenchError:
                return None
        points.append(_point(n, loop_t, vec_t))
        return points

    def run(self):
        started = time.perf_counter()
        n, full = self.plan()
        as_written = n is None or n == full
        self.progress("checking")
        try:
            ns_loop, ns_vec, loop, vec, loop_once, match = self.check(n)
        except BenchError:
            if as_written:
                raise
            n, as_written = full, True  # a scaled setup that fails: fall back to the size as written
            ns_loop, ns_vec, loop, vec, loop_once, match = self.check(n)
        if not as_written and not match[0]:
            # Different results at a smaller size may come from the scaling itself (a literal that
            # only happened to equal the trip count): measure the code as written instead.
            n, as_written = full, True
            self.progress("checking")
            ns_loop, ns_vec, loop, vec, loop_once, match = self.check(n)
            if match[0]:
                as_written = "pinned"  # scaling broke it: stay at the full size
        cap = self.budget * _RUN_SHARE
        if n is not None and as_written != "pinned" and loop_once > 2 * cap and n > 1:
            # The probe underestimated (a quadratic loop), or there was none: measure a smaller N.
            smaller = max(1, _round_down(n * cap / loop_once))
            if smaller < n:
                verdict = match
                n = smaller
                self.progress("checking")
                ns_loop, ns_vec, loop, vec, loop_once, match = self.check(n)
                if not verdict[0]:
                    match = verdict  # a difference found at the larger size stands
        self.progress("timing loop")
        loop_t = _measure(loop, ns_loop, self.device, self.budget * 0.3, self.no_grad, self.threads)
        self.progress("timing vectorized")
        vec_t = _measure(vec, ns_vec, self.device, self.budget * 0.2, self.no_grad, self.threads)
        memory = self.memory
        del ns_loop, ns_vec, loop, vec
        scaling = self.scaling(n, as_written, loop_t, vec_t)
        self.progress("done")
        self.phases.pop()
        ok_match, max_diff, message = match
        scaled = None
        if n is not None and full is not None and n < full:
            scaled = "%s=%d of %d" % ((self.scale or {}).get("label") or "N", n, full)
        speedup = loop_t["median"] / vec_t["median"] if vec_t["median"] > 0 else None
        return {"type": "result", "id": self.id, "ok": True,
                "loop_s": loop_t["median"], "loop_iqr_s": loop_t["iqr"], "loop_runs": loop_t["runs"],
                "vectorized_s": vec_t["median"], "vectorized_iqr_s": vec_t["iqr"],
                "vectorized_runs": vec_t["runs"], "speedup": speedup,
                "device": self.device_label, "device_name": self.device_name,
                "match": ok_match, "max_diff": max_diff, "message": message,
                "n": n, "n_full": full, "scaled": scaled, "loop_once_s": loop_once,
                "memory": memory, "scaling": scaling,
                "vectorized_once_s": self.vec_once,
                "torch": torch.__version__, "python": platform.python_version(),
                "threads": self.threads, "elapsed_s": time.perf_counter() - started,
                "phases": {stage: round(seconds, 4) for stage, seconds in self.phases}}


def _point(n, loop_t, vec_t):
    return {"n": n, "loop_s": loop_t["median"], "loop_iqr_s": loop_t["iqr"], "vectorized_s": vec_t["median"],
            "vectorized_iqr_s": vec_t["iqr"]}


def _round_down(n):
    """Two significant digits, so that a scaled count reads well: 4455 -> 4400."""
    n = max(1, int(n))
    if n < 100:
        return n
    step = 10 ** (len(str(n)) - 2)
    return n // step * step


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def handle(req, channel):
    rid = req.get("id")
    saved_dtype = torch.get_default_dtype()
    try:
        return Bench(req, channel.send).run()
    except BenchError as exc:
        result = {"type": "result", "id": rid, "ok": False, "error": exc.kind, "message": exc.message,
                  "torch": torch.__version__, "python": platform.python_version()}
        result.update(exc.extra)
        return result
    except Exception as exc:  # a bug of ours: say so, keep serving
        return {"type": "result", "id": rid, "ok": False, "error": "internal",
                "message": "torchwise benchmark worker failed: %s" % _describe(exc),
                "traceback": traceback.format_exc(limit=8)}
    finally:
        try:
            torch.set_default_dtype(saved_dtype)
        except Exception:
            pass
        gc.collect()
        if torch.cuda.is_available():
            try:
                torch.cuda.empty_cache()
            except Exception:
                pass


def _skip_dtensor_import():
    """``assert_close`` checks its inputs for DTensors by importing ``torch.distributed.tensor``, which
    imports sympy: 2-3 s on the first comparison. No value can be a DTensor unless that module was
    imported, and a benchmark's setup cannot import it, so tell the comparison there are none."""
    comparison = getattr(getattr(torch, "testing", None), "_comparison", None)
    if comparison is not None and hasattr(comparison, "_HAS_DTENSOR") \
            and "torch.distributed.tensor" not in sys.modules:
        comparison._HAS_DTENSOR = False


def main(argv):
    channel = Channel()
    if "--parent" in argv:
        try:
            _watch_parent(int(argv[argv.index("--parent") + 1]))
        except (IndexError, ValueError):
            pass
    global torch
    started = time.perf_counter()
    try:
        import torch as _torch
        import torch.testing  # noqa: F401
        import torch.utils.benchmark  # noqa: F401
    except ImportError as exc:
        missing = getattr(exc, "name", None) == "torch"
        channel.send({"type": "hello", "ok": False, "error": "no_torch" if missing else "torch_broken",
                      "message": ("No module named 'torch'" if missing else "import torch failed: %s" % _describe(exc)),
                      "executable": sys.executable, "python": platform.python_version()})
        return 3
    except BaseException as exc:
        channel.send({"type": "hello", "ok": False, "error": "torch_broken",
                      "message": "import torch failed: %s" % _describe(exc),
                      "executable": sys.executable, "python": platform.python_version()})
        return 3
    torch = _torch
    _skip_dtensor_import()
    channel.send(hello(time.perf_counter() - started))
    for line in channel.requests():
        try:
            req = json.loads(line)
        except ValueError:
            channel.send({"type": "result", "id": None, "ok": False, "error": "bad_request",
                          "message": "not JSON: %r" % line[:80]})
            continue
        kind = req.get("type", "bench")
        if kind == "shutdown":
            break
        if kind == "ping":
            channel.send({"type": "pong", "id": req.get("id")})
            continue
        channel.send(handle(req, channel))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
