"""How much the facts engine knows on real code: a report over the corpus (a script, not a test).

    .venv/bin/python benchmarks/fact_coverage.py [--corpus PATH] [--json] [--top N] [--timeout S] [--names TEXT]

The corpus is ``--corpus``, else ``$TORCHWISE_CORPUS``, else ``<repo>/../shared/corpus``. Every
``.py`` file under it is analysed once with ``torchwise.engine.analyze(text, path)``; a file that does
not parse, or whose analysis raises or takes longer than ``--timeout`` seconds, is counted and named in
the report, never fatal. Three measures:

1. **Forward coverage.** Files: nanoGPT ``model.py``, minGPT ``mingpt/model.py``, every file of
   ``vit-pytorch/vit_pytorch/``. Names: every ``ast.Name`` assigned in a method named ``forward`` of a
   class (not in functions nested in it): targets of ``=`` (plain, tuple / list / starred unpacking),
   annotated assignment with a value, ``+=`` and co., ``for``, ``with ... as`` and the walrus;
   comprehension variables are not counted. For each group and each file: the share of those names
   whose fact is a ``TensorValue`` with a known shape (a known rank), the share on which hover
   (``Explainer.hover`` at the name) answers with a tensor description (``Tensor[...]``), and the
   share that is *known* whatever it is (``is_known``: a tensor with a known rank, an int with a
   value, symbolic or not, a list of known length, a device, a layer, ``None``...). Names that are not
   tensors at runtime count against the first two: sizes (``B, T, C = x.size()``), devices, the
   ``block`` of ``for block in self.h``, a ``loss = None``, ``qkv = x.chunk(3, dim=-1)`` (a tuple).
   Run for real (tests/realmodels), they are 8 of the 37 names of nanoGPT's forwards, 8 of 31 in minGPT,
   5 of 24 in vit-pytorch's vit.py, 10 of 32 in deepvit.py, 11 of 31 in cait.py: tensor+rank tops out
   at 65-79% there, while "known" can reach 100%.
2. **Op-call coverage**, over the whole corpus. An *op call* is an ``ast.Call`` whose callee

   - resolves (through imports and aliases, ``Scope.qualname``) to ``torch.*`` (``torch.nn.functional``
     included) or ``einops.*``, except the namespaces of ``NOT_OPS`` (optimizers, data loading, CUDA
     and backend settings, seeding, saving, grad-mode context managers: nothing there takes or makes
     a tensor's facts);
   - or is ``receiver.method`` with a receiver the engine knows as a ``TensorValue``;
   - or is a value the engine knows as a ``ModuleValue`` (calling a layer).

   Its *inputs* are the receiver (for a tensor method) and every argument, positional and keyword.
   The inputs are *known* when each one is known: a fact other than ``None`` (a ``TensorValue`` or
   ``NdarrayValue`` only with a known shape; a ``SeqValue`` only with known items, each known in turn;
   an int of unknown value counts as known: it is not a tensor), or a literal (a constant, ``-1``, an
   f-string, a lambda), or a list / tuple display of known elements. ``*args`` and ``**kwargs`` are
   never known. An unknown argument could be a tensor, so a call with one is left out.
   The *result* is known when the call's own fact is not ``None`` (and, for a ``TensorValue``, has a
   known shape). Reported: the calls with known inputs, the share of them with a known result, and
   the ops whose result stays unknown from known inputs, most frequent first, with example places.
   Op names: ``torch.cat``, ``F.softmax`` (``torch.nn.functional``), ``new nn.Linear`` (building a
   layer), ``Tensor.view`` (a method of a tensor), ``nn.Linear()`` (calling a layer; a layer class
   defined in the same file shows as ``Block()``), ``einops.rearrange``, ``new einops.Rearrange``.
3. **Names in functions.** Every name assigned (as in 1) in any function of the corpus: the share the
   engine knows as a tensor, and as a tensor with a known rank.

``--json`` prints every figure (and every op of the table, with all its places) as JSON instead;
``--names TEXT`` lists each forward name of the files whose path contains TEXT, with its fact. The
exit status is 0, or 2 when there is no corpus.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import signal
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from torchwise.analysis.values import ModuleValue, NdarrayValue, ScalarValue, SeqValue, SymbolicValue, TensorValue
from torchwise.engine import analyze
from torchwise.explain import Explainer

REPO = Path(__file__).resolve().parent.parent

FORWARD_GROUPS = {"nanoGPT": "nanoGPT/model.py", "minGPT": "minGPT/mingpt/model.py",
                  "vit-pytorch": "vit-pytorch/vit_pytorch/"}
TARGET_FORWARD, TARGET_OPS = 0.80, 0.95  # the goals the engine work aims at
TENSOR_HOVER = re.compile(r"(\*\*[^\n]*?\*\*: )?`Tensor\[")  # a tensor's hover, not a list's or a tuple's

# torch namespaces and functions that neither take nor make tensor facts: not op calls.
NOT_OPS = ("torch._", "torch.optim.", "torch.utils.", "torch.distributed.", "torch.multiprocessing.",
           "torch.backends.", "torch.cuda.", "torch.mps.", "torch.npu.", "torch.xpu.", "torch.accelerator.",
           "torch.jit.", "torch.onnx.", "torch.hub.", "torch.profiler.", "torch.fx.", "torch.export.",
           "torch.futures.", "torch.ops.", "torch.library.", "torch.compile", "torch.save", "torch.load",
           "torch.manual_seed", "torch.seed", "torch.Generator", "torch.set_", "torch.get_", "torch.no_grad",
           "torch.enable_grad", "torch.inference_mode", "torch.autocast", "torch.amp.", "torch.is_grad_enabled",
           "torch.device")
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def default_corpus() -> Path:
    configured = os.environ.get("TORCHWISE_CORPUS")
    return Path(configured) if configured else REPO.parent / "shared" / "corpus"


# -- which names, which calls ---------------------------------------------------------------------------------------
def assigned_names(function: ast.AST) -> list[ast.Name]:
    """The names ``function`` itself assigns (not those of functions or classes nested in it)."""
    names: list[ast.Name] = []
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assign):
            for target in node.targets:
                names += _target_names(target)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            names += _target_names(node.target)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            names += _target_names(node.target)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            names += _target_names(node.optional_vars)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, SCOPES):
                stack.append(child)
    return sorted(names, key=lambda n: (n.lineno, n.col_offset))


def _target_names(target: ast.AST) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _target_names(element)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []  # attributes and subscripts bind no name


def forward_methods(tree: ast.Module) -> list[ast.AST]:
    return [item for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            for item in node.body if isinstance(item, FUNCTIONS) and item.name == "forward"]


def calls_with_scopes(tree: ast.Module, index) -> list:
    """Every call, with the scope its callee is looked up in (decorators, defaults, bases and a
    comprehension's first iterable belong to the scope around)."""
    found = []
    stack = [(tree, index.module_scope)]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, ast.Call):
            found.append((node, scope))
        inner = index.scope_of_node.get(node) if node is not tree else None
        if inner is None:
            stack.extend((child, scope) for child in ast.iter_child_nodes(node))
            continue
        outside = _evaluated_outside(node)
        stack.extend((child, scope if any(child is o for o in outside) else inner)
                     for child in _children_deep(node, outside))
    return found


def _evaluated_outside(node: ast.AST) -> list:
    if isinstance(node, FUNCTIONS):
        args = node.args
        return [*node.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d is not None),
                *([node.returns] if node.returns else []),
                *(a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                  if a is not None and a.annotation is not None)]
    if isinstance(node, ast.Lambda):
        return [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return [node.generators[0].iter]
    return []


def _children_deep(node: ast.AST, outside: list) -> list:
    """The children of a scope node, with the expressions evaluated outside it brought up to the top
    (an annotation sits inside ``arguments``, a first iterable inside a ``comprehension``)."""
    out, stack = [], list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if any(child is o for o in outside):
            out.append(child)
        elif isinstance(child, (ast.arguments, ast.arg, ast.comprehension, ast.keyword)) \
                and any(_contains(child, o) for o in outside):
            stack.extend(ast.iter_child_nodes(child))
        else:
            out.append(child)
    return out


def _contains(node: ast.AST, target: ast.AST) -> bool:
    return any(n is target for n in ast.walk(node))


def op_name(call: ast.Call, scope, values: dict, classes) -> Optional[tuple[str, Optional[ast.AST]]]:
    """(the op's name, the tensor receiver or None) for an op call; None for any other call."""
    try:
        qualname = scope.qualname(call.func)
    except Exception:
        qualname = None
    if qualname is not None and (qualname == "torch" or qualname.startswith("torch.")):
        if qualname.startswith(NOT_OPS):
            return None
        return _torch_name(qualname), None
    if qualname is not None and qualname.startswith("einops."):
        if qualname.startswith("einops.layers."):
            return "new einops." + qualname.rsplit(".", 1)[-1], None
        return "einops." + qualname.rsplit(".", 1)[-1], None
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(values.get(func.value), TensorValue):
        return f"Tensor.{func.attr}", func.value
    callee = values.get(func)
    if isinstance(callee, ModuleValue):
        return (f"{callee.kind}()" if callee.kind in classes else f"nn.{callee.kind}()"), None
    return None


def _torch_name(qualname: str) -> str:
    for prefix, short in (("torch.nn.functional.", "F."), ("torch.Tensor.", "Tensor.")):
        if qualname.startswith(prefix):
            return short + qualname[len(prefix):]
    if qualname.startswith("torch.nn.") and not qualname.startswith("torch.nn.init.") \
            and qualname.rsplit(".", 1)[-1][:1].isupper():
        return "new nn." + qualname.rsplit(".", 1)[-1]
    return qualname.replace("torch.nn.", "nn.", 1) if qualname.startswith("torch.nn.") else qualname


# Calls whose arguments are sizes: a value known only by its name (SymbolicValue) is a known size there.
SIZED = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.randn", "torch.rand", "torch.full",
                   "torch.arange", "torch.randint", "torch.linspace", "torch.eye", "Tensor.view", "Tensor.reshape",
                   "Tensor.expand", "Tensor.repeat", "Tensor.new_zeros", "Tensor.new_ones", "Tensor.new_empty"})


def known_input(node: ast.AST, values: dict, sizes: bool = False) -> bool:
    """``sizes``: the call reads its arguments as sizes (a layer built, a factory): a value known only by its name
    is a known size there; anywhere else it may be a tensor of unknown facts."""
    if isinstance(node, ast.Starred):
        return False
    fact = values.get(node)
    if isinstance(fact, SymbolicValue):
        return sizes
    if fact is not None:
        return known_value(fact)
    if isinstance(node, (ast.Constant, ast.JoinedStr, ast.Lambda)):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(known_input(e, values, sizes) for e in node.elts)
    return False


def known_value(fact) -> bool:
    if isinstance(fact, (TensorValue, NdarrayValue)):
        return fact.shape is not None
    if isinstance(fact, SeqValue):
        return fact.items is not None and all(i is not None and known_value(i) for i in fact.items)
    return True


def fact_text(fact) -> str:
    if fact is None:
        return "?"
    if isinstance(fact, TensorValue):
        dtype = fact.dtype.short if fact.dtype is not None else "?"
        dims = () if fact.shape is None else tuple(map(str, fact.shape))
        shape = "?" if fact.shape is None else f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"
        return f"Tensor[{dtype}, {shape}]"
    if isinstance(fact, ModuleValue):
        return f"nn.{fact.kind}"
    kind = getattr(fact, "kind", None)
    return type(fact).__name__ + (f"({kind})" if kind else "")


def known_result(fact) -> bool:
    return fact is not None and (not isinstance(fact, TensorValue) or fact.shape is not None)


def is_tensor_with_rank(fact) -> bool:
    return isinstance(fact, TensorValue) and fact.shape is not None


def is_known(fact) -> bool:
    """A tensor with a known rank, an int with a (symbolic) value, a known list, any other value."""
    if isinstance(fact, ScalarValue) and fact.kind == "int":
        return fact.value is not None
    if isinstance(fact, SeqValue):
        return fact.items is not None
    return fact is not None and (not isinstance(fact, TensorValue) or fact.shape is not None)


# -- one file --------------------------------------------------------------------------------------------------------
@dataclass
class FileResult:
    path: str  # relative to the corpus
    lines: int
    seconds: float = 0.0
    failure: Optional[str] = None  # "does not parse: ...", "raises ...", "timed out"
    forward: Optional[dict] = None  # {"names": n, "rank": n, "hover": n} for the forward groups' files
    forward_names: list = field(default_factory=list)  # [(line, col, name, fact text, hover says tensor)]
    calls: Counter = field(default_factory=Counter)  # category -> op calls
    known_inputs: int = 0
    known_results: int = 0
    unknown: list = field(default_factory=list)  # [(op, "path:line:col")] known inputs, unknown result
    names: int = 0  # assigned in functions
    tensors: int = 0
    ranked: int = 0


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def analyse_file(path: Path, relative: str, forward: bool, timeout: float) -> FileResult:
    text = path.read_text(encoding="utf-8", errors="replace")
    result = FileResult(relative, text.count("\n"))
    start = time.perf_counter()
    use_alarm = timeout > 0 and hasattr(signal, "setitimer")
    if use_alarm:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        analysis = analyze(text, str(path))
        if analysis.source.tree is None:
            error = analysis.parse_error
            result.failure = f"does not parse: {error.message} (line {error.position.line + 1})" if error \
                else "does not parse"
        elif analysis.facts is None:
            result.failure = "no facts (the file turns torchwise off)"
        else:
            _measure(analysis, result, forward)
    except _Timeout:
        result.failure = f"timed out after {timeout:g} s"
    except Exception as error:  # the engine must never crash a report
        result.failure = f"raises {type(error).__name__}: {error}"[:300]
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        result.seconds = time.perf_counter() - start
    return result


def _measure(analysis, result: FileResult, forward: bool) -> None:
    tree, values = analysis.source.tree, analysis.facts.values
    if forward:
        explainer = Explainer(analysis.source, analysis.facts)
        names = [n for method in forward_methods(tree) for n in assigned_names(method)]
        hovered = 0
        for name in names:
            answer = explainer.hover(analysis.source.span(name).start)
            # (the first line: a list or tuple of tensors shows them on the lines below, and is not one)
            tensor = answer is not None and TENSOR_HOVER.match(answer[0]) is not None
            hovered += tensor
            fact = fact_text(values.get(name))
            result.forward_names.append((name.lineno, name.col_offset + 1, name.id, fact, tensor))
        result.forward = {"names": len(names), "rank": sum(is_tensor_with_rank(values.get(n)) for n in names),
                          "hover": hovered, "known": sum(is_known(values.get(n)) for n in names)}
    classes = getattr(analysis.facts, "classes", {}) or {}
    for call, scope in calls_with_scopes(tree, analysis.facts.index):
        named = op_name(call, scope, values, classes)
        if named is None:
            continue
        op, receiver = named
        result.calls[_category(op)] += 1
        inputs = ([receiver] if receiver is not None else []) + list(call.args) + [k.value for k in call.keywords]
        sizes = op.startswith("new ") or op in SIZED
        if any(k.arg is None for k in call.keywords) or not all(known_input(i, values, sizes) for i in inputs):
            continue
        result.known_inputs += 1
        if known_result(values.get(call)):
            result.known_results += 1
        else:
            result.unknown.append((op, f"{result.path}:{call.lineno}:{call.col_offset + 1}"))
    for function in (n for n in ast.walk(tree) if isinstance(n, FUNCTIONS)):
        for name in assigned_names(function):
            fact = values.get(name)
            result.names += 1
            result.tensors += isinstance(fact, TensorValue)
            result.ranked += is_tensor_with_rank(fact)


def _category(op: str) -> str:
    if op.startswith("Tensor."):
        return "tensor methods"
    if op.endswith("()"):
        return "layer calls"
    if op.startswith(("einops.", "new einops.")):
        return "einops"
    return "torch functions"


def forward_group(relative: str) -> Optional[str]:
    for group, where in FORWARD_GROUPS.items():
        if relative == where or where.endswith("/") and relative.startswith(where) and "/" not in relative[len(where):]:
            return group
    return None


# -- the report ------------------------------------------------------------------------------------------------------
def measure(corpus: Path, timeout: float, names_of: str = "") -> dict:
    files = sorted(p for p in corpus.rglob("*.py") if p.is_file())
    started = time.perf_counter()
    results = []
    for path in files:
        relative = path.relative_to(corpus).as_posix()
        results.append(analyse_file(path, relative, forward_group(relative) is not None, timeout))
    seconds = time.perf_counter() - started
    return summarize(corpus, results, seconds, names_of)


def _share(part: int, whole: int) -> Optional[float]:
    return part / whole if whole else None


def summarize(corpus: Path, results: list[FileResult], seconds: float, names_of: str = "") -> dict:
    lines = sum(r.lines for r in results)
    groups = {}
    for group in FORWARD_GROUPS:
        members = [r for r in results if forward_group(r.path) == group and r.forward is not None]
        names = sum(r.forward["names"] for r in members)
        groups[group] = {
            "files": len(members), "names": names,
            "rank": _share(sum(r.forward["rank"] for r in members), names),
            "hover": _share(sum(r.forward["hover"] for r in members), names),
            "known": _share(sum(r.forward["known"] for r in members), names),
            "per_file": {r.path: {"names": r.forward["names"], "rank": _share(r.forward["rank"], r.forward["names"]),
                                  "hover": _share(r.forward["hover"], r.forward["names"]),
                                  "known": _share(r.forward["known"], r.forward["names"]),
                                  **({"each": [dict(zip(("line", "col", "name", "fact", "hover_tensor"), n))
                                               for n in r.forward_names]} if names_of and names_of in r.path else {})}
                         for r in members},
        }
    calls = Counter()
    for r in results:
        calls.update(r.calls)
    known_inputs = sum(r.known_inputs for r in results)
    known_results = sum(r.known_results for r in results)
    unknown = defaultdict(list)
    for r in results:
        for op, where in r.unknown:
            unknown[op].append(where)
    table = [{"op": op, "count": len(places), "places": places}
             for op, places in sorted(unknown.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    names = sum(r.names for r in results)
    return {
        "corpus": str(corpus), "files": len(results), "lines": lines, "seconds": round(seconds, 2),
        "failed": {r.path: r.failure for r in results if r.failure is not None},
        "forward": groups,
        "op_calls": {"calls": sum(calls.values()), "by_category": dict(sorted(calls.items())),
                     "known_inputs": known_inputs, "known_results": known_results,
                     "share": _share(known_results, known_inputs), "unknown_results": table},
        "names_in_functions": {"names": names, "tensor": _share(sum(r.tensors for r in results), names),
                               "tensor_with_rank": _share(sum(r.ranked for r in results), names)},
    }


def _pct(share: Optional[float]) -> str:
    return "   -  " if share is None else f"{100 * share:5.1f}%"


def text_report(report: dict, top: int) -> str:
    out = [f"fact coverage on {report['corpus']}: {report['files']} files, {report['lines']:,} lines, analysed in "
           f"{report['seconds']:.1f} s ({report['lines'] / max(report['seconds'], 1e-9):,.0f} lines/s)"]
    failed = report["failed"]
    out.append(f"{len(failed)} files not analysed" + (":" if failed else ""))
    out += [f"  {path}: {why}" for path, why in failed.items()]

    out.append(f"\n1. forward coverage: names assigned in `forward` methods "
               f"(goal >= {100 * TARGET_FORWARD:.0f}% per group)")
    out.append(f"  {'group':14} {'files':>5} {'names':>6}  {'tensor+rank':>11}  {'hover tensor':>12}  {'known':>6}")
    for group, g in report["forward"].items():
        out.append(f"  {group:14} {g['files']:5} {g['names']:6}  {_pct(g['rank']):>11}  {_pct(g['hover']):>12}"
                   f"  {_pct(g['known'])}")
    out.append("  per file (names, tensor+rank, hover tensor, known):")
    for group, g in report["forward"].items():
        for path, f in g["per_file"].items():
            if f["names"]:
                out.append(f"    {path:60} {f['names']:4}  {_pct(f['rank'])}  {_pct(f['hover'])}  {_pct(f['known'])}")
            for n in f.get("each", ()):
                mark = "+" if n["fact"].startswith("Tensor[") and not n["fact"].endswith(", ?]") else "-"
                out.append(f"      {mark} {n['line']}:{n['col']} {n['name']}: {n['fact']}"
                           + (" (hover: tensor)" if n["hover_tensor"] else ""))

    ops = report["op_calls"]
    categories = ", ".join(f"{k} {v:,}" for k, v in ops["by_category"].items())
    out.append(f"\n2. op calls: {ops['calls']:,} ({categories})")
    out.append(f"  with known inputs: {ops['known_inputs']:,}; result known for {ops['known_results']:,} "
               f"({_pct(ops['share']).strip()}; goal >= {100 * TARGET_OPS:.0f}%)")
    table = ops["unknown_results"]
    out.append(f"  known inputs, unknown result: {sum(row['count'] for row in table):,} calls of {len(table)} ops"
               + (f"; the {min(top, len(table))} most frequent:" if table else ""))
    for row in table[:top]:
        out.append(f"    {row['op']:32} {row['count']:5}  {', '.join(row['places'][:2])}")

    names = report["names_in_functions"]
    out.append(f"\n3. names assigned in functions: {names['names']:,}; known tensors {_pct(names['tensor']).strip()}, "
               f"with known rank {_pct(names['tensor_with_rank']).strip()}")
    return "\n".join(out)


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=None, help="the corpus folder (default: $TORCHWISE_CORPUS, "
                        "else <repo>/../shared/corpus)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--top", type=int, default=20, help="rows of the unknown-result table (text report)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds one file may take (0: no limit)")
    parser.add_argument("--names", default="", metavar="TEXT", help="list each forward name of the files whose "
                        "path contains TEXT, with its fact (e.g. --names nanoGPT/model.py)")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus()
    if not corpus.is_dir():
        print(f"fact_coverage: no corpus at {corpus} (use --corpus or TORCHWISE_CORPUS)", file=sys.stderr)
        return 2
    report = measure(corpus, args.timeout, args.names)
    print(json.dumps(report, indent=1) if args.json else text_report(report, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
