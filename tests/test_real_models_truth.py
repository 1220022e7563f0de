"""The engine's facts on real models, checked against the models run for real: no fact may be wrong.

For each model of ``realmodels.catalogue`` (nanoGPT, minGPT, vit-pytorch models, pytorch/examples
models; all from the read-only corpus, imported unchanged from their files):

1. the engine analyses the file's text (``analyze(text, path)``); ``realmodels.sites`` keeps every
   name it states a checkable fact about: assignment targets of every kind, uses, parameters;
2. the model is built with a tiny config and run on tiny CPU inputs under ``realmodels.recorder``,
   which traces the file's code instruction by instruction and reads, in every call, the value at
   each of those names each time it runs (a target right after its store, a use right before its load);
3. ``realmodels.checking`` compares: known ranks, int dims, dtypes, devices, int values and lengths
   must equal torch's; a symbol stands for one size per call (per loop iteration for a symbol that
   appears only inside a loop), and composite dims (``3*n_embd``) must evaluate to the runtime size.

Any disagreement fails the test, with the file, line, name, both facts and the check that failed.
What was compared is printed per model and kept in ``SUMMARY`` (model -> counts).
``test_checker_*`` prove the recorder and the checker themselves on a small module of our own, with
hand-made facts, right and wrong.

One model, verbosely (every observation, every symbol binding)::

    .venv/bin/python tests/test_real_models_truth.py nanogpt
    .venv/bin/python tests/test_real_models_truth.py            # all models: the summary table
    .venv/bin/python tests/test_real_models_truth.py --list

The corpus is ``$TORCHWISE_CORPUS``, else ``<repo>/../shared/corpus``; without it the tests skip.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).parent))
from realmodels.catalogue import MODELS, RealModel, quietly  # noqa: E402
from realmodels.checking import COUNTED, Checker  # noqa: E402
from realmodels.facts import SymbolicValue  # noqa: E402
from realmodels.loading import corpus_root, imported  # noqa: E402
from realmodels.recorder import Recorder  # noqa: E402
from realmodels.sites import find_sites  # noqa: E402

from torchwise.analysis import dims  # noqa: E402
from torchwise.analysis.dims import Sym  # noqa: E402
from torchwise.analysis.dtypes import DType  # noqa: E402
from torchwise.analysis.values import ScalarValue, SeqValue, TensorValue  # noqa: E402
from torchwise.engine import analyze  # noqa: E402

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="the recorder needs co_positions (Python 3.11+)")

SUMMARY: dict = {}  # model name -> {"sites": n, "observations": n, "ranks": n, ..., "wrong": n}


def check_model(model: RealModel, corpus: Path, verbose: bool = False) -> Checker:
    """Analyse the model's file, run the model under the recorder, compare."""
    path = corpus / model.file
    analysis = analyze(path.read_text(encoding="utf-8"), str(path))
    facts = analysis.facts.values if analysis.facts is not None else {}
    sites = find_sites(analysis.source.tree, facts)
    packages = {name: corpus / folder for name, folder in model.packages}
    recorder = Recorder(str(path), sites)
    with recorder:  # the module's own code (class bodies) runs at import
        with imported(path, packages, model.stubs) as module:
            quietly(model.run, module)
    checker = Checker(model.file, verbose)
    checker.check(recorder.frames)
    checker.counts["sites"] = len(sites)
    checker.counts["sites run"] = len(checker.sites_seen)
    SUMMARY[model.name] = {key: checker.counts[key] for key in ("sites", "sites run", "observations", *COUNTED)}
    SUMMARY[model.name]["wrong"] = sum(p.times for p in checker.problems.values())
    SUMMARY[model.name]["fwd tensors"] = len(checker.forward_tensors)
    SUMMARY[model.name]["fwd known"] = len(checker.forward_known)
    return checker


def summary_line(name: str) -> str:
    counts = SUMMARY[name]
    return f"{name}: " + ", ".join(f"{counts[key]} {key}" for key in ("sites", "sites run", "observations",
                                                                      *COUNTED, "wrong"))


def summary_table() -> str:
    # fwd tensors: names a `forward` assigns that held a tensor when the model ran; fwd known: those the engine
    # knows as a tensor of known rank (the forward coverage, over the tensors the code really makes).
    columns = ("sites", "sites run", "observations", *COUNTED, "wrong", "fwd tensors", "fwd known")
    width = max(map(len, SUMMARY), default=5)
    lines = [f"{'model':{width}}  " + "  ".join(f"{c:>12}" for c in columns)]
    for name, counts in SUMMARY.items():
        lines.append(f"{name:{width}}  " + "  ".join(f"{counts[c]:>12}" for c in columns))
    totals = {c: sum(counts[c] for counts in SUMMARY.values()) for c in columns}
    lines.append(f"{'total':{width}}  " + "  ".join(f"{totals[c]:>12}" for c in columns))
    if totals["fwd tensors"]:
        lines.append(f"forward coverage: {totals['fwd known']} of {totals['fwd tensors']} tensor names "
                     f"({100 * totals['fwd known'] / totals['fwd tensors']:.1f}%)")
    return "\n".join(lines)


@pytest.fixture(scope="module", autouse=True)
def _print_summary():
    yield
    if SUMMARY:
        print("\nfacts compared with torch on real models:\n" + summary_table())


@pytest.fixture(scope="module")
def corpus() -> Path:
    root = corpus_root()
    if root is None:
        pytest.skip("the corpus is not there (set TORCHWISE_CORPUS, or put it at <repo>/../shared/corpus)")
    return root


@pytest.mark.parametrize("model", MODELS, ids=[m.name for m in MODELS])
def test_engine_facts_hold_on_real_model(model: RealModel, corpus: Path):
    for needed in model.needs:
        pytest.importorskip(needed)
    if not (corpus / model.file).is_file():
        pytest.skip(f"{model.file} is not in the corpus")
    checker = check_model(model, corpus)
    print(summary_line(model.name))
    assert checker.counts["frames"] > 0, f"no code of {model.file} ran under the recorder"
    problems = checker.sorted_problems
    assert not problems, f"{len(problems)} engine facts disagree with torch on {model.file}:\n" + \
        "\n".join(map(str, problems))


# -- the recorder and the checker, on a module of our own with hand-made facts -----------------------------
SAMPLE = '''\
import torch


def grow(x):
    B, T = x.shape
    shape = x.shape
    h = x[:, :T // 2]
    y = x.reshape(B * T)
    y2 = y * 2
    y2 += 1
    for step in range(3):
        z = torch.zeros(step + 1)
        w = z + 1
    while y.shape[0] > 1:
        y = y[::2]
    parts = [p * 2 for p in x.unbind(0)]
    with torch.no_grad() as nothing:
        u = x.t()
    if (v := x.sum(1)) is not None:
        pass
    scale = lambda t: t * 2
    s = scale(x)

    def inner():
        return y2 + 1
    return inner()
'''


def _sample_run(path: Path, facts_for) -> Checker:
    """Analyse nothing: ``facts_for(tree)`` gives the facts; run ``grow`` on two shapes."""
    path.write_text(SAMPLE, encoding="utf-8")
    tree = ast.parse(SAMPLE)
    sites = find_sites(tree, facts_for(tree))
    recorder = Recorder(str(path), sites)
    with imported(path) as module:
        with recorder:
            module.grow(torch.randn(2, 3))
            module.grow(torch.randn(4, 5))
    checker = Checker("sample.py")
    checker.check(recorder.frames)
    return checker


def _names(tree, name: str, ctx=ast.Store) -> list:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ctx)]


def _name(tree, name: str, ctx=ast.Store, nth: int = 0):
    return sorted(_names(tree, name, ctx), key=lambda n: (n.lineno, n.col_offset))[nth]


B, T = Sym.var("B"), Sym.var("T")
F32 = DType.float32


def _right_facts(tree) -> dict:
    """Facts a perfect engine could state about SAMPLE (with symbols where sizes vary)."""
    step_size, head = Sym.fresh("n"), Sym.fresh("n")
    facts = {
        _name(tree, "B"): ScalarValue("int", B), _name(tree, "T"): ScalarValue("int", T),
        _name(tree, "shape"): SeqValue("size", (ScalarValue("int", B), ScalarValue("int", T))),
        _name(tree, "x", ast.Load): TensorValue(F32, (B, T), "cpu"),
        _name(tree, "y"): TensorValue(F32, (B * T,), "cpu"),
        _name(tree, "y2"): TensorValue(F32, (B * T,), "cpu"),
        _name(tree, "y2", nth=1): TensorValue(F32, (B * T,), "cpu"),
        _name(tree, "z"): TensorValue(F32, (step_size,), "cpu"),  # a new size on every iteration
        _name(tree, "w"): TensorValue(F32, (step_size,), "cpu"),
        _name(tree, "y", ast.Load, nth=1): TensorValue(F32, (head,), "cpu"),  # `while y.shape[0] > 1`
        _name(tree, "y", ast.Load, nth=2): TensorValue(F32, (head,), "cpu"),  # `y[::2]`
        _name(tree, "y", nth=1): TensorValue(F32, (Sym.fresh("n"),), "cpu"),
        _name(tree, "p"): TensorValue(F32, (T,), "cpu"),
        _name(tree, "parts"): SeqValue("list", None),  # (a list of unknown items: nothing to check)
        _name(tree, "nothing"): ScalarValue("none"),
        _name(tree, "u"): TensorValue(F32, (T, B), "cpu"),
        _name(tree, "v"): TensorValue(F32, (B,), "cpu"),
        _name(tree, "s"): TensorValue(F32, (B, T), "cpu"),
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.arg == "x":
            facts[node] = TensorValue(F32, (B, T), "cpu")
    return facts


def test_checker_passes_right_facts(tmp_path):
    checker = _sample_run(tmp_path / "sample.py", _right_facts)
    assert not checker.problems, "\n".join(map(str, checker.sorted_problems))
    counts = checker.counts
    assert counts["frames"] >= 4  # grow twice, and the comprehension / lambda / inner calls
    # every site with a fact ran and was compared (targets of every kind, uses, the parameter)
    tree = ast.parse(SAMPLE)
    assert len(checker.sites_seen) == len(find_sites(tree, _right_facts(tree)))
    assert counts["symbolic dims"] > 20 and counts["dtypes"] > 20 and counts["lengths"] >= 2


def test_checker_sees_every_kind_of_target(tmp_path):
    """Every target Name in SAMPLE that ran (plain, tuple, for, augmented, with, walrus, comprehension,
    a variable of a closure) is observed, each time it ran."""
    def everything_a_tensor(tree):
        return {n: TensorValue(device="cpu") for n in ast.walk(tree) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Store)}
    checker = _sample_run(tmp_path / "sample.py", everything_a_tensor)
    seen = {site.name for site in checker.sites_seen}
    assert seen == {"B", "T", "shape", "h", "y", "y2", "step", "z", "w", "p", "parts", "nothing", "u", "v", "scale",
                    "s"}
    kinds = {p.site.name for p in checker.problems.values() if p.check == "kind"}
    assert kinds == {"B", "T", "shape", "step", "parts", "nothing", "scale"}  # not tensors
    per_site = {}
    for p in checker.problems.values():
        per_site[p.site.name] = per_site.get(p.site.name, 0) + p.times
    assert per_site["step"] == 6 and per_site["B"] == 2  # 3 iterations x 2 calls; once per call


WRONG = [  # (name, ctx, nth, wrong fact, the check that must fail)
    ("y", ast.Store, 0, TensorValue(DType.float64, (B * T,), "cpu"), "dtype"),
    ("y", ast.Store, 0, TensorValue(F32, (B * T,), "cuda"), "device"),
    ("y", ast.Store, 0, TensorValue(F32, (B, T), "cpu"), "rank"),
    ("y", ast.Store, 0, TensorValue(F32, (6,), "cpu"), "dim"),  # right for (2, 3), wrong for (4, 5)
    ("y", ast.Store, 0, TensorValue(F32, (B,), "cpu"), "symbol"),  # B is bound by `B, T = x.shape`
    ("y", ast.Store, 0, TensorValue(F32, (B * T + 1,), "cpu"), "composite"),
    ("z", ast.Store, 0, TensorValue(F32, (B,), "cpu"), "symbol"),  # B is the same on every iteration
    ("y", ast.Store, 1, TensorValue(F32, (Sym.var("head"),), "cpu"), "symbol"),  # the loop's head size, not the new
    ("B", ast.Store, 0, TensorValue(F32, (), "cpu"), "kind"),
    ("B", ast.Store, 0, ScalarValue("int", 2), "int"),  # right for the first call only
    ("shape", ast.Store, 0, SeqValue("size", (ScalarValue("int", B),)), "length"),
    ("shape", ast.Store, 0, SeqValue("list", (ScalarValue("int", B), ScalarValue("int", T))), "kind"),
    ("x", ast.Load, 0, TensorValue(F32, (T, B), "cpu"), "symbol"),
]


# Kinds of fact the engine may not have yet (a list known by its element and length, a value known only as a size,
# a quotient symbol): checked when it has them.
NEWER = []
if {"element", "length"} <= set(SeqValue.__dataclass_fields__):
    each_column = SeqValue("list", None, element=TensorValue(F32, (T,), "cpu"), length=B)
    NEWER += [("parts", ast.Store, 0, each_column, None),
              ("parts", ast.Store, 0, SeqValue("list", None, element=TensorValue(F32, (B,), "cpu")), "symbol"),
              ("parts", ast.Store, 0, SeqValue("list", None, length=T), "symbol"),
              ("parts", ast.Store, 0, SeqValue("list", None, length=2), "length")]
if SymbolicValue is not None:
    NEWER += [("T", ast.Store, 0, SymbolicValue(T), None),
              ("y", ast.Store, 0, SymbolicValue(T), None),  # a tensor at runtime: no claim
              ("T", ast.Store, 0, SymbolicValue(B), "symbol"),
              ("T", ast.Store, 0, SymbolicValue(3), "int")]
if hasattr(dims, "floordiv") and hasattr(dims, "rename"):
    NEWER += [("h", ast.Store, 0, TensorValue(F32, (B, dims.floordiv(T, 2)), "cpu"), None),
              ("h", ast.Store, 0, TensorValue(F32, (B, dims.floordiv(T + 1, 2)), "cpu"), "composite")]


@pytest.mark.parametrize("name,ctx,nth,fact,check", NEWER, ids=[f"{w[0]}-{w[4] or 'right'}" for w in NEWER])
def test_checker_on_newer_kinds_of_fact(tmp_path, name, ctx, nth, fact, check):
    def facts_for(tree):
        facts = _right_facts(tree)
        facts[_name(tree, name, ctx, nth)] = fact
        return facts
    checker = _sample_run(tmp_path / "sample.py", facts_for)
    assert {p.check for p in checker.problems.values()} == ({check} if check else set()), \
        "\n".join(map(str, checker.sorted_problems))


@pytest.mark.parametrize("name,ctx,nth,wrong,check", WRONG, ids=[f"{w[0]}{w[2]}-{w[4]}" for w in WRONG])
def test_checker_catches_a_wrong_fact(tmp_path, name, ctx, nth, wrong, check):
    def facts_for(tree):
        facts = _right_facts(tree)
        facts[_name(tree, name, ctx, nth)] = wrong
        if check == "symbol" and name == "y" and nth == 1:  # the loop head's symbol, also on the loads
            for i in (1, 2):
                facts[_name(tree, "y", ast.Load, i)] = TensorValue(F32, (Sym.var("head"),), "cpu")
        return facts
    checker = _sample_run(tmp_path / "sample.py", facts_for)
    assert {p.check for p in checker.problems.values()} == {check}, "\n".join(map(str, checker.sorted_problems))
    for problem in checker.problems.values():
        assert problem.site.name == name and f"sample.py:{problem.site.line}:" in str(problem)


def test_a_symbol_may_differ_between_calls(tmp_path):
    """`B` is 2 in the first call of grow and 4 in the second: no conflict (already in the right facts),
    but a symbol shared by two calls' facts is per call too."""
    checker = _sample_run(tmp_path / "sample.py", _right_facts)
    assert checker.counts["bindings"] >= 2 * 2  # B and T, in each call of grow


# -- one model at a time, verbosely --------------------------------------------------------------------------
def main(argv: list) -> int:
    root = corpus_root()
    if root is None:
        print("no corpus: set TORCHWISE_CORPUS", file=sys.stderr)
        return 2
    if "--list" in argv:
        print("\n".join(m.name for m in MODELS))
        return 0
    chosen = [m for m in MODELS if not argv or any(m.name == a or m.name.endswith("/" + a) for a in argv)]
    if not chosen:
        print(f"no model named {' '.join(argv)}; --list shows them", file=sys.stderr)
        return 2
    wrong = 0
    for model in chosen:
        if any(importlib.util.find_spec(n) is None for n in model.needs):
            print(f"{model.name}: skipped (needs {', '.join(model.needs)})")
            continue
        checker = check_model(model, root, verbose=bool(argv))
        if argv:
            print(f"== {model.name} ({model.file})")
            print("\n".join(checker.log))
        for problem in checker.sorted_problems:
            print("WRONG:", problem)
        wrong += len(checker.problems)
        print(summary_line(model.name))
    print("\n" + summary_table())
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
