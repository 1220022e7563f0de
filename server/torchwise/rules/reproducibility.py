"""TW6xx: reproducibility and measurement. TW601 incomplete seeding, TW602 wall-clock timing of CUDA work."""

from __future__ import annotations

import ast
import builtins
import weakref
from dataclasses import dataclass
from typing import Iterator, Optional

from torchwise.analysis.ops import normalize_device
from torchwise.analysis.scopes import Scope
from torchwise.analysis.values import DeviceValue, ModuleValue, ScalarValue, TensorValue
from torchwise.findings import Edit, Finding, Fix, Position, Severity, Span
from torchwise.rules import edits
from torchwise.rules.base import Context, Invalid, Reach, Rule, Valid
from torchwise.rules.sync import holds, statements

# -- shared: per-file facts, statements -------------------------------------------------------------------------
_CACHE: "weakref.WeakKeyDictionary[Context, dict]" = weakref.WeakKeyDictionary()
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _cache(ctx: Context) -> dict:
    cache = _CACHE.get(ctx)
    if cache is None:
        cache = _CACHE[ctx] = {}
    return cache


def _call_scopes(ctx: Context) -> dict:
    """Every call of the module with its scope (the index lists them all: the inference reads calls)."""
    cache = _cache(ctx)
    if "calls" not in cache:
        cache["calls"] = {node: scope for node, scope in ctx.index.nodes if isinstance(node, ast.Call)}
    return cache["calls"]


def _qualname(ctx: Context, call: ast.Call) -> Optional[str]:
    scope = _call_scopes(ctx).get(call)
    return scope.qualname(call.func) if scope is not None else None


def _statement_of(ctx: Context, node: ast.AST) -> Optional[ast.stmt]:
    """The innermost statement holding ``node``."""
    cache = _cache(ctx)
    if "parents" not in cache:
        owner: dict = {}
        stack: list = [(stmt, stmt) for stmt in ctx.tree.body]
        while stack:
            current, statement = stack.pop()
            owner[current] = statement
            for child in ast.iter_child_nodes(current):
                stack.append((child, child if isinstance(child, ast.stmt) else statement))
        cache["parents"] = owner
    return cache["parents"].get(node)


def _own_line(ctx: Context, stmt: ast.stmt) -> Optional[str]:
    """The indentation of ``stmt`` when it sits alone on its lines (nothing but a comment after it), else None."""
    lines = ctx.source.lines
    first, last = lines[stmt.lineno - 1], lines[stmt.end_lineno - 1]
    start, end = ctx.source.span(stmt).start.col, ctx.source.span(stmt).end.col
    before, after = first[:start], last[end:].strip()
    if before.strip() or (after and not after.startswith("#")):
        return None
    return before


def _indent_unit(ctx: Context) -> str:
    for line in ctx.source.lines:
        stripped = line.lstrip(" \t")
        if stripped.strip() and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "    "


def _insert_after(ctx: Context, stmt: ast.stmt, indent: str, new_lines: list[str]) -> Edit:
    last = ctx.source.lines[stmt.end_lineno - 1]
    if last.endswith(("\n", "\r")):
        at = Position(stmt.end_lineno, 0)
        return Edit(Span(at, at), "".join(f"{indent}{line}\n" for line in new_lines))
    at = Position(stmt.end_lineno - 1, len(last))  # the file's last line, with no line break
    return Edit(Span(at, at), "".join(f"\n{indent}{line}" for line in new_lines))


def _insert_before(stmt: ast.stmt, indent: str, new_lines: list[str]) -> Edit:
    at = Position(stmt.lineno - 1, 0)
    return Edit(Span(at, at), "".join(f"{indent}{line}\n" for line in new_lines))


def _walk_code(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and what it contains, not descending into nested functions, classes or lambdas."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, _NESTED_SCOPES):
                stack.append(child)


# -- TW601 --------------------------------------------------------------------------------------------------------
_TORCH_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})
# These seed torch, numpy and random together.
_SEED_EVERYTHING = frozenset({
    "lightning.seed_everything", "lightning.pytorch.seed_everything", "pytorch_lightning.seed_everything",
    "lightning.fabric.seed_everything", "lightning_fabric.seed_everything",
    "lightning.pytorch.utilities.seed.seed_everything", "pytorch_lightning.utilities.seed.seed_everything",
    "transformers.set_seed", "accelerate.utils.set_seed",
})
# numpy.random functions that do not draw from the global generator.
_NUMPY_NOT_DRAWS = frozenset({
    "seed", "default_rng", "Generator", "RandomState", "SeedSequence", "BitGenerator", "PCG64", "PCG64DXSM", "MT19937",
    "Philox", "SFC64", "get_state", "set_state", "get_bit_generator", "set_bit_generator",
})
_RANDOM_DRAWS = frozenset({
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform", "gauss", "normalvariate",
    "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate", "betavariate", "paretovariate",
    "weibullvariate", "triangular", "getrandbits", "randbytes", "binomialvariate",
})
_NUMPY_SEED_RANGE = range(0, 2 ** 32)


@dataclass
class _Randomness:
    draws: dict  # "numpy" / "random" -> first unseeded draw (qualname, line)
    seeded: set  # "numpy" / "random" seeded somewhere in the file
    everything: bool  # a seed-everything helper is called


def _randomness(ctx: Context) -> _Randomness:
    cache = _cache(ctx)
    if "randomness" in cache:
        return cache["randomness"]
    found = _Randomness({}, set(), False)
    for share in ctx.per_statement("reproducibility.randomness", lambda stmt: _randomness_in(ctx, stmt),
                                   resolved=True):
        if share is None:
            continue
        found.everything |= share.everything
        found.seeded |= share.seeded
        for library, (qualname, call) in share.draws.items():
            _first(found.draws, library, qualname, call)
    found.draws = {library: (qualname, call.lineno) for library, (qualname, call) in found.draws.items()}
    cache["randomness"] = found
    return found


def _randomness_in(ctx: Context, stmt: ast.stmt) -> Optional[_Randomness]:
    """One top-level statement's seeds and draws, its first draw of each library as (qualname, the call); None
    when it has none (most: kept with every statement)."""
    found = _Randomness({}, set(), False)
    for call, scope in ctx.index.parts[stmt].nodes:
        if call.__class__ is not ast.Call:
            continue
        qualname = scope.qualname(call.func)
        if qualname is None:
            continue
        if qualname in _SEED_EVERYTHING:
            found.everything = True
        elif qualname in ("numpy.random.seed", "random.seed"):
            given = call.args[0] if call.args else next((k.value for k in call.keywords), None)
            if given is not None and not (isinstance(given, ast.Constant) and given.value is None):
                found.seeded.add(qualname.split(".")[0])  # `np.random.seed()` reseeds from the OS: no seed
        elif qualname.startswith("numpy.random.") and qualname.count(".") == 2 \
                and qualname.rsplit(".", 1)[1] not in _NUMPY_NOT_DRAWS:
            _first(found.draws, "numpy", qualname, call)
        elif qualname.startswith("random.") and qualname.count(".") == 1 and qualname[7:] in _RANDOM_DRAWS:
            _first(found.draws, "random", qualname, call)
    return found if found.everything or found.seeded or found.draws else None


def _first(draws: dict, library: str, qualname: str, call: ast.Call) -> None:
    if library not in draws or call.lineno < draws[library][1].lineno:
        draws[library] = (qualname, call)


def _pure(node: ast.AST) -> bool:
    """An expression that gives the same value when written twice in a row (a name, `args.seed`, `seed + rank`)."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _pure(node.value)
    if isinstance(node, ast.Subscript):
        return _pure(node.value) and _pure(node.slice)
    if isinstance(node, ast.BinOp):
        return _pure(node.left) and _pure(node.right)
    if isinstance(node, ast.UnaryOp):
        return _pure(node.operand)
    return False


_ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.FloorDiv: lambda a, b: a // b if b else None, ast.Mod: lambda a, b: a % b if b else None,
               ast.Pow: lambda a, b: a ** b if 0 <= b <= 256 else None}


def _constant_int(node: ast.AST) -> Optional[int]:
    """The value of an integer constant expression (`1234`, `-1`, `2**40`), else None."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _constant_int(node.operand)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _constant_int(node.left), _constant_int(node.right)
        return None if left is None or right is None else _ARITHMETIC[type(node.op)](left, right)
    return None


class IncompleteSeeding(Rule):
    call_names = frozenset(name.rsplit(".", 1)[-1] for name in _TORCH_SEEDS)
    reach = Reach.NAMES
    findings_kept = False  # the message names the lines of the draws, anywhere in the file
    code = "TW601"
    name = "incomplete-seeding"
    severity = Severity.INFO
    summary = ("Flags `torch.manual_seed(s)` in a file that also draws from `numpy.random` or `random` "
               "without ever seeding them.")
    why = ("`torch.manual_seed` seeds PyTorch's generators only (the CPU one and every CUDA device's: "
           "`torch.cuda.manual_seed_all` is not needed). numpy's global generator and Python's `random` keep "
           "their own state, seeded from the OS at start-up, so data shuffling, augmentation or sampling done "
           "with them differ on every run, and the run is not reproducible although it looks seeded. "
           "Generators made with a seed (`np.random.default_rng(0)`, `random.Random(0)`) are not affected.")
    fix_summary = ("Insert the missing `np.random.seed(s)` / `random.seed(s)` right after the `torch.manual_seed(s)` "
                   "statement, with the same seed expression (and `import numpy as np` / `import random` when the "
                   "file has no name for them). Offered when the seed is a plain expression (`0`, `seed`, "
                   "`args.seed`, `seed + rank`) and the statement stands on its own line.")
    valid = (
        Valid("import random\nimport numpy as np\nimport torch\n\nSEED = 0\nrandom.seed(SEED)\nnp.random.seed(SEED)\n"
              "torch.manual_seed(SEED)\nidx = np.random.permutation(10)\nrandom.shuffle(list(idx))\n"),
        Valid("import numpy as np\nimport torch\n\ntorch.manual_seed(0)\nrng = np.random.default_rng(0)\n"
              "noise = rng.normal(size=3)\n"),
        Valid("import torch\n\ntorch.manual_seed(0)\nx = torch.randn(3)\n"),
        Valid("import numpy as np\n\nnoise = np.random.randn(3)\n"),  # no torch seed: nothing claims reproducibility
        Valid("import random\nimport torch\nimport lightning as L\n\nL.seed_everything(7)\ntorch.manual_seed(7)\n"
              "print(random.random())\n"),
        Valid("import random\nimport torch\n\n\ndef seed_worker(worker_id):\n    random.seed(worker_id)\n\n\n"
              "torch.manual_seed(0)\nitems = list(range(8))\nrandom.shuffle(items)\n"),
    )
    invalid = (
        Invalid("import numpy as np\nimport torch\n\ntorch.manual_seed(42)\nnoise = np.random.randn(16)\n",
                "import numpy as np\nimport torch\n\ntorch.manual_seed(42)\nnp.random.seed(42)\n"
                "noise = np.random.randn(16)\n"),
        Invalid("import random\nimport torch\n\n\ndef set_seed(seed: int):\n"
                "    torch.manual_seed(seed)  # all devices\n"
                "\n\ndef augment(img):\n    if random.random() < 0.5:\n        img = img.flip(-1)\n    return img\n",
                "import random\nimport torch\n\n\ndef set_seed(seed: int):\n"
                "    torch.manual_seed(seed)  # all devices\n"
                "    random.seed(seed)\n"
                "\n\ndef augment(img):\n    if random.random() < 0.5:\n        img = img.flip(-1)\n    return img\n"),
        Invalid("import argparse\nimport random\nimport numpy\nimport torch as T\n\nargs = argparse.Namespace(seed=3)\n"
                "T.manual_seed(args.seed)\nperm = numpy.random.permutation(100)\nrandom.shuffle(perm)\n",
                "import argparse\nimport random\nimport numpy\nimport torch as T\n\nargs = argparse.Namespace(seed=3)\n"
                "T.manual_seed(args.seed)\nnumpy.random.seed(args.seed)\nrandom.seed(args.seed)\n"
                "perm = numpy.random.permutation(100)\nrandom.shuffle(perm)\n"),
        Invalid("\"\"\"Sampling demo.\"\"\"\nimport torch\nfrom numpy.random import choice\n\ntorch.manual_seed(0)\n"
                "picked = choice(10, size=3)\n",
                "\"\"\"Sampling demo.\"\"\"\nimport numpy as np\nimport torch\nfrom numpy.random import choice\n\n"
                "torch.manual_seed(0)\nnp.random.seed(0)\npicked = choice(10, size=3)\n"),
        Invalid("import random\nimport torch\nfrom torch.utils.data import Dataset\n\n\nclass Crops(Dataset):\n"
                "    def __getitem__(self, i):\n        return random.randint(0, 31)\n\n\nif __name__ == '__main__':\n"
                "    torch.manual_seed(1234)\n    ds = Crops()\n",
                "import random\nimport torch\nfrom torch.utils.data import Dataset\n\n\nclass Crops(Dataset):\n"
                "    def __getitem__(self, i):\n        return random.randint(0, 31)\n\n\nif __name__ == '__main__':\n"
                "    torch.manual_seed(1234)\n    random.seed(1234)\n    ds = Crops()\n"),
        Invalid("import numpy as np\nimport torch\n\nnp.random.seed()  # reseeds from the OS\ntorch.manual_seed(0)\n"
                "idx = np.random.choice(100, 10)\n",
                "import numpy as np\nimport torch\n\nnp.random.seed()  # reseeds from the OS\ntorch.manual_seed(0)\n"
                "np.random.seed(0)\nidx = np.random.choice(100, 10)\n"),
        Invalid("import random\nimport torch\n\ntorch.manual_seed(int.from_bytes(b'ab', 'big'))\n"
                "x = random.random()\n"),  # a seed that is not a plain expression: no fix
    )

    def outside(self, ctx: Context) -> tuple:
        """What the file seeds and draws from, anywhere."""
        randomness = _randomness(ctx)
        return randomness.everything, frozenset(randomness.draws), frozenset(randomness.seeded)

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if scope.qualname(node.func) not in _TORCH_SEEDS:
            return
        randomness = _randomness(ctx)
        if randomness.everything:
            return
        missing = [lib for lib in ("numpy", "random") if lib in randomness.draws and lib not in randomness.seeded]
        if not missing:
            return
        drawn = ", ".join(f"`{randomness.draws[lib][0]}` (line {randomness.draws[lib][1]})" for lib in missing)
        unseeded = " and ".join("`numpy.random`" if lib == "numpy" else "`random`" for lib in missing)
        message = (f"`torch.manual_seed` does not seed {unseeded}, which this file draws from ({drawn}): "
                   "those draws differ on every run")
        fix = self._fix(node, scope, ctx, missing)
        yield self.finding(ctx, node, message, [fix] if fix else [])

    @staticmethod
    def _fix(node: ast.Call, scope: Scope, ctx: Context, missing: list[str]) -> Optional[Fix]:
        seed = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "seed"), None)
        if seed is None or not _pure(seed):
            return None
        value = ctx.value(seed)
        known = _constant_int(seed)
        if known is None and isinstance(value, ScalarValue) and value.kind == "int":
            known = value.value
        if "numpy" in missing and (isinstance(seed, ast.Constant) and type(seed.value) is not int
                                   or isinstance(known, int) and known not in _NUMPY_SEED_RANGE):
            return None  # np.random.seed only takes 0 <= seed < 2**32
        stmt = _statement_of(ctx, node)
        indent = _own_line(ctx, stmt) if stmt is not None else None
        if indent is None:
            return None
        seed_text = ctx.source.text_of(ctx.source.span(seed))
        lines, imports = [], []
        for library in missing:
            spelled = _seed_function(scope, library)
            if spelled is None:
                return None
            function, module_import = spelled
            lines.append(f"{function}({seed_text})")
            if module_import:
                imports.append(module_import)
        shown = " and ".join(f"`{line}`" for line in lines)

        def build():
            added = [edits.import_edit(ctx.tree, module) for module in imports]
            return [*added, _insert_after(ctx, stmt, indent, lines)]
        return Fix(f"Seed them too: insert {shown}", build, preferred=True)


def _seed_function(scope: Scope, library: str) -> Optional[tuple[str, Optional[str]]]:
    """How to call the library's seed function here, and the import to add (None: none needed)."""
    if library == "numpy":
        for alias in scope.aliases_of("numpy.random"):
            return f"{alias}.seed", None
        aliases = list(scope.aliases_of("numpy"))
        if aliases:
            return f"{'np' if 'np' in aliases else aliases[0]}.random.seed", None
        for name, module in (("np", "numpy as np"), ("numpy", "numpy")):
            if not _name_taken(scope, name):
                return f"{name}.random.seed", module
        return None
    aliases = list(scope.aliases_of("random"))
    if aliases:
        return f"{'random' if 'random' in aliases else aliases[0]}.seed", None
    return ("random.seed", "random") if not _name_taken(scope, "random") else None


def _name_taken(scope: Scope, name: str) -> bool:
    """``name`` means something at ``scope`` or anywhere in the module (an added import would clash)."""
    return scope.owner_of(name) is not None or name in scope.module.bindings


# -- TW602 --------------------------------------------------------------------------------------------------------
TIMERS = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns",
                    "time.monotonic_ns", "timeit.default_timer"})
# Reading a value back to the host waits for the work queued before it.
_SYNC_METHODS = frozenset({"synchronize", "item", "cpu", "tolist", "numpy"})
_SYNC_BUILTINS = frozenset({"float", "int", "bool", "print"})
# Methods that read metadata or configure a module: no GPU work.
_NOT_WORK = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "stride", "is_contiguous", "element_size", "data_ptr",
    "get_device", "parameters", "named_parameters", "buffers", "named_buffers", "children", "modules",
    "named_modules", "train", "eval", "state_dict", "zero_grad", "register_buffer", "register_parameter",
    "register_forward_hook", "register_hook", "requires_grad_", "__len__",
})
_GRAD_SCALERS = frozenset({"torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.amp.grad_scaler.GradScaler"})
_CERTAIN, _POSSIBLE = 2, 1
_SIMPLE_END = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)  # an end stamp we can put a line before
_BUILTIN_NAMES = frozenset(vars(builtins))


@dataclass
class _Timing:
    end_stmt: ast.stmt
    certain: bool  # the work is certainly on CUDA (else: on a device that may be CUDA)
    in_loop: bool = False  # a per-step timer: the fix then synchronizes every step


class _Placements:
    """What the file puts on a device that is (certainly or possibly) CUDA: names, `self.<attr>`s."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.mentions_cuda = _mentions_cuda(ctx)
        self.resident: dict = {}  # key -> _CERTAIN / _POSSIBLE
        for node in ast.walk(ctx.tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                            and len(target.elts) == len(node.value.elts):
                        for elt, value in zip(target.elts, node.value.elts):
                            self._place(elt, self.placement(value))
                    else:
                        self._place(target, self.placement(node.value))
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                    and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in ("to", "cuda"):
                self._place(node.value.func.value, self.placement(node.value))  # `model.to(device)`: in place

    def _place(self, target: ast.AST, level: int) -> None:
        key = self.key(target)
        if level and key is not None:
            self.resident[key] = max(level, self.resident.get(key, 0))

    def key(self, node: ast.AST):
        if isinstance(node, ast.Name):
            scope = _name_scopes(self.ctx).get(node)
            owner = scope.owner_of(node.id) if scope is not None else None
            return (id(owner), node.id) if owner is not None else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return ("self", node.attr)
        return None

    def placement(self, expr: ast.AST) -> int:
        """How surely ``expr`` (a call chain) puts its result on CUDA: _CERTAIN, _POSSIBLE or 0."""
        level = 0
        node = expr
        while isinstance(node, ast.Call):
            level = max(level, self.call_placement(node))
            node = node.func.value if isinstance(node.func, ast.Attribute) else None
        return level

    def call_placement(self, call: ast.Call) -> int:
        level = 0
        if isinstance(call.func, ast.Attribute) and _qualname(self.ctx, call) is None:
            if call.func.attr == "cuda":
                return _CERTAIN
            if call.func.attr == "to":
                for arg in [*call.args, *(k.value for k in call.keywords if k.arg == "device")]:
                    level = max(level, self.device_level(arg))
        for keyword in call.keywords:
            if keyword.arg == "device":
                level = max(level, self.device_level(keyword.value))
        return level

    def device_level(self, node: ast.AST) -> int:
        """A device argument: certainly CUDA, possibly CUDA (chosen at run time, in a file that mentions CUDA),
        or not CUDA."""
        value = self.ctx.value(node)
        text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
        if text is None and isinstance(value, ScalarValue) and value.kind == "str":
            text = value.value
        if text is not None:
            device = normalize_device(text)
            return _CERTAIN if device and device.startswith("cuda") else 0
        if isinstance(value, DeviceValue):
            if value.device is not None:
                return _CERTAIN if value.device.startswith("cuda") else 0
            return _POSSIBLE if self.mentions_cuda else 0
        if isinstance(value, TensorValue):
            return _CERTAIN if (value.device or "").startswith("cuda") else 0
        if value is None and self.mentions_cuda and (
                (isinstance(node, ast.Name) and "device" in node.id.lower())
                or (isinstance(node, ast.Attribute) and "device" in node.attr.lower())):
            return _POSSIBLE
        return 0


def _name_scopes(ctx: Context) -> dict:
    """The scope every name is read or bound in."""
    cache = _cache(ctx)
    if "name_scopes" not in cache:
        index = ctx.index
        scopes: dict = {}
        stack = [(ctx.tree, index.module_scope)]
        while stack:
            node, scope = stack.pop()
            if isinstance(node, ast.Name):
                scopes[node] = scope
                continue
            inner = index.scope_of_node.get(node) if node is not ctx.tree else None
            outer_parts = (*getattr(node, "decorator_list", ()), *getattr(node, "bases", ()),
                           getattr(node, "returns", None)) if inner is not None else ()
            for child in ast.iter_child_nodes(node):
                stack.append((child, scope if inner is None or child in outer_parts else inner))
        cache["name_scopes"] = scopes
    return cache["name_scopes"]


def _mentions_cuda(ctx: Context) -> bool:
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("cuda"):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "cuda":
            return True  # `.cuda()`, `torch.cuda.*`
    return False


def _on_cuda(value) -> bool:
    if isinstance(value, TensorValue):
        return (value.device or "").startswith("cuda")
    if isinstance(value, ModuleValue):
        return any((p.device or "").startswith("cuda") for _, p in value.params)
    return False


class _Clock:
    """The state of the GPU queue at a point of a function, as the end stamps see it: the CUDA work queued since
    the last synchronizing call or stamp (0, _POSSIBLE or _CERTAIN), and whether a stamp was taken before on
    every path."""

    __slots__ = ("pending", "stamped")

    def __init__(self, pending: int = 0, stamped: bool = False):
        self.pending, self.stamped = pending, stamped

    def copy(self) -> "_Clock":
        return _Clock(self.pending, self.stamped)

    @staticmethod
    def join(a: "_Clock", b: "_Clock") -> "_Clock":
        # What holds on both paths: an end stamp is flagged only when every path queued work.
        return _Clock(min(a.pending, b.pending), a.stamped and b.stamped)


_JUMPS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


class _Flow:
    """Runs one function (or the module's own code) forward, statement by statement, and records the end stamps
    taken while CUDA work queued since the last synchronization may still be running.

    Loops are run twice: the first iteration starts from the state before the loop, the later ones from the
    state its body ends in. A loop whose body synchronizes counts as synchronized after it (at most one
    iteration's tail is unsynchronized: nothing a whole-loop timer notices).
    """

    def __init__(self, ctx: Context, placements: _Placements, scope: Scope, body: list, local_syncs: set):
        self.ctx, self.placements, self.scope = ctx, placements, scope
        self.local_syncs = local_syncs
        self.code = list(_scope_code(body))  # every node of the function's own code, walked once
        self._syncing: dict = {}  # loop -> whether its body synchronizes
        self.stops = _stop_stamps(ctx, self.code)
        self.derived: dict = {}
        self.training = 0
        self.derived = _derived_names(self)
        self.training = _training_level(self)
        self.found: dict = {}  # end-stamp call -> (its statement, certainly CUDA, inside a loop)
        self.loops = 0

    # -- statements -------------------------------------------------------------------------------------------
    def block(self, stmts: list, clock: _Clock) -> Optional[_Clock]:
        """The state after ``stmts``; None when they always jump away (return, raise, break, continue)."""
        for stmt in stmts:
            clock = self.statement(stmt, clock)
            if clock is None:
                return None
        return clock

    def statement(self, stmt: ast.stmt, clock: _Clock) -> Optional[_Clock]:
        if isinstance(stmt, _NESTED_SCOPES):
            return clock  # runs later, analysed on its own
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            return self.loop(stmt, clock)
        if isinstance(stmt, ast.If):
            clock = self.events(stmt.test, stmt, clock)
            branches = [self.block(stmt.body, clock.copy()), self.block(stmt.orelse, clock.copy())]
            return _join_all(branches)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                clock = self.events(item.context_expr, stmt, clock)
            return self.block(stmt.body, clock)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            after = self.block(stmt.body, clock.copy())
            for handler in stmt.handlers:
                self.block(handler.body, clock.copy())  # for its own stamps; where it ends is not known
            if after is not None:
                after = self.block(stmt.orelse, after)
            return self.block(stmt.finalbody, after) if after is not None and stmt.finalbody else after
        if isinstance(stmt, ast.Match):
            return clock
        clock = self.events(stmt, stmt, clock)
        return None if isinstance(stmt, _JUMPS) else clock

    def loop(self, stmt: ast.AST, clock: _Clock) -> _Clock:
        head = stmt.test if isinstance(stmt, ast.While) else stmt.iter
        clock = self.events(head, stmt, clock)
        self.loops += 1
        first = self.block(stmt.body, clock.copy()) or clock
        later = self.block(stmt.body, first.copy()) or first
        self.loops -= 1
        after = later
        if self.loop_synchronizes(stmt):
            after = _Clock(0, after.stamped)
        return self.block(stmt.orelse, after) or after

    def loop_synchronizes(self, loop: ast.AST) -> bool:
        if loop not in self._syncing:
            self._syncing[loop] = any(isinstance(node, ast.Call) and self.is_sync(node)
                                      for node in _scope_code(loop.body))
        return self._syncing[loop]

    # -- expressions ------------------------------------------------------------------------------------------
    def events(self, node: ast.AST, stmt: ast.stmt, clock: _Clock) -> _Clock:
        """``clock`` after evaluating the expressions of ``node`` (a statement's own, not its nested blocks),
        in evaluation order: a call happens when its arguments are done, at its end."""
        happenings = []
        for inner in _own_expressions(node):
            if isinstance(inner, ast.Call):
                happenings.append(((inner.end_lineno, inner.end_col_offset), inner))
            elif isinstance(inner, ast.BinOp) and self.binop_work(inner):
                happenings.append(((inner.end_lineno, inner.end_col_offset), inner))
        for _, inner in sorted(happenings, key=lambda h: h[0]):
            if isinstance(inner, ast.BinOp):
                clock.pending = max(clock.pending, self.binop_work(inner))
            elif _is_timer(self.ctx, inner):
                if inner in self.stops and clock.stamped and clock.pending and inner not in self.found:
                    self.found[inner] = (stmt, clock.pending == _CERTAIN, self.loops > 0)
                clock.pending, clock.stamped = 0, True
            elif self.is_sync(inner):
                clock.pending = self.after_sync(inner)
            else:
                clock.pending = max(clock.pending, self.call_work(inner))
        return clock

    def is_sync(self, call: ast.Call) -> bool:
        qualname = _qualname(self.ctx, call)
        if qualname is not None:
            return qualname.rsplit(".", 1)[-1] == "synchronize"
        func = call.func
        if isinstance(func, ast.Attribute):
            return func.attr in _SYNC_METHODS or (func.attr == "step" and self._is_grad_scaler(func.value))
        if isinstance(func, ast.Name):
            if func.id in self.local_syncs:
                return True
            if func.id in _SYNC_BUILTINS and call.args and any(self.resident(a) for a in call.args):
                return True
        return False

    def after_sync(self, call: ast.Call) -> int:
        """What is queued right after a synchronizing call: `scaler.step(optimizer)` reads the inf/NaN check back,
        then queues the optimizer's step."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "step":
            return self.training
        return 0

    def _is_grad_scaler(self, node: ast.AST) -> bool:
        """`scaler.step(optimizer)` reads the inf/NaN check back to the host before stepping."""
        scope = _name_scopes(self.ctx).get(node) if isinstance(node, ast.Name) else None
        bound = scope.single_value(node.id) if scope is not None else None
        return bound is not None and isinstance(bound[0], ast.Call) \
            and bound[1].qualname(bound[0].func) in _GRAD_SCALERS

    def resident(self, node: ast.AST) -> int:
        """How surely ``node`` lives on CUDA: known facts, placements, names computed from CUDA work here."""
        if _on_cuda(self.ctx.value(node)):
            return _CERTAIN
        if isinstance(node, ast.Name) and node.id in self.derived:
            return self.derived[node.id]
        if isinstance(node, ast.Subscript):
            return self.resident(node.value)
        if isinstance(node, ast.Call) and not _reads_back(node):
            return self.call_work(node)
        key = self.placements.key(node)
        return self.placements.resident.get(key, 0) if key is not None else 0

    def call_work(self, call: ast.Call) -> int:
        level = self.placements.call_placement(call)
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _NOT_WORK:
            return level
        if isinstance(func, ast.Attribute) and func.attr == "step" and _is_optimizer(func.value):
            return max(level, self.training)  # the optimizer updates the parameters where they live
        level = max(level, self.resident(func) if not isinstance(func, ast.Call) else 0)  # `model(x)`
        if isinstance(func, ast.Attribute):
            level = max(level, self.resident(func.value))  # `x.sum()`, `loss.backward()`
        if _on_cuda(self.ctx.value(call)):
            level = _CERTAIN
        # Tensors passed to torch, to a model or to a function of this file: work on them. Not to builtins
        # (`len`, `print`) nor to a method of something else (`meter.update(acc)`, `losses.append(loss)`): what
        # those do is not known, and mostly it is bookkeeping.
        if self._works_on_arguments(call):
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                level = max(level, self.resident(arg.value if isinstance(arg, ast.Starred) else arg))
        return level

    def _works_on_arguments(self, call: ast.Call) -> bool:
        func = call.func
        if _qualname(self.ctx, call) is not None:
            return _qualname(self.ctx, call).split(".")[0] == "torch"
        if isinstance(func, ast.Name):
            return func.id not in _BUILTIN_NAMES
        if isinstance(func, ast.Attribute):
            return bool(self.resident(func.value)) or (isinstance(func.value, ast.Name) and func.value.id == "self")
        return True

    def binop_work(self, node: ast.BinOp) -> int:
        if _on_cuda(self.ctx.value(node)):
            return _CERTAIN
        return max(self.resident(node.left), self.resident(node.right))


def _scope_code(body: list) -> Iterator[ast.AST]:
    """Every node of a function's own code (not the functions and classes it defines)."""
    for stmt in body:
        if not isinstance(stmt, _NESTED_SCOPES):
            yield from _walk_code(stmt)


def _join_all(clocks: list) -> Optional[_Clock]:
    reached = [c for c in clocks if c is not None]
    if not reached:
        return None
    result = reached[0]
    for other in reached[1:]:
        result = _Clock.join(result, other)
    return result


def _own_expressions(node: ast.AST) -> Iterator[ast.AST]:
    """The expression nodes a statement evaluates itself (not its nested blocks, functions or lambdas)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for field, value in ast.iter_fields(current):
            if field in ("body", "orelse", "finalbody", "handlers", "cases"):
                continue
            children = value if isinstance(value, list) else [value]
            stack.extend(c for c in children if isinstance(c, ast.AST) and not isinstance(c, _NESTED_SCOPES))


def _reads_back(call: ast.Call) -> bool:
    """`.item()`, `.tolist()`, `.cpu()`...: the result is on the host."""
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr in _SYNC_METHODS) or \
        (isinstance(func, ast.Name) and func.id in _SYNC_BUILTINS)


def _is_optimizer(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "optim" in name.lower() or name == "opt"


def _stop_stamps(ctx: Context, code: list) -> set:
    """Timer calls that may end an interval: all but the starts, the stamps whose name is only ever subtracted
    (`t0 = time.time()` ... `time.time() - t0`), or that are subtracted themselves (`deadline - time.time()`)."""
    minuends, subtrahends, assigned, stamps, starts = set(), set(), {}, set(), set()
    for node in code:
        if _is_timer(ctx, node):
            stamps.add(node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            for side, names in ((node.left, minuends), (node.right, subtrahends)):
                if isinstance(side, ast.Name):
                    names.add(side.id)
            if _is_timer(ctx, node.right):
                starts.add(node.right)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None \
                and _is_timer(ctx, node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
    for name, calls in assigned.items():
        if name in subtrahends and name not in minuends:
            starts.update(calls)
    return stamps - starts


def _derived_names(flow: _Flow) -> dict:
    """Names assigned from CUDA work anywhere in the function (`loss = criterion(model(x), y)`), with how surely;
    a read-back (`v = loss.item()`) is on the host."""
    derived = flow.derived
    assignments = [node for node in flow.code
                   if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None]
    for _ in range(3):  # `h = model(x)` then `y = h.sum()`: a few rounds reach the names derived in turn
        changed = False
        for node in assignments:
            value = node.value
            if isinstance(value, ast.Call) and _reads_back(value):
                continue
            level = flow.resident(value) if not isinstance(value, ast.BinOp) else flow.binop_work(value)
            if not level:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and derived.get(name.id, 0) < level:
                        derived[name.id] = level
                        changed = True
        if not changed:
            break
    return derived


def _training_level(flow: _Flow) -> int:
    """How surely the function trains on CUDA: the `.backward()` it calls on CUDA work (the optimizer's step is
    then CUDA work too)."""
    level = 0
    for node in flow.code:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "backward":
            # `loss.backward()`, `scaler.scale(loss).backward()`: the loss it differentiates
            receiver = node.func.value
            level = max([level, flow.resident(receiver),
                         *(flow.resident(n) for n in ast.walk(receiver) if isinstance(n, ast.Name))])
    return level


def _local_syncs(ctx: Context) -> set:
    """Functions of this file whose body synchronizes somewhere (`.item()`, `.cpu()`, `synchronize()`...): a
    call of one waits for the work before it (all but its own tail, which a whole-loop timer never notices)."""
    names = set()
    for stmt in ctx.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in _walk_code(stmt):
                if node is not stmt and isinstance(node, ast.Call) and _syncs_by_itself(ctx, node):
                    names.add(stmt.name)
                    break
    return names


def _syncs_by_itself(ctx: Context, call: ast.Call) -> bool:
    if (_qualname(ctx, call) or "").endswith(".synchronize"):
        return True
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in _SYNC_METHODS and _qualname(ctx, call) is None


def _is_timer(ctx: Context, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _qualname(ctx, node) in TIMERS


def _timed_scopes(ctx: Context) -> Iterator[tuple[Scope, list]]:
    """The module's own code and each function whose own code takes a stamp, with its body."""
    calls = _call_scopes(ctx)
    owners = {id(scope): scope for call, scope in calls.items() if _is_timer(ctx, call)}
    for scope in owners.values():
        node = scope.node
        if isinstance(node, ast.Module):
            yield scope, node.body
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield scope, node.body


def _timings(ctx: Context) -> dict:
    """End-stamp timer call -> _Timing, for stamps taken while CUDA work queued since the last sync may run."""
    cache = _cache(ctx)
    if "timings" in cache:
        return cache["timings"]
    found: dict = {}
    cache["timings"] = found
    scopes = list(_timed_scopes(ctx))
    if not scopes:
        return found
    placements = _Placements(ctx)
    local_syncs = _local_syncs(ctx)
    for scope, body in scopes:
        flow = _Flow(ctx, placements, scope, body, local_syncs)
        if not flow.stops:
            continue
        flow.block(body, _Clock())
        for call, (stmt, certain, in_loop) in flow.found.items():
            if not _spans_synchronized_iterations(flow, body, call):
                found[call] = _Timing(stmt, certain, in_loop)
    return found


def _spans_synchronized_iterations(flow: _Flow, body: list, stop: ast.Call) -> bool:
    """`start = time.time()` before a loop that synchronizes every iteration, `time.time() - start` inside it:
    the interval holds many synchronized iterations, and what one unsynchronized tail adds is noise. A per-step
    timer (`end = time.time()` at the end of each iteration too) is not one."""
    loops = [s for s in statements(body) if isinstance(s, (ast.For, ast.AsyncFor, ast.While)) and holds(s, stop)]
    loop = max(loops, key=lambda s: (s.lineno, s.col_offset)) if loops else None  # the innermost
    if loop is None or not flow.loop_synchronizes(loop):
        return False
    starts = _start_names(flow, body, stop)
    if not starts:
        return False
    # Every assignment of a start (`t0 = time.time()`, `t0 = t1`) counts: one inside the loop restarts the
    # interval every iteration.
    assigned = [node for node in flow.code if isinstance(node, (ast.Assign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id in starts
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    return bool(assigned) and not any(holds(loop, node) for node in assigned)


def _start_names(flow: _Flow, body: list, stop: ast.Call) -> set:
    """The names a stop stamp is measured from: `b` in `time.time() - b`, or in `t1 - b` with `t1 = time.time()`
    (empty when it is anything but plain names)."""
    parent = next((s for s in statements(body) if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is stop),
                  None)
    minuends = {stop}
    if parent is not None:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        minuends = {n for n in flow.code if isinstance(n, ast.Name) and n.id in names}
    starts = set()
    for node in flow.code:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and node.left in minuends:
            if not isinstance(node.right, ast.Name):
                return set()
            starts.add(node.right.id)
    return starts


class UnsynchronizedTiming(Rule):
    call_names = frozenset(name.rsplit(".", 1)[-1] for name in TIMERS)
    code = "TW602"
    name = "unsynchronized-cuda-timing"
    severity = Severity.WARNING
    summary = ("Flags an end stamp (`time.perf_counter()`, `time.time()`, `time.monotonic()`) taken while CUDA work "
               "queued since the last synchronizing call may still be running, per-step timers included.")
    why = ("CUDA kernels run asynchronously: the Python call returns as soon as the kernel is queued. Without "
           "`torch.cuda.synchronize()` (or a read-back such as `.item()`, `.cpu()`, `.tolist()`) before the second "
           "stamp, the timer measures how fast work was *queued*, not how long it took, and the time shows up "
           "later at the next synchronizing call. For benchmarks prefer `torch.cuda.Event(enable_timing=True)` or "
           "`torch.utils.benchmark.Timer`, which synchronize and warm up for you. CUDA work means a tensor or "
           "module known to be on CUDA, `.cuda()`, `device=\"cuda\"`, or something the file moved to a device "
           "variable that can be CUDA; CPU-only code is not flagged. A per-step timer in a training loop "
           "(`t1 = time.time()` right after `optimizer.step()`) is flagged; a timer around a whole loop that "
           "synchronizes every iteration (`loss.item()`) is not: one unsynchronized step is noise there.")
    fix_summary = ("Insert `torch.cuda.synchronize()` on its own line before the end stamp; when the device is "
                   "only possibly CUDA (chosen at run time), guarded by `if torch.cuda.is_available():` so that "
                   "the script still runs without a GPU.")
    valid = (
        Valid("import time\nimport torch\n\nx = torch.randn(1024, 1024, device='cuda')\n"
              "torch.cuda.synchronize()\nt0 = time.perf_counter()\ny = x @ x\ntorch.cuda.synchronize()\n"
              "elapsed = time.perf_counter() - t0\n"),
        Valid("import time\nimport torch\n\nx = torch.randn(512, 512)\nt0 = time.perf_counter()\ny = x @ x\n"
              "elapsed = time.perf_counter() - t0\n"),  # CPU: synchronous
        Valid("import time\nimport torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "model = torch.nn.Linear(64, 64).to(device)\nx = torch.randn(32, 64, device=device)\n"
              "start = time.time()\nloss = model(x).sum()\nprint(f'loss {loss.item():.3f}')\n"
              "print(f'took {time.time() - start:.3f}s')\n"),  # .item() waits for the work
        Valid("import time\nfrom time import perf_counter\n\nstart = perf_counter()\ntotal = sum(range(10 ** 6))\n"
              "print(perf_counter() - start)\n"),
        Valid("import time\nimport torch\n\n\ndef train(model, loader, opt, device):\n"
              "    model.to(device)\n    for epoch in range(3):\n        t0 = time.time()\n"
              "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
              "            loss = torch.nn.functional.cross_entropy(model(x), y)\n"
              "            opt.zero_grad()\n            loss.backward()\n            opt.step()\n"
              "            running = loss.item()\n        print(epoch, time.time() - t0)\n"
              "\n\nif torch.cuda.is_available():\n    print('cuda')\n"),
        Valid("import time\nimport torch\n\nx = torch.randn(256, 256, device='cuda')\nt0 = time.perf_counter()\n"
              "y = (x @ x).cpu()\nt1 = time.perf_counter()\n"),
        Valid("import time\nimport torch\n\ndevice = torch.device('cpu')\nmodel = torch.nn.Linear(10, 10).to(device)\n"
              "x = torch.randn(3, 10, device=device)\nt0 = time.time()\ny = model(x)\nt1 = time.time()\n"),  # CPU
    )
    invalid = (
        Invalid("import time\nimport torch\nimport torch.nn.functional as F\n\n\n"
                "def train(model, loader, optimizer, device):\n    model.to(device)\n    step_times = []\n"
                "    for x, y in loader:\n        t0 = time.perf_counter()\n        x, y = x.to(device), y.to(device)\n"
                "        loss = F.cross_entropy(model(x), y)\n        optimizer.zero_grad()\n        loss.backward()\n"
                "        optimizer.step()\n        step_times.append(time.perf_counter() - t0)\n    return step_times\n"
                "\n\nif __name__ == '__main__':\n    print(torch.cuda.is_available())\n",
                "import time\nimport torch\nimport torch.nn.functional as F\n\n\n"
                "def train(model, loader, optimizer, device):\n    model.to(device)\n    step_times = []\n"
                "    for x, y in loader:\n        t0 = time.perf_counter()\n        x, y = x.to(device), y.to(device)\n"
                "        loss = F.cross_entropy(model(x), y)\n        optimizer.zero_grad()\n        loss.backward()\n"
                "        optimizer.step()\n        if torch.cuda.is_available():\n"
                "            torch.cuda.synchronize()\n"
                "        step_times.append(time.perf_counter() - t0)\n    return step_times\n"
                "\n\nif __name__ == '__main__':\n    print(torch.cuda.is_available())\n"),
        Invalid("import time\nimport torch\n\nx = torch.randn(4096, 4096, device='cuda')\n"
                "t0 = time.perf_counter()\ny = x @ x\nt1 = time.perf_counter()\nprint(f'{t1 - t0:.4f}s')\n",
                "import time\nimport torch\n\nx = torch.randn(4096, 4096, device='cuda')\n"
                "t0 = time.perf_counter()\ny = x @ x\ntorch.cuda.synchronize()\nt1 = time.perf_counter()\n"
                "print(f'{t1 - t0:.4f}s')\n"),
        Invalid("import time\nimport torch\nimport torch.nn as nn\n\n"
                "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                "model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)\n"
                "batch = torch.randn(64, 128).to(device)\n\nwith torch.no_grad():\n    start = time.time()\n"
                "    for _ in range(100):\n        out = model(batch)\n    elapsed = time.time() - start\n",
                "import time\nimport torch\nimport torch.nn as nn\n\n"
                "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                "model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)\n"
                "batch = torch.randn(64, 128).to(device)\n\nwith torch.no_grad():\n    start = time.time()\n"
                "    for _ in range(100):\n        out = model(batch)\n    if torch.cuda.is_available():\n"
                "        torch.cuda.synchronize()\n    elapsed = time.time() - start\n"),
        Invalid("from time import perf_counter\nimport torch as T\n\n\ndef bench(n: int):\n"
                "    a = T.randn(n, n).cuda()\n    t0 = perf_counter()\n    b = a.softmax(-1)\n"
                "    return perf_counter() - t0\n",
                "from time import perf_counter\nimport torch as T\n\n\ndef bench(n: int):\n"
                "    a = T.randn(n, n).cuda()\n    t0 = perf_counter()\n    b = a.softmax(-1)\n"
                "    T.cuda.synchronize()\n    return perf_counter() - t0\n"),
        Invalid("import time\nimport torch\nfrom torch import nn\n\n\nclass Encoder(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(32, 32).cuda()\n\n"
                "    def timed_forward(self, x):\n        t0 = time.monotonic()\n        y = self.net(x)\n"
                "        self.last_ms = (time.monotonic() - t0) * 1000\n        return y\n",
                "import time\nimport torch\nfrom torch import nn\n\n\nclass Encoder(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(32, 32).cuda()\n\n"
                "    def timed_forward(self, x):\n        t0 = time.monotonic()\n        y = self.net(x)\n"
                "        torch.cuda.synchronize()\n        self.last_ms = (time.monotonic() - t0) * 1000\n"
                "        return y\n"),
        Invalid("import time\nimport torch\n\nw = torch.randn(1000, 1000, device='cuda')\n"
                "t0 = time.perf_counter()\ntorch.cuda.synchronize()\nfor _ in range(10):\n    w = w @ w\n"
                "t1 = time.perf_counter()\n",  # synchronized at the wrong place: before the work
                "import time\nimport torch\n\nw = torch.randn(1000, 1000, device='cuda')\n"
                "t0 = time.perf_counter()\ntorch.cuda.synchronize()\nfor _ in range(10):\n    w = w @ w\n"
                "torch.cuda.synchronize()\nt1 = time.perf_counter()\n"),
    )

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        if scope.qualname(node.func) not in TIMERS:
            return
        timing = _timings(ctx).get(node)
        if timing is None:
            return
        stamp = ctx.source.text_of(ctx.source.span(node.func))
        message = (f"`{stamp}()` stops the clock while CUDA work may still be running (kernels are queued "
                   "asynchronously): call `torch.cuda.synchronize()` before it, or time with "
                   "`torch.cuda.Event(enable_timing=True)` / `torch.utils.benchmark`")
        indent = _own_line(ctx, timing.end_stmt) if isinstance(timing.end_stmt, _SIMPLE_END) else None
        fixes = []
        if indent is not None and edits.module_name(scope, ctx.tree, "torch") is not None:
            def build():
                torch, extra = edits.module_name(scope, ctx.tree, "torch")
                sync = f"{torch}.cuda.synchronize()"
                lines = [sync] if timing.certain else [f"if {torch}.cuda.is_available():",
                                                       f"{_indent_unit(ctx)}{sync}"]
                return [_insert_before(timing.end_stmt, indent, lines), *extra]
            title = "Insert `torch.cuda.synchronize()` before the end stamp" + (
                "" if timing.certain else " (when CUDA is available)") + (
                "; it waits for the GPU on every step, so the CPU no longer queues work ahead" if timing.in_loop
                else "")
            fixes.append(Fix(title, build, preferred=True))
        yield self.finding(ctx, node, message, fixes)


RULES = (IncompleteSeeding, UnsynchronizedTiming)
