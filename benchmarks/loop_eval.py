"""Measure the loop vectorizer (TW401-TW407) on a development set of realistic loops, and on real code.

The set is ``tests/loops_eval/cases/*.py``: one small program per case, written as PyTorch users write
loops (tutorials, Q&A answers, research code), each either ``vectorizable`` (it carries the idiomatic
rewrite an expert would write) or ``must-stay-loop`` (a recurrence, I/O, data-dependent control flow...).
For each case this script runs torchwise, applies the fix it offers (as ``torchwise check --fix``
does: the first fix of every TW40x finding), runs the original and the fixed program with real torch
and compares every result, then times correct rewrites against the hand-written form.

    .venv/bin/python benchmarks/loop_eval.py                 # the table and the totals, with timings
    .venv/bin/python benchmarks/loop_eval.py --no-speed      # without timings (a few seconds)
    .venv/bin/python benchmarks/loop_eval.py --case NAME     # one case (or a glob: 'article-*'), with texts
    .venv/bin/python benchmarks/loop_eval.py --json out.json # also every figure as JSON ('-': stdout)
    .venv/bin/python benchmarks/loop_eval.py --corpus        # the census of loops in /work/shared/corpus

Exit status: 0, or 1 when a rewrite is wrong, a must-stay loop got a fix, or the analysis crashed.

The analysis never imports torch; this script does (it runs the programs). Case file format: see
``tests/loops_eval/README.md``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import fnmatch
import io
import json
import math
import random
import re
import sys
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from torchwise.engine import analyze  # noqa: E402
from torchwise.fixing import apply_edits, preferred_edits  # noqa: E402

CASES_DIR = ROOT / "tests" / "loops_eval" / "cases"
CENSUS_FILE = ROOT / "tests" / "loops_eval" / "corpus_census.json"
CORPUS_DIR = Path("/work/shared/corpus")
LOOP_CODES = frozenset(f"TW40{i}" for i in range(1, 8))
MARKER = "# ---- vectorized ----"
KINDS = ("vectorizable", "must-stay-loop")
SLOW_RATIO = 1.2  # a rewrite slower than this times the idiomatic form is flagged,
SLOW_MARGIN_S = 2e-6  # and by more than this (differences of a microsecond are timer noise)


# -- the set ----------------------------------------------------------------------------------------
@dataclass
class Case:
    name: str
    kind: str
    family: str
    program: str  # the loop as a user wrote it: what torchwise analyses
    expected: Optional[str] = None  # the idiomatic vectorized program (vectorizable cases)
    results: list = field(default_factory=list)  # module-level names that hold the results
    origin: str = ""
    tags: list = field(default_factory=list)
    why: str = ""  # must-stay-loop: why it has to stay a loop
    note: str = ""
    path: str = ""


def parse_case(path: Path) -> Case:
    """A case file: ``# key: value`` header lines, the program, then for a vectorizable case the marker
    line and the vectorized program. Header keys: kind, family, results, origin, tags, why, note."""
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    meta: dict = {}
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        m = re.match(r"#\s*([a-z]+):\s?(.*)$", lines[i].rstrip("\n"))
        if not m:
            raise ValueError(f"{path.name}:{i + 1}: a header line is `# key: value`")
        key, value = m.groups()
        if key in meta:  # a continued value
            meta[key] += " " + value.strip()
        else:
            meta[key] = value.strip()
        i += 1
    body = "".join(lines[i:]).lstrip("\n")
    program, expected = body, None
    if MARKER in body:
        program, expected = body.split(MARKER + "\n", 1)
        program = program.rstrip("\n") + "\n"
        expected = expected.lstrip("\n")
    case = Case(name=path.stem, kind=meta.get("kind", ""), family=meta.get("family", ""), program=program,
                expected=expected, results=meta.get("results", "").split(), origin=meta.get("origin", ""),
                tags=meta.get("tags", "").split(), why=meta.get("why", ""), note=meta.get("note", ""),
                path=str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path))
    if case.kind not in KINDS:
        raise ValueError(f"{path.name}: kind must be one of {KINDS}, not {case.kind!r}")
    if not case.family:
        raise ValueError(f"{path.name}: no family")
    if case.kind == "vectorizable" and (not expected or not case.results):
        raise ValueError(f"{path.name}: a vectorizable case needs `results:` and a vectorized program")
    if case.kind == "must-stay-loop" and (expected or not case.why):
        raise ValueError(f"{path.name}: a must-stay-loop case has `why:` and no vectorized program")
    return case


def load_cases(pattern: str = "*", folder: Path = CASES_DIR) -> list[Case]:
    cases = [parse_case(p) for p in sorted(folder.glob("*.py"))]
    return [c for c in cases if fnmatch.fnmatch(c.name, pattern)]


# -- running programs -------------------------------------------------------------------------------
def _torch():
    import torch
    return torch


def run_program(text: str, name: str = "<case>"):
    """Execute a program as a script, seeded; its namespace, or the exception it raised."""
    torch = _torch()
    namespace: dict = {"__name__": "__main__"}
    torch.manual_seed(0)
    random.seed(0)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            exec(compile(text, name, "exec"), namespace)
        except Exception as err:  # noqa: BLE001 - reported, not raised
            return err
    return namespace


_SKIP_TYPES = ("module", "function", "type", "builtin_function_or_method", "method")


def _data_names(namespace: dict) -> set:
    return {k for k, v in namespace.items()
            if not k.startswith("__") and type(v).__name__ not in _SKIP_TYPES and not callable(v)}


def compare_values(a: Any, b: Any, where: str, layout: bool) -> list[str]:
    """Why ``b`` is not the same result as ``a`` (empty: the same). Tensors: dtype, shape, device,
    requires_grad, values (``assert_close``; integers and bools exactly); with ``layout`` also contiguity."""
    torch = _torch()
    if type(a) is not type(b):
        return [f"{where}: type {type(a).__name__} vs {type(b).__name__}"]
    if isinstance(a, torch.Tensor):
        if a.dtype != b.dtype:
            return [f"{where}: dtype {a.dtype} vs {b.dtype}"]
        if a.shape != b.shape:
            return [f"{where}: shape {tuple(a.shape)} vs {tuple(b.shape)}"]
        if a.requires_grad != b.requires_grad:
            return [f"{where}: requires_grad {a.requires_grad} vs {b.requires_grad}"]
        if layout and a.is_contiguous() != b.is_contiguous():
            return [f"{where}: contiguous {a.is_contiguous()} vs {b.is_contiguous()} (strides {a.stride()} vs "
                    f"{b.stride()})"]
        a, b = a.detach(), b.detach()
        if a.is_floating_point() or a.is_complex():
            scale = float(a.abs().nan_to_num(0, 0, 0).max()) if a.numel() else 0.0
            try:
                torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5 * max(1.0, scale), equal_nan=True)
            except AssertionError as err:
                return [f"{where}: values differ: {' '.join(str(err).split())[:200]}"]
        elif not torch.equal(a, b):
            return [f"{where}: values differ"]
        return []
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return [f"{where}: length {len(a)} vs {len(b)}"]
        out = []
        for k, (x, y) in enumerate(zip(a, b)):
            out += compare_values(x, y, f"{where}[{k}]", layout)
            if out:
                break
        return out
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys differ"]
        out = []
        for k in a:
            out += compare_values(a[k], b[k], f"{where}[{k!r}]", layout)
        return out
    if isinstance(a, float):
        if not (math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6) or (a != a and b != b)):
            return [f"{where}: {a!r} vs {b!r}"]
        return []
    if isinstance(a, (int, bool, str, complex, type(None))):
        return [] if a == b else [f"{where}: {a!r} vs {b!r}"]
    return []  # other objects (files, models...): not compared


def compare_namespaces(original: dict, other: dict, results: list, strict: bool) -> list[str]:
    """The declared results must exist in both and agree; with ``strict`` (a torchwise fix) every other
    data name both programs define must agree too, contiguity included."""
    problems = []
    names = list(results)
    if strict:
        names += sorted((_data_names(original) & _data_names(other)) - set(results))
    for name in names:
        if name not in original:
            problems.append(f"`{name}`: not defined by the original program")
        elif name not in other:
            problems.append(f"`{name}`: not defined after the rewrite")
        else:
            problems += compare_values(original[name], other[name], f"`{name}`", layout=strict)
    return problems


# -- torchwise on one case ------------------------------------------------------------------------------
def _reason(message: str) -> str:
    m = re.search(r"\(no automatic rewrite: (.*)\)\s*$", message)
    return m.group(1) if m else message


def torchwise_findings(text: str, path: str = "<case>"):
    return [f for f in analyze(text, path).findings if f.code in LOOP_CODES]


@dataclass
class Outcome:
    name: str
    kind: str
    family: str
    tags: list
    verdict: str = ""  # correct | WRONG | flagged | silent | crash
    codes: list = field(default_factory=list)
    messages: list = field(default_factory=list)
    reason: str = ""  # flagged: why there is no fix
    problems: list = field(default_factory=list)  # WRONG / crash: what differs or what raised
    fixed: str = ""  # the program after torchwise's fixes
    expected_ok: Optional[bool] = None  # the hand-written rewrite agrees with the loop
    expected_problems: list = field(default_factory=list)
    program_error: str = ""
    analysis_ms: float = 0.0
    speed: dict = field(default_factory=dict)

    @property
    def bad(self) -> bool:
        return self.verdict in ("WRONG", "crash")


def evaluate(case: Case, check_expected: bool = True) -> Outcome:
    out = Outcome(case.name, case.kind, case.family, case.tags)
    original = run_program(case.program, case.name)
    if isinstance(original, Exception):
        out.program_error = f"the program raises {original!r}"
    if check_expected and case.expected is not None and not isinstance(original, Exception):
        expected = run_program(case.expected, case.name + ":expected")
        if isinstance(expected, Exception):
            out.expected_problems = [f"the vectorized program raises {expected!r}"]
        else:
            out.expected_problems = compare_namespaces(original, expected, case.results, strict=False)
        out.expected_ok = not out.expected_problems
    start = time.perf_counter()
    try:
        findings = torchwise_findings(case.program, case.path or case.name)
        fixing = [f for f in findings if f.fixes]
        broken: list = []  # a fix whose edits could not be built applies nothing: a crash, not "correct"
        edits = preferred_edits(fixing, broken)
        if broken:
            raise RuntimeError("; ".join(f"{f.code}: {why}" for f, why in broken))
    except Exception:  # noqa: BLE001 - a crash of the product is a result
        out.verdict, out.problems = "crash", [traceback.format_exc(limit=-4)]
        return out
    finally:
        out.analysis_ms = (time.perf_counter() - start) * 1000
    out.codes = sorted({f.code for f in findings})
    out.messages = [f"{f.code} line {f.span.start.line + 1}: {f.message}" for f in findings]
    if not findings:
        out.verdict = "silent"
        return out
    if not fixing:
        out.verdict = "flagged"
        out.reason = "; ".join(dict.fromkeys(_reason(f.message) for f in findings))
        return out
    out.fixed = apply_edits(case.program, edits)
    if case.kind == "must-stay-loop":
        out.verdict, out.problems = "WRONG", ["a fix was offered for a loop that must stay a loop"]
    try:
        compile(out.fixed, "<rewrite>", "exec")
    except SyntaxError as err:
        out.verdict = "WRONG"
        out.problems.append(f"the rewrite does not parse: {err}")
        return out
    if isinstance(original, Exception):
        out.verdict = out.verdict or "correct?"
        return out
    rewritten = run_program(out.fixed, case.name + ":fixed")
    if isinstance(rewritten, Exception):
        out.verdict = "WRONG"
        out.problems.append(f"the rewrite raises {rewritten!r}")
        return out
    problems = compare_namespaces(original, rewritten, case.results, strict=True)
    if problems:
        out.verdict = "WRONG"
        out.problems += problems
    elif not out.verdict:
        out.verdict = "correct"
    return out


# -- speed ------------------------------------------------------------------------------------------
def _is_def(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))


def _calls_a_def(stmt: ast.stmt, defined: set) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defined
               for n in ast.walk(stmt))


def split_for_timing(text: str, others: list) -> tuple[str, str]:
    """(setup, timed) of ``text``: imports, definitions and the statements it shares with every program
    of ``others`` before they diverge (building the inputs) are the setup; the rest is timed. A statement
    that calls a function the program defines is timed (the rewrite may sit in the function), but the
    arguments of that call that compute something (``f(torch.randn(n))``) are evaluated in the setup."""
    mine = ast.parse(text).body
    defined = {s.name for s in mine if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    theirs = [[ast.dump(s) for s in ast.parse(o).body if not _is_def(s)] for o in others]
    setup, timed, k, diverged = [], [], 0, False
    for stmt in mine:
        if _is_def(stmt):
            setup.append(stmt)
            continue
        if not diverged and all(k < len(t) and t[k] == ast.dump(stmt) for t in theirs) \
                and not _calls_a_def(stmt, defined):
            setup.append(stmt)
            k += 1
            continue
        diverged = True
        call = getattr(stmt, "value", None)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in defined:
            for slot, arg in [(i, a) for i, a in enumerate(call.args)] + [(kw, kw.value) for kw in call.keywords]:
                if isinstance(arg, (ast.Name, ast.Constant, ast.Starred)):
                    continue
                name = f"_timing_arg{len(setup)}"
                setup.append(ast.Assign([ast.Name(name, ast.Store())], arg, lineno=0))
                if isinstance(slot, int):
                    call.args[slot] = ast.Name(name, ast.Load())
                else:
                    slot.value = ast.Name(name, ast.Load())
        timed.append(stmt)
    return ast.unparse(ast.fix_missing_locations(ast.Module(setup, []))), \
        ast.unparse(ast.fix_missing_locations(ast.Module(timed, [])))


def _prepared(text: str, others: list):
    """(code, namespace) of ``text``'s timed part, its setup already run (seeded)."""
    torch = _torch()
    setup, timed = split_for_timing(text, others)
    namespace: dict = {"__name__": "__main__"}
    torch.manual_seed(0)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(compile(setup, "<setup>", "exec"), namespace)
    return compile(timed, "<timed>", "exec"), namespace


def time_programs(texts: list, others: list, min_run_time: float) -> list:
    """Seconds per run of each text's timed part, on one thread: blocks of about a millisecond of each
    program in turn, until each has run ``min_run_time``; each keeps its fastest block. Interleaving at
    that grain lets every program see the same machine: on a shared, loaded 2-core box a microsecond
    statement's speed flips between two modes for tenths of a second (6 vs 13 us for one text), so timings
    taken one after the other (even medians) read identical programs as 2x apart."""
    torch = _torch()
    prepared = [_prepared(text, others) for text in texts]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            numbers = []
            for code, namespace in prepared:  # calibrate: runs per block of about 1 ms
                number, took = 1, 0.0
                while True:
                    start = time.perf_counter()
                    for _ in range(number):
                        exec(code, dict(namespace))
                    took = time.perf_counter() - start
                    if took >= 1e-3 or number >= 1 << 16:
                        break
                    number *= 4
                numbers.append(number)
            best = [math.inf] * len(prepared)
            spent = [0.0] * len(prepared)
            while min(spent) < min_run_time:
                for k, (code, namespace) in enumerate(prepared):
                    start = time.perf_counter()
                    for _ in range(numbers[k]):
                        exec(code, dict(namespace))
                    took = time.perf_counter() - start
                    spent[k] += took
                    best[k] = min(best[k], took / numbers[k])
    finally:
        torch.set_num_threads(threads)
    return best


def time_program(text: str, others: list, min_run_time: float) -> float:
    """Seconds per run of ``text``'s timed part (see ``time_programs``)."""
    return time_programs([text], others, min_run_time)[0]


_MALLOC_SET = False


def _steady_malloc() -> None:
    """Keep freed memory in the heap (glibc): otherwise every large tensor of a timed statement may be a
    fresh mmap, and its page faults (which depend on the process's history) dominate the timings."""
    global _MALLOC_SET
    if _MALLOC_SET:
        return
    _MALLOC_SET = True
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 256 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass


def measure_speed(case: Case, out: Outcome, min_run_time: float = 0.2, rounds: int = 3) -> None:
    """Loop, torchwise's rewrite and the idiomatic form, timed on the case's own inputs; the rewrite and
    the idiomatic form are interleaved (``time_programs``), for ``rounds`` times ``min_run_time`` each."""
    if out.verdict != "correct" or case.expected is None:
        return
    _steady_malloc()
    try:
        texts = [case.program, out.fixed, case.expected]
        rewrite, idiomatic = time_programs([out.fixed, case.expected], texts, min_run_time * rounds)
        loop = time_program(case.program, texts, min_run_time)
    except Exception as err:  # noqa: BLE001
        out.speed = {"error": repr(err)}
        return
    out.speed = {"loop_s": loop, "rewrite_s": rewrite, "idiomatic_s": idiomatic,
                 "speedup_vs_loop": loop / rewrite, "ratio_vs_idiomatic": rewrite / idiomatic,
                 "slow": rewrite / idiomatic > SLOW_RATIO and rewrite - idiomatic > SLOW_MARGIN_S}


# -- reporting ----------------------------------------------------------------------------------------
def totals(outcomes: list[Outcome]) -> dict:
    vec = [o for o in outcomes if o.kind == "vectorizable"]
    stay = [o for o in outcomes if o.kind == "must-stay-loop"]

    def count(group, verdict):
        return sum(o.verdict == verdict for o in group)

    families: dict = {}
    for o in vec:
        row = families.setdefault(o.family, {"cases": 0, "correct": 0, "WRONG": 0, "flagged": 0, "silent": 0,
                                             "crash": 0})
        row["cases"] += 1
        row[o.verdict] = row.get(o.verdict, 0) + 1
    tags: dict = {}
    for o in vec:
        for t in o.tags:
            row = tags.setdefault(t, {"cases": 0, "correct": 0})
            row["cases"] += 1
            row["correct"] += o.verdict == "correct"
    slow = [o.name for o in vec if o.speed.get("slow")]
    return {
        "cases": len(outcomes),
        "vectorizable": {"cases": len(vec), "correct": count(vec, "correct"), "WRONG": count(vec, "WRONG"),
                         "flagged": count(vec, "flagged"), "silent": count(vec, "silent"),
                         "crash": count(vec, "crash"),
                         "rewrite_rate": round(count(vec, "correct") / len(vec), 3) if vec else None},
        "must-stay-loop": {"cases": len(stay), "fixed (WRONG)": count(stay, "WRONG"),
                           "flagged": count(stay, "flagged"), "silent": count(stay, "silent"),
                           "crash": count(stay, "crash")},
        "families": dict(sorted(families.items())),
        "tags": dict(sorted(tags.items())),
        "slow_rewrites": slow,
        "expected_disagrees": [o.name for o in outcomes if o.expected_ok is False],
        "programs_raising": [o.name for o in outcomes if o.program_error],
    }


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def print_table(outcomes: list[Outcome], summary: dict, verbose: bool = False) -> None:
    print(f"{'case':<38} {'kind':<5} {'family':<22} {'verdict':<8} {'speed (vs loop, vs idiomatic)':<29} detail")
    for o in outcomes:
        speed = ""
        if o.speed.get("ratio_vs_idiomatic"):
            s = o.speed
            loop = s["speedup_vs_loop"]
            speed = (f"{loop:,.0f}" if loop >= 10 else f"{loop:.1f}") + \
                f"x loop, {s['ratio_vs_idiomatic']:.2f}x id" + \
                    (" SLOW" if s["slow"] else "")
        elif o.speed.get("error"):
            speed = "timing failed"
        detail = o.reason if o.verdict == "flagged" else "; ".join(o.problems) if o.problems else \
            ",".join(o.codes)
        if o.expected_ok is False:
            detail = "EXPECTED REWRITE DISAGREES: " + "; ".join(o.expected_problems) + " | " + detail
        if o.program_error:
            detail = o.program_error + " | " + detail
        kind = "vec" if o.kind == "vectorizable" else "stay"
        print(f"{o.name:<38} {kind:<5} {o.family:<22} {o.verdict:<8} {speed:<29} {_clip(detail, 100)}")
        if verbose:
            for m in o.messages:
                print(f"    {m}")
            for p in o.problems:
                print(f"    problem: {p}")
    v, s = summary["vectorizable"], summary["must-stay-loop"]
    print()
    print(f"vectorizable: {v['cases']}  rewritten correctly {v['correct']} ({100 * (v['rewrite_rate'] or 0):.0f}%)  "
          f"WRONG {v['WRONG']}  flagged without a fix {v['flagged']}  silent {v['silent']}  crash {v['crash']}")
    print(f"must-stay-loop: {s['cases']}  fixed (WRONG) {s['fixed (WRONG)']}  flagged {s['flagged']}  "
          f"silent {s['silent']}  crash {s['crash']}")
    print("per family (vectorizable): " + ", ".join(
        f"{fam} {row['correct']}/{row['cases']}" + (f" ({row['flagged']} flagged)" if row["flagged"] else "")
        for fam, row in summary["families"].items()))
    if summary["tags"]:
        print("per tag (vectorizable): " + ", ".join(f"{t} {r['correct']}/{r['cases']}"
                                                     for t, r in summary["tags"].items()))
    if summary["slow_rewrites"]:
        print(f"rewrites slower than {SLOW_RATIO}x the idiomatic form: {', '.join(summary['slow_rewrites'])}")
    if summary["expected_disagrees"] or summary["programs_raising"]:
        print(f"SET ERRORS: expected rewrite disagrees: {summary['expected_disagrees']}; "
              f"programs raising: {summary['programs_raising']}")


# -- the corpus census ------------------------------------------------------------------------------------
_TENSOR_ATTRS = frozenset(
    "item sum mean norm numel view reshape float long int bool dot cpu cuda tolist argmax argmin max min abs "
    "clone to unsqueeze squeeze t exp log pow sqrt softmax detach fill_ copy_ zero_ add_ mul_ nonzero "
    "masked_fill std var any all byte half shape ndim dtype".split())
_TORCH_ROOTS = frozenset({"torch", "F", "einops", "rearrange", "reduce"})
_CHUNKING = frozenset({"unbind", "split", "chunk", "tolist", "t"})
_BUILDERS = frozenset({"stack", "cat", "tensor", "as_tensor", "FloatTensor", "LongTensor", "Tensor", "concat",
                       "concatenate", "vstack", "hstack"})
_NOT_ELEMENT_LOOPS = re.compile(r"epoch|loader|\bstep|steps\b|iters\b|max_new_tokens|num_batches", re.I)


def _names(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _root(node: ast.AST) -> Optional[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


_LIST_MAKERS = re.compile(r"(^|\.)(_foreach_\w*|split|chunk|unbind|tolist|parameters|meshgrid|broadcast_tensors|"
                          r"named_\w+|state_dict|items|keys|values|children|modules)$")


def _tensorish_assigned(tree: ast.Module) -> set:
    """Names every assignment of which (in the whole file) is a torch call or a tensor method that returns
    one tensor, and parameters annotated as one tensor: a cheap type guess where the facts know nothing."""
    good, bad = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            names = {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            value, single = node.value, all(isinstance(t, ast.Name) for t in node.targets)
            f = value.func if isinstance(value, ast.Call) else None
            listy = isinstance(value, (ast.List, ast.ListComp, ast.Tuple, ast.Dict, ast.DictComp, ast.GeneratorExp)) \
                or not single or (f is not None and _LIST_MAKERS.search(ast.unparse(f)))
            tensor = f is not None and not listy and (
                _root(f) == "torch" or (isinstance(f, ast.Attribute) and f.attr in _TENSOR_ATTRS))
            if listy:
                bad.update(names)
            elif tensor:
                good.update(names)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.comprehension, ast.With)):
            target = getattr(node, "target", None)
            if target is not None:
                bad.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.arg) and node.annotation is not None:
            text = ast.unparse(node.annotation)
            if re.fullmatch(r"(torch\.)?Tensor|(Float|Int|Bool|Shaped)\[.*\]", text):
                good.add(node.arg)
            else:
                bad.add(node.arg)
    return good - bad


def find_candidates(text: str, path: str, facts=None) -> list[dict]:
    """Loops and comprehensions that walk tensor elements or indices (a recall-oriented guess: the census
    file says, by hand, which are real). Each: line, kind of evidence, a one-line summary."""
    from torchwise.analysis.values import TensorValue
    tree = ast.parse(text)
    lines = text.splitlines()
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    tensorish = _tensorish_assigned(tree)

    def is_tensor(node) -> bool:
        if facts is not None and isinstance(facts.value(node), TensorValue):
            return True
        return isinstance(node, ast.Name) and node.id in tensorish

    def tensor_iterable(it) -> Optional[str]:
        if is_tensor(it):
            return "over a tensor"
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute):
            if it.func.attr in _CHUNKING and (_root(it.func) == "torch" or is_tensor(it.func.value)):
                return f"over .{it.func.attr}()"
            if _root(it.func) == "torch" and it.func.attr in ("linspace", "arange", "unbind", "split", "chunk"):
                return f"over torch.{it.func.attr}()"
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) \
                and it.func.id in ("zip", "enumerate", "reversed"):
            for a in it.args:
                why = tensor_iterable(a)
                if why:
                    return f"{it.func.id} {why}"
        if isinstance(it, ast.Subscript) and is_tensor(it.value):
            return "over a tensor slice"
        return None

    def indexed(body: list, var: set) -> Optional[str]:
        for b in body:
            for s in ast.walk(b):
                if not (isinstance(s, ast.Subscript) and var & _names(s.slice)):
                    continue
                p = parents.get(s)
                if is_tensor(s.value):
                    return f"indexes {ast.unparse(s)[:40]}"
                if isinstance(s.slice, ast.Tuple) and len(s.slice.elts) >= 2:
                    return f"indexes {ast.unparse(s)[:40]}"
                if isinstance(p, ast.Attribute) and p.value is s and p.attr in _TENSOR_ATTRS:
                    return f"indexes {ast.unparse(s)[:40]}.{p.attr}"
                if isinstance(p, ast.Call) and s in p.args and _root(p.func) in _TORCH_ROOTS:
                    return f"{ast.unparse(p.func)}({ast.unparse(s)[:30]})"
        return None

    found = []
    for node in ast.walk(tree):
        evidence, line = None, getattr(node, "lineno", None)
        if isinstance(node, ast.For):
            if _NOT_ELEMENT_LOOPS.search(ast.unparse(node.iter) + " " + ast.unparse(node.target)):
                continue
            evidence = tensor_iterable(node.iter)
            if evidence is None and isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name) \
                    and node.iter.func.id in ("range", "enumerate", "zip"):
                evidence = indexed(node.body, _names(node.target))
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            gen = node.generators[0]
            evidence = tensor_iterable(gen.iter)
            if evidence is None:
                evidence = indexed([node.elt] + gen.ifs, _names(gen.target))
            parent = parents.get(node)
            if evidence is None and isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) \
                    and parent.func.attr in _BUILDERS and _root(parent.func) == "torch" \
                    and not re.match(r"_$", ast.unparse(gen.target)):
                evidence = f"torch.{parent.func.attr} of a comprehension"
            line = node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("sum", "max", "min", "any", "all", "map") and node.args:
            arg = node.args[-1] if node.func.id == "map" else node.args[0]
            if is_tensor(arg):
                evidence = f"{node.func.id}() of a tensor"
        if evidence:
            found.append({"file": path, "line": line, "evidence": evidence,
                          "summary": lines[line - 1].strip()[:100]})
    # one entry per line (a loop and the comprehension on its header are the same candidate)
    unique = {}
    for c in sorted(found, key=lambda c: c["line"]):
        unique.setdefault(c["line"], c)
    return list(unique.values())


def verdict_at(findings, line: int, end_line: int) -> tuple[str, str]:
    """torchwise's verdict on the candidate starting at 1-based ``line`` (a finding whose span starts
    within the candidate's first line ... last line)."""
    hits = [f for f in findings if line <= f.span.start.line + 1 <= end_line]
    if not hits:
        return "silent", ""
    if any(f.fixes for f in hits):
        return "rewritten", hits[0].message
    return "flagged", _reason(hits[0].message)


def _end_line(tree: ast.Module, line: int) -> int:
    """The last line of the header (a for loop) or of the expression (a comprehension) at ``line``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and node.lineno == line:
            return node.iter.end_lineno
    ends = [n.end_lineno for n in ast.walk(tree)
            if isinstance(n, (ast.ListComp, ast.GeneratorExp, ast.Call)) and n.lineno == line]
    return max(ends) if ends else line


def corpus_census(corpus: Path, census_file: Path) -> dict:
    census = json.loads(census_file.read_text()) if census_file.exists() else {"candidates": [], "excluded": []}
    reviewed = {(c["file"], c["line"]): c for c in census["candidates"]}
    excluded = {(c["file"], c["line"]) for c in census.get("excluded", [])}
    files = sorted({c["file"] for c in census["candidates"]} |
                   {str(p.relative_to(corpus)) for p in corpus.rglob("*.py")})
    rows, unreviewed, crashes = [], [], []
    for rel in files:
        path = corpus / rel
        if not path.exists():
            continue
        text = path.read_text(errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        try:
            analysis = analyze(text, str(path))
            findings = [f for f in analysis.findings if f.code in LOOP_CODES]
            facts = analysis.facts
        except Exception:  # noqa: BLE001
            crashes.append({"file": rel, "error": traceback.format_exc(limit=-2)})
            findings, facts = [], None
        guessed = {c["line"]: c for c in find_candidates(text, rel, facts)}
        flagged_lines = {f.span.start.line + 1 for f in findings}
        for line in sorted(set(guessed) | {ln for (f, ln) in reviewed if f == rel} | flagged_lines):
            key = (rel, line)
            if key in excluded and key not in reviewed:
                continue
            verdict, message = verdict_at(findings, line, _end_line(tree, line))
            row = dict(reviewed.get(key) or {"file": rel, "line": line, "kind": "unreviewed",
                                             "summary": (guessed.get(line) or {}).get("summary")
                                             or text.splitlines()[line - 1].strip()[:100]})
            row["torchwise"] = verdict
            row["torchwise_message"] = message
            row["found_by_finder"] = line in guessed
            (rows if key in reviewed else unreviewed).append(row)
    return {"rows": rows, "unreviewed": unreviewed, "crashes": crashes}


_DECIDED_VERDICT = {"rewrite": "rewritten", "flag": "flagged", "silent": "silent"}


def census_differences(rows: list) -> list:
    """The reviewed loops where torchwise does not do what the census decided (``decision``; a loop that must
    stay a loop: silent)."""
    return [r for r in rows if r["kind"] in ("vectorizable", "must-stay-loop")
            and r["torchwise"] != _DECIDED_VERDICT[r.get("decision", "silent")]]


def print_census(result: dict) -> None:
    rows = result["rows"]
    print(f"{'file:line':<58} {'kind':<15} {'torchwise':<10} summary")
    for r in rows:
        print(f"{r['file'] + ':' + str(r['line']):<58} {r['kind']:<15} {r['torchwise']:<10} {_clip(r['summary'], 70)}")
    vec = [r for r in rows if r["kind"] == "vectorizable"]
    stay = [r for r in rows if r["kind"] == "must-stay-loop"]
    print()
    print(f"candidates reviewed: {len(rows)}  vectorizable {len(vec)}  must stay a loop {len(stay)}")
    for group, label in ((vec, "vectorizable"), (stay, "must-stay-loop")):
        counts = {v: sum(r["torchwise"] == v for r in group) for v in ("rewritten", "flagged", "silent")}
        print(f"  {label}: " + ", ".join(f"{k} {n}" for k, n in counts.items()))
    decided = {d: sum(r.get("decision") == d for r in vec) for d in ("rewrite", "flag", "silent")}
    print("  decided (vectorizable): " + ", ".join(f"{k} {n}" for k, n in decided.items()))
    for r in census_differences(rows):
        print(f"  DIFFERS {r['file']}:{r['line']}: decided {r.get('decision', 'silent')}, torchwise {r['torchwise']}"
              f"  ({_clip(r.get('torchwise_message') or '', 80)})")
    if result["unreviewed"]:
        print(f"\nnot in the census (found by the finder or flagged by torchwise; review and add to "
              f"{CENSUS_FILE.relative_to(ROOT)}): {len(result['unreviewed'])}")
        for r in result["unreviewed"]:
            print(f"  {r['file']}:{r['line']}  torchwise {r['torchwise']}  {_clip(r['summary'], 80)}")
    for c in result["crashes"]:
        print(f"ANALYSIS CRASHED on {c['file']}:\n{c['error']}")


# -- main -------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", default="*", help="a case name or a glob")
    parser.add_argument("--cases", type=Path, default=CASES_DIR, metavar="DIR",
                        help="a folder of cases in the same form (default: the development set)")
    parser.add_argument("--json", metavar="FILE", help="write every figure as JSON ('-': stdout)")
    parser.add_argument("--no-speed", action="store_true", help="skip the timings")
    parser.add_argument("--min-run-time", type=float, default=0.2, help="seconds per timing (default 0.2)")
    parser.add_argument("--corpus", nargs="?", const=str(CORPUS_DIR), metavar="DIR",
                        help="list the tensor loops of the corpus with torchwise's verdict")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every message and problem")
    args = parser.parse_args(argv)

    if args.corpus:
        result = corpus_census(Path(args.corpus), CENSUS_FILE)
        if args.json != "-":
            print_census(result)
        if args.json:
            _write_json(args.json, result)
        return 1 if result["crashes"] else 0

    cases = load_cases(args.case, args.cases)
    if not cases:
        print(f"no case matches {args.case!r}", file=sys.stderr)
        return 2
    outcomes = []
    for case in cases:
        out = evaluate(case)
        if not args.no_speed:
            measure_speed(case, out, args.min_run_time)
        outcomes.append(out)
        if len(cases) == 1 and args.json != "-":
            _print_one(case, out)
    summary = totals(outcomes)
    if args.json != "-":
        print_table(outcomes, summary, args.verbose)
    if args.json:
        _write_json(args.json, {"totals": summary, "cases": [asdict(o) for o in outcomes]})
    bad = any(o.bad for o in outcomes) or summary["expected_disagrees"] or summary["programs_raising"]
    return 1 if bad else 0


def _print_one(case: Case, out: Outcome) -> None:
    print(f"== {case.name} ({case.kind}, {case.family}) {case.path}")
    if case.origin:
        print(f"origin: {case.origin}")
    if case.why:
        print(f"why it stays a loop: {case.why}")
    print("--- program ---\n" + case.program)
    if case.expected:
        print("--- idiomatic ---\n" + case.expected)
    for m in out.messages:
        print(f"torchwise: {m}")
    if out.fixed:
        print("--- torchwise's rewrite ---\n" + out.fixed)
    print()


def _write_json(target: str, data) -> None:
    text = json.dumps(data, indent=1, default=str)
    if target == "-":
        print(text)
    else:
        Path(target).write_text(text)


if __name__ == "__main__":
    sys.exit(main())
