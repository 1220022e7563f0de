"""What each site held at runtime, per call: ``sys.settrace`` over the code of one file.

Line events cannot say which statement a value came from (a statement spans lines, a line holds
several assignments, a ``for`` line runs before and after its target is bound), so the recorder traces
*instructions* (``frame.f_trace_opcodes``): every load and store instruction carries the exact source
position of the ``ast.Name`` it reads or writes (``co_positions``, Python >= 3.11). A target's value is
read from the frame's locals at the instruction right after its store, a use's value just before its
load, a parameter's at the call. Only frames running code of the traced file are traced.

Each observation also records the iteration of every loop around the site, counted per frame: a
loop starts an iteration each time execution enters its ``sites.iteration_start`` part.
"""

from __future__ import annotations

import dis
import os
import sys
from dataclasses import dataclass, field

import torch

from torchwise.analysis.values import SeqValue, TensorValue

from .facts import checkable, seq_element
from .sites import Site, Sites


# -- what a value was (only as much as the fact being checked needs) -------------------------------------
@dataclass(frozen=True)
class RealTensor:
    shape: tuple
    dtype: str
    device: str

    def __str__(self):
        return f"Tensor[{self.dtype}, {_shape_text(self.shape)}] on {self.device}"


@dataclass(frozen=True)
class RealInt:
    value: int

    def __str__(self):
        return f"int {self.value}"


@dataclass(frozen=True)
class RealSeq:
    kind: str  # "list" | "tuple" | "size"
    items: tuple

    def __str__(self):
        items = ", ".join("…" if item is None else str(item) for item in self.items)
        return f"{self.kind} of {len(self.items)}: ({items})"


@dataclass(frozen=True)
class RealOther:
    what: str

    def __str__(self):
        return self.what


def _shape_text(shape) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"


def capture(fact, value):
    """The facts of ``value`` that ``fact`` makes claims about, taken at once (later in-place ops must
    not change them); None when ``fact`` claims nothing checkable, except that a tensor is still seen as one
    (the forward coverage counts the tensors the engine does not know)."""
    if not checkable(fact):
        try:
            return RealTensor((), "", "") if isinstance(value, torch.Tensor) else None
        except Exception:  # noqa: BLE001 - a proxy whose isinstance raises
            return None
    try:
        if isinstance(fact, TensorValue):
            if isinstance(value, torch.Tensor):
                return RealTensor(tuple(value.shape), str(value.dtype).removeprefix("torch."), str(value.device))
        elif isinstance(fact, SeqValue):
            if isinstance(value, (tuple, list)):
                kind = "size" if isinstance(value, torch.Size) else "list" if isinstance(value, list) else "tuple"
                if fact.items is None:
                    items = (seq_element(fact),) * len(value)
                else:
                    items = fact.items if len(fact.items) == len(value) else (None,) * len(value)
                return RealSeq(kind, tuple(capture(f, v) for f, v in zip(items, value)))
        elif type(value) is int:  # an int ScalarValue, a SymbolicValue
            return RealInt(value)
    except Exception as error:  # a tensor torch cannot describe (a nested tensor, a freed view)
        return RealOther(f"unreadable ({type(error).__name__})")
    return RealOther(f"a {type(value).__module__}.{type(value).__qualname__}")


# -- the trace ---------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Observation:
    site: Site
    path: tuple  # ((loop, iteration), ...) for site.loops
    real: object  # RealTensor | RealInt | RealSeq | RealOther


@dataclass(eq=False)
class FrameRecord:
    number: int  # calls of this file's code, in order
    function: str  # the code's qualified name
    observations: list = field(default_factory=list)


_STORES = {"STORE_FAST", "STORE_DEREF", "STORE_NAME"}
_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_NAME"}
_MISSING = object()


def _names(ins: dis.Instruction) -> tuple[tuple, tuple]:
    """(the names an instruction stores, the names it loads); the two-name instructions are 3.13's."""
    op, arg = ins.opname, ins.argval
    if op in _STORES:
        return (arg,), ()
    if op in _LOADS:
        return (), (arg,)
    if op == "STORE_FAST_STORE_FAST":
        return tuple(arg), ()
    if op in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
        return (), tuple(arg)
    if op == "STORE_FAST_LOAD_FAST":
        return tuple(arg[:1]), ()  # its load runs after its store, within the instruction: not readable
    return (), ()


@dataclass
class _Plan:
    """What to do at each instruction of one code object."""

    loads: dict  # offset -> [Site]
    stores: dict  # offset -> [Site]
    starts: dict  # offset -> frozenset of loops whose iteration start holds that instruction (positioned only)
    parameters: list  # [Site]


class Recorder:
    """``with Recorder(path, sites) as r: run()``; then ``r.frames``."""

    def __init__(self, path: str, sites: Sites):
        self.path = os.path.realpath(path)
        self.sites = sites
        self.frames: list[FrameRecord] = []
        self._plans: dict = {}
        self._ours: dict = {}  # co_filename -> whether it is the traced file

    def __enter__(self) -> "Recorder":
        self._previous = sys.gettrace()
        sys.settrace(self._on_call)
        return self

    def __exit__(self, *exc) -> None:
        sys.settrace(self._previous)

    def _on_call(self, frame, event, arg):
        code = frame.f_code
        ours = self._ours.get(code.co_filename)
        if ours is None:
            ours = self._ours[code.co_filename] = os.path.realpath(code.co_filename) == self.path
        if not ours or event != "call":
            return None
        existing = frame.f_trace
        if isinstance(existing, _FrameTracer):  # a generator resumed: the same call goes on
            return existing
        plan = self._plans.get(code)
        if plan is None:
            plan = self._plans[code] = self._plan(code)
        record = FrameRecord(len(self.frames), code.co_qualname)
        self.frames.append(record)
        for site in plan.parameters:
            value = frame.f_locals.get(site.name, _MISSING)
            if value is not _MISSING:
                record.observations.append(Observation(site, (), capture(site.fact, value)))
        if not (plan.loads or plan.stores):
            return None
        frame.f_trace_opcodes = True
        return _FrameTracer(plan, record)

    def _plan(self, code) -> _Plan:
        loads, stores, starts = {}, {}, {}
        instructions = list(dis.get_instructions(code))
        lines = [i.positions.lineno for i in instructions if i.positions and i.positions.lineno is not None]
        loops = [(loop, start) for loop, start in self.sites.starts.items()
                 if lines and min(lines) <= start[0] <= max(lines)]
        for ins in instructions:
            where = ins.positions
            if where is None or where.lineno is None or where.col_offset is None:
                continue
            pos = (where.lineno, where.col_offset, where.end_lineno, where.end_col_offset)
            stored, loaded = _names(ins)
            if loaded:
                matched = self._match(self.sites.loads, pos, loaded)
                if matched:
                    loads[ins.offset] = matched
            if stored:
                matched = self._match(self.sites.stores, pos, stored)
                if matched:
                    stores[ins.offset] = matched
            if loops:
                starts[ins.offset] = frozenset(loop for loop, start in loops if _inside(pos, start))
        return _Plan(loads, stores, starts, self.sites.parameters.get((code.co_name, code.co_firstlineno), []))

    @staticmethod
    def _match(sites: dict, pos, names) -> list:
        """The sites an instruction reads or writes: the Name at exactly its position (for the
        two-name instructions of 3.13, each Name of those names inside its span)."""
        site = sites.get(pos)
        if site is not None and site.name in names:
            return [site]
        if len(names) < 2:
            return []
        return [s for p, s in sites.items() if s.name in names and _inside(p, pos)]


def _inside(pos, span) -> bool:
    return (pos[0], pos[1]) >= (span[0], span[1]) and (pos[2], pos[3]) <= (span[2], span[3])


class _FrameTracer:
    """The local trace function of one call."""

    __slots__ = ("plan", "record", "pending", "counts", "inside")

    def __init__(self, plan: _Plan, record: FrameRecord):
        self.plan, self.record = plan, record
        self.pending: list = []  # stores done by the previous instruction: read their values now
        self.counts: dict = {}  # loop -> iterations started in this call
        self.inside: frozenset = frozenset()  # the iteration starts the previous instruction was in

    def __call__(self, frame, event, arg):
        if self.pending:
            local = frame.f_locals
            for site, path in self.pending:
                value = local.get(site.name, _MISSING)
                if value is not _MISSING:
                    self.record.observations.append(Observation(site, path, capture(site.fact, value)))
            self.pending = []
        if event != "opcode":
            return self
        offset = frame.f_lasti
        plan = self.plan
        inside = plan.starts.get(offset)
        if inside is not None:
            for loop in inside - self.inside:
                self.counts[loop] = self.counts.get(loop, 0) + 1
            self.inside = inside
        loads = plan.loads.get(offset)
        if loads is not None:
            local = frame.f_locals
            for site in loads:
                value = local.get(site.name, _MISSING)
                if value is not _MISSING:
                    self.record.observations.append(Observation(site, self._path(site), capture(site.fact, value)))
        stores = plan.stores.get(offset)
        if stores is not None:
            self.pending = [(site, self._path(site)) for site in stores]
        return self

    def _path(self, site: Site) -> tuple:
        counts = self.counts
        return tuple((loop, counts.get(loop, 0)) for loop in site.loops)
