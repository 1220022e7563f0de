"""The engine's facts against what each site held at runtime: every stated fact must hold.

Per observation (one execution of a site in one call):

- a ``TensorValue`` must be a tensor; a known dtype / device must equal torch's; a known shape must
  have the runtime rank, and each ``int`` dim the runtime size;
- an ``int`` ``ScalarValue`` must be an ``int``, equal to its value when that is an ``int``;
- a ``SeqValue`` must be a list / tuple / ``torch.Size`` of its length; its items (or the
  ``element`` every item is) are checked in turn;
- a ``SymbolicValue`` claims nothing unless the runtime value is an int: then it is its size.

Symbolic dims (and symbolic int values) are checked per call: within one frame, each symbol
stands for one size. A single symbol (``B``, ``n_embd``, ``nnz#3``) *binds* to the size it is first
seen at, and every other place it appears must have that size; a composite (``3*n_embd``, ``B*T``)
must evaluate, with the bindings of its symbols, to the runtime size (when all its symbols are
bound somewhere in that call); a quotient symbol (``C // n_head``) is both: it binds, and it must
equal the floor of its operands once they are bound.

Loops: a symbol that appears only inside a loop may be made there (``b, n, _ = x.shape`` in the
loop body, a fresh size for what the loop changes), so it binds once per *iteration* of the
innermost loop that holds all its appearances in the call; a symbol that appears outside the loop
too must be the same size on every iteration. (The price: a size wrongly kept across iterations is
caught only where its symbol also appears outside the loop.) The items of a list known only by its
``element`` are treated alike: one iteration per item.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from torchwise.analysis.dims import Sym
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue

from .facts import (
    base_symbols, checkable, evaluate, fact_text, seq_element, seq_length, single_symbol, symbolic_dim,
)
from .recorder import FrameRecord, Observation, RealInt, RealOther, RealSeq, RealTensor
from .sites import Site

# What the summary counts: facts the engine stated and torch confirmed, one per observation. "dims" are
# int dims; "symbolic dims" are symbolic dims and int values checked against a binding or evaluated (the
# first sight of a symbol in a call only binds it: "bindings"); "ints" are int values; "lengths" sequences'.
COUNTED = ("ranks", "dims", "symbolic dims", "dtypes", "devices", "ints", "lengths")


@dataclass
class Problem:
    check: str  # kind | rank | dim | dtype | device | int | length | symbol | composite
    where: str  # file:line:col
    site: Site
    function: str
    engine: str
    runtime: str
    detail: str = ""
    times: int = 1  # executions that disagreed the same way

    def __str__(self) -> str:
        times = f" [{self.times} executions]" if self.times > 1 else ""
        detail = f"; {self.detail}" if self.detail else ""
        return (f"{self.where}: `{self.site.name}` ({self.site.kind}, in {self.function}): {self.check} check: "
                f"engine {self.engine}, runtime {self.runtime}{detail}{times}")


@dataclass
class _SymbolUse:
    dim: Sym
    size: int
    observation: Observation
    part: str  # "dim 2", "value", "[1] dim 0"
    loops: tuple  # the loops around this appearance (and, for a list's element, its items), outermost first
    path: tuple  # their iterations: ((loop, n), ...)


@dataclass
class Checker:
    """Feed it the frames of one run; ``counts`` and ``problems`` say how it went."""

    label: str  # the file, as the messages name it
    verbose: bool = False
    counts: Counter = field(default_factory=Counter)
    problems: dict = field(default_factory=dict)  # (site, check, part) -> Problem
    log: list = field(default_factory=list)  # with verbose: every observation and binding
    sites_seen: set = field(default_factory=set)
    _item_loops: dict = field(default_factory=dict)  # (site, part) -> the stand-in loop over a list's items
    forward_tensors: set = field(default_factory=set)  # `forward` names that held a tensor at runtime
    forward_known: set = field(default_factory=set)  # ... and that the engine knows as a tensor of known rank

    def check(self, frames: list[FrameRecord]) -> None:
        for frame in frames:
            self.check_frame(frame)

    def check_frame(self, frame: FrameRecord) -> None:
        self.counts["frames"] += 1
        if self.verbose and frame.observations:
            self.log.append(f"call #{frame.number} {frame.function}")
        uses: list[_SymbolUse] = []
        for observation in frame.observations:
            self.counts["observations"] += 1
            self.sites_seen.add(observation.site)
            site = observation.site
            if site.in_forward and isinstance(observation.real, RealTensor):
                self.forward_tensors.add(site)
                if isinstance(site.fact, TensorValue) and site.fact.shape is not None:
                    self.forward_known.add(site)
            before = self._disagreements()
            self._value(frame, observation, observation.site.fact, observation.real, uses, "",
                        observation.site.loops, observation.path)
            if self.verbose:
                verdict = "WRONG" if self._disagreements() != before else "ok   "
                self.log.append(f"  {verdict} {self._where(observation.site)} `{observation.site.name}` "
                                f"({observation.site.kind}){_iterations(observation)}: "
                                f"engine {fact_text(observation.site.fact)} | runtime {observation.real}")
        self._symbols(frame, uses)

    def _disagreements(self) -> int:
        return sum(p.times for p in self.problems.values())

    @property
    def sorted_problems(self) -> list[Problem]:
        return sorted(self.problems.values(), key=lambda p: (p.site.node.lineno, p.site.node.col_offset, p.check))

    # -- one value -----------------------------------------------------------------------------------------
    def _value(self, frame, observation, fact, real, uses, part, loops, path) -> None:
        if not checkable(fact) or real is None:
            return  # a list's items the engine knows nothing checkable about
        if isinstance(real, RealOther) and real.what.startswith("unreadable"):
            self.counts["unreadable"] += 1
            return

        def say(check: str, detail: str = "") -> None:
            where = f"{part.strip()}: " if part else ""
            self._problem(check, frame, observation, part, fact_text(fact), str(real), where + detail)

        def symbolic(dim, size: int, what: str) -> None:
            uses.append(_SymbolUse(dim, size, observation, f"{part}{what}".strip(), loops, path))

        if isinstance(fact, TensorValue):
            if not isinstance(real, RealTensor):
                return say("kind", "not a tensor")
            if fact.dtype is not None:
                self.counts["dtypes"] += 1
                if fact.dtype.short != real.dtype:
                    say("dtype", f"{fact.dtype.short} != {real.dtype}")
            if fact.device is not None:
                self.counts["devices"] += 1
                if not _same_device(fact.device, real.device):
                    say("device", f"{fact.device} != {real.device}")
            if fact.shape is not None:
                self.counts["ranks"] += 1
                if len(fact.shape) != len(real.shape):
                    return say("rank", f"{len(fact.shape)} != {len(real.shape)}")
                for i, (dim, size) in enumerate(zip(fact.shape, real.shape)):
                    if type(dim) is int:
                        self.counts["dims"] += 1
                        if dim != size:
                            say("dim", f"dim {i}: {dim} != {size}")
                    elif isinstance(dim, Sym):
                        symbolic(dim, size, f"dim {i}")
        elif isinstance(fact, ScalarValue):
            if not isinstance(real, RealInt):
                return say("kind", "not an int")
            self._int(fact.value, real.value, say, symbolic)
        elif isinstance(fact, SeqValue):
            if not isinstance(real, RealSeq) or not _same_kind(fact.kind, real.kind):
                return say("kind", f"not a {fact.kind}")
            length = seq_length(fact)
            if type(length) is int:
                self.counts["lengths"] += 1
                if length != len(real.items):
                    return say("length", f"{length} != {len(real.items)}")
            elif isinstance(length, Sym):
                symbolic(length, len(real.items), "length")
            if fact.items is not None:
                for i, (item, real_item) in enumerate(zip(fact.items, real.items)):
                    self._value(frame, observation, item, real_item, uses, f"{part}[{i}] ", loops, path)
            elif checkable(seq_element(fact)):
                items = self._item_loops.setdefault((observation.site, part), object())
                for i, real_item in enumerate(real.items):
                    self._value(frame, observation, seq_element(fact), real_item, uses, f"{part}[{i}] ",
                                loops + (items,), path + ((items, i),))
        elif symbolic_dim(fact) is not None and isinstance(real, RealInt):  # anything else: no claim
            self._int(symbolic_dim(fact), real.value, say, symbolic)

    def _int(self, value, real: int, say, symbolic) -> None:
        if isinstance(value, Sym):
            symbolic(value, real, "value")  # counted where its symbol is checked
        else:
            self.counts["ints"] += 1
            if value != real:
                say("int", f"{value} != {real}")

    # -- symbols, per call -----------------------------------------------------------------------------------
    def _symbols(self, frame: FrameRecord, uses: list[_SymbolUse]) -> None:
        singles = {id(use): single_symbol(use.dim) for use in uses}
        bases = {id(use): base_symbols(use.dim) for use in uses}
        homes: dict = {}  # symbol -> the loops around every appearance in this call
        for use in uses:
            for name in bases[id(use)] | {singles[id(use)]} - {None}:
                homes[name] = _common_prefix(homes.get(name, use.loops), use.loops)

        def key(name: str, use: _SymbolUse):
            return name, use.path[:len(homes[name])]

        bound: dict = {}  # (symbol, iterations of its home loops) -> the first use
        for use in uses:
            name = singles[id(use)]
            if name is None:
                continue
            first = bound.setdefault(key(name, use), use)
            if first is use:
                self.counts["bindings"] += 1
                if self.verbose:
                    self.log.append(f"  bind  {name} = {use.size} ({self._where(use.observation.site)} "
                                    f"`{use.observation.site.name}` {use.part}{_iterations(use.observation)})")
                continue
            self.counts["symbolic dims"] += 1
            if first.size != use.size:
                self._problem("symbol", frame, use.observation, use.part, fact_text(use.observation.site.fact),
                              str(use.observation.real),
                              f"{use.part}: `{name}` is {use.size} here but {first.size} at "
                              f"{self._where(first.observation.site)} (`{first.observation.site.name}` {first.part}: "
                              f"engine {fact_text(first.observation.site.fact)}, runtime {first.observation.real})")
        for use in uses:
            name = singles[id(use)]
            if name is not None and bases[id(use)] == {name}:
                continue  # a plain symbol: bound or checked above
            values = {}
            for base in bases[id(use)]:
                first = bound.get(key(base, use))
                if first is not None:
                    values[base] = first.size
            value = evaluate(use.dim, values.get)
            if type(value) is not int:
                self.counts["symbolic dims unchecked"] += name is None
                continue
            self.counts["symbolic dims"] += 1
            if value != use.size:
                bindings = ", ".join(f"{k} = {v}" for k, v in sorted(values.items()))
                self._problem("composite", frame, use.observation, use.part, fact_text(use.observation.site.fact),
                              str(use.observation.real), f"{use.part}: {use.dim} = {value} with {bindings}, "
                              f"but the size is {use.size}")

    # -- reporting --------------------------------------------------------------------------------------------
    def _where(self, site: Site) -> str:
        return f"{self.label}:{site.node.lineno}:{site.node.col_offset + 1}"

    def _problem(self, check, frame, observation, part, engine, runtime, detail="") -> None:
        site = observation.site
        key = (site, check, part)
        known = self.problems.get(key)
        if known is not None:
            known.times += 1
            return
        self.problems[key] = Problem(check, self._where(site), site, f"{frame.function} (call #{frame.number})",
                                     engine, runtime, detail)


def _same_device(engine: str, runtime: str) -> bool:
    return engine == runtime or engine == "cuda" and runtime.startswith("cuda:")


def _same_kind(engine: str, runtime: str) -> bool:
    """A ``torch.Size`` is a tuple too."""
    return engine == runtime or engine == "tuple" and runtime == "size"


def _common_prefix(a: tuple, b: tuple) -> tuple:
    n = 0
    while n < len(a) and n < len(b) and a[n] is b[n]:
        n += 1
    return a[:n]


def _iterations(observation: Observation) -> str:
    if not observation.path:
        return ""
    # (a comprehension has no line of its own: its target's)
    lines = [getattr(loop, "lineno", None) or loop.target.lineno for loop, _ in observation.path]
    return " [iteration " + ", ".join(f"line {line}: {n}" for line, (_, n) in zip(lines, observation.path)) + "]"
