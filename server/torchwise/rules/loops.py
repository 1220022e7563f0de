"""TW4xx: Python loops over tensors that one vectorized expression replaces.

The recognizing and the proofs live in ``torchwise.vectorize``; each rule here only
names one pattern, documents it and turns a match into a finding.
"""

from __future__ import annotations

import ast
from typing import Iterator

from torchwise import incremental
from torchwise.analysis.scopes import Scope
from torchwise.findings import Finding, Fix, Position, Severity, Span
from torchwise.rules.base import Context, Invalid, Reach, Rule, Valid
from torchwise.vectorize.loops import match_call, match_loop
from torchwise.vectorize.ranges import _a_read

_NOT_FLAGGED = (
    # A recurrence: each step reads the previous one.
    Valid("import torch\nh = torch.zeros(10)\nx = torch.randn(10)\nfor i in range(1, 10):\n"
          "    h[i] = h[i - 1] * 0.9 + x[i]\n"),
    # Output and I/O: never flagged.
    Valid("import torch\nx = torch.randn(10)\nout = torch.empty(10)\nfor i in range(10):\n"
          "    out[i] = x[i] * 2\n    print(i)\n"),
    # Epochs.
    Valid("import torch\nw = torch.randn(3)\nfor epoch in range(10):\n    w = w - 0.1 * w.grad\n"),
)


class _Vectorized(Rule):
    """A pattern the vectorizer recognizes. It reads the loop's function (its code and facts), what the names there
    mean in the module, module-level code mentioning them, the code and facts of the functions the loop calls,
    the default dtype and device, and for an index tensor whether any mention of its name in the file may change
    it (``ranges.nonnegative_name``)."""

    reach = Reach.CODE

    def outside(self, ctx: Context) -> tuple:
        facts = ctx.facts
        return facts.default_float, facts.default_float_why, facts.default_device, _not_only_read(ctx)


def _not_only_read(ctx: Context) -> frozenset:
    """The names some mention of which, anywhere in the file, is more than a read of what the name holds: a second
    store, a `del`, a `global`, an in-place method, an alias... (what ``ranges._only_read`` looks for)."""
    cache = ctx.memo.setdefault("loops.not_only_read", [])
    if not cache:
        stored = (name for name, count in ctx.index.name_stores.items() if count > 1)
        cache.append(frozenset(stored).union(*ctx.per_statement("loops.not_read", _not_read_in)))
    return cache[0]


def _not_read_in(stmt: ast.stmt) -> frozenset:
    """The names a top-level statement mentions other than by storing or reading them (`del x`, `x.add_(1)`).
    One walk, each node with its parent and grandparent (all ``_a_read`` looks at): a parent map of the whole
    statement and two walks cost 1.9 s of a 200k-line file's first analysis."""
    found = set()
    stack: list = [(stmt, None, None)]
    pop, push = stack.pop, stack.append
    Name, Store, Del, Global, Nonlocal = ast.Name, ast.Store, ast.Del, ast.Global, ast.Nonlocal
    while stack:
        node, parent, grandparent = pop()
        node_type = node.__class__
        if node_type is Name:
            context = node.ctx.__class__
            if context is not Store and node.id not in found and (
                    context is Del or not _a_read(node, parent, {parent: grandparent} if parent is not None else {})):
                found.add(node.id)
            continue
        if node_type is Global or node_type is Nonlocal:
            found.update(node.names)
        for child in incremental.child_nodes(node):
            push((child, node, parent))
    return frozenset(found)


class _LoopRule(_Vectorized):
    node_types = (ast.For,)

    def check(self, node: ast.For, scope: Scope, ctx: Context) -> Iterator[Finding]:
        match = match_loop(node, scope, ctx)
        if match is None or match.code != self.code:
            return
        yield Finding(self.code, match.message, self.severity, _header_span(ctx, node), _fixes(match))


class _CallRule(_Vectorized):
    node_types = (ast.Call, ast.ListComp)
    # `torch.tensor([...])` / `torch.stack([...])` / `torch.cat([...])` comprehensions, the builtins over a
    # tensor, and list comprehensions of Python numbers.
    call_names = frozenset({"tensor", "stack", "cat", "concat", "sum", "max", "min", "any", "all", "FloatTensor",
                            "DoubleTensor"})

    def check(self, node: ast.Call, scope: Scope, ctx: Context) -> Iterator[Finding]:
        match = match_call(node, scope, ctx)
        if match is None or match.code != self.code:
            return
        yield self.finding(ctx, node, match.message, _fixes(match))


def _fixes(match) -> list:
    return [Fix(match.title, match.build, preferred=True)] if match.build is not None else []


def _header_span(ctx: Context, loop: ast.For) -> Span:
    """From the ``for`` keyword to the end of the header line."""
    start = ctx.source.span(loop).start
    line = loop.iter.end_lineno - 1
    text = ctx.source.lines[line].rstrip("\r\n")
    return Span(start, Position(line, len(text)))


class ElementwiseMapLoop(_LoopRule):
    code = "TW401"
    name = "elementwise-map-loop"
    severity = Severity.WARNING
    summary = ("Flags loops that compute tensor elements (or rows, columns, slots) one at a time: maps into a "
               "preallocated output (`out[i] = f(x[i], w[i])`, bodies of several statements with temporaries and "
               "`if`/`elif`), nested loops filling a matrix, appends then `torch.stack`, shifted, reversed, strided, "
               "column (`X[:, j]`), diagonal (`A[i, i]`) and gathered (`emb[ids[i]]`, `x[i, y[i]]`) walks, stores "
               "at data-dependent slots (`out[i, y[i]] = 1`, `out[idx[i]] += v`), ragged prefixes "
               "(`mask[b, :n[b]] = True`), nested `+=` contractions and running sums read back (`cums[i] = running`).")
    why = ("Each iteration launches a few tiny kernels and pays Python's overhead: a loop over 10,000 rows is "
           "100-1000x slower than one vectorized expression on a CPU, far more on a GPU. The same computation "
           "written on whole tensors (`data @ weight + bias`) runs as one kernel.")
    fix_summary = ("The body is translated statement by statement onto whole tensors, every op by its batched form "
                   "from the op table (`x[i]` -> `x`, `torch.dot(x[i], w)` -> `x @ w`, `F.normalize(row, dim=0)` -> "
                   "`F.normalize(x, dim=1)`, `row.sum()` -> `x.sum(dim=1)`, `row - row.max()` -> "
                   "`x - x.max(dim=1, keepdim=True).values`, `w[i]` beside a row -> `w[:, None]`, the index -> "
                   "`torch.arange`, an `if`/`else` -> `torch.where`), checked per op to give the same dtype and "
                   "shape as per element. A fresh output written whole is replaced (`out = ...`, cast to its dtype, "
                   "row-major as the loop leaves it); otherwise the loop's slots are written in place (`out[1:-1] = "
                   "...`, `X[:] = ...`, `x.clamp_(min=0)`, `out[torch.arange(n), y] = 1`, `out.index_add_(...)`). "
                   "`X[:, j]` reductions run on `X` itself (`X.mean(dim=0)`), nested `+=` of products become `@` / "
                   "`torch.einsum`, `x[i + 1] - x[i]` is `x[1:] - x[:-1]`, windows `x[i:i + k]` are `x.unfold(0, k, "
                   "1)`, a running total read back is `torch.cumsum`. A temporary read twice is computed once. Indices "
                   "keep Python's rules: an index that could wrap below zero or run past the end is not a slice, "
                   "negative gather and scatter indices wrap as in the loop. `zip` of known lengths walks the "
                   "shortest. Functions of this file are batched with `torch.vmap`; a layer that treats each sample on its own "
                   "(`nn.Linear`, `nn.Embedding`, `nn.LayerNorm`, element-wise activations, convolutions, an "
                   "`nn.Sequential` of these) is called once on the batch: `model(x[i])` -> `model(x)`.")
    valid = _NOT_FLAGGED + (
        Valid("import torch\nx = torch.randn(10)\nfast = x * 2\n"),
        # An unknown function may have side effects.
        Valid("import torch\nx = torch.randn(10)\nout = torch.zeros(10)\nfor i in range(10):\n"
              "    out[i] = f(x[i])\n"),
        # `zip` stops at the shorter of two lengths that may differ: `x * y` would raise.
        Valid("import torch\ndef f(n: int, k: int):\n    x, y = torch.randn(n), torch.randn(k)\n    res = []\n"
              "    for p, q in zip(x, y):\n        res.append(p * q)\n    return torch.stack(res)\n"),
        # A triangle: the inner loop does not cover the row.
        Valid("import torch\na = torch.randn(4)\nout = torch.zeros(4, 4)\nfor i in range(4):\n"
              "    for j in range(i):\n        out[i, j] = a[i] - a[j]\n"),
        # Batch norm normalizes by the batch's own statistics: one sample at a time is not the batch.
        Valid("import torch\nimport torch.nn as nn\nnorm = nn.BatchNorm1d(8)\nx = torch.randn(32, 4, 8)\n"
              "out = torch.empty(32, 4, 8)\nfor i in range(32):\n    out[i] = norm(x[i])\n"),
    )
    invalid = (
        Invalid("import torch\n\ndata = torch.randn(10000, 512)\nweight = torch.randn(512)\nbias = 0.5\n"
                "N = data.shape[0]\nout = torch.empty(N)\nfor i in range(N):\n"
                "    out[i] = torch.dot(data[i], weight) + bias\n",
                "import torch\n\ndata = torch.randn(10000, 512)\nweight = torch.randn(512)\nbias = 0.5\n"
                "N = data.shape[0]\nout = data @ weight + bias\n"),
        Invalid("import torch\nkeys = torch.randn(256, 64)\nquery = torch.randn(64)\nsims = torch.zeros(256)\n"
                "for i in range(256):\n    # cosine similarity\n"
                "    sims[i] = torch.dot(keys[i], query) / (keys[i].norm() * query.norm())\n",
                "import torch\nkeys = torch.randn(256, 64)\nquery = torch.randn(64)\n# cosine similarity\n"
                "sims = keys @ query / (keys.norm(dim=1) * query.norm())\n"),
        Invalid("import torch\nx = torch.randn(8)\nout = torch.empty(8, dtype=torch.float64)\nfor i in range(len(x)):\n"
                "    if x[i] > 0:\n        out[i] = x[i]\n    else:\n        out[i] = x[i] * 0.1\n",
                "import torch\nx = torch.randn(8)\nout = torch.where(x > 0, x, x * 0.1).to(torch.float64)\n"),
        # A layer that treats each sample on its own runs once on the batch.
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(8, 16), nn.GELU())\n"
                "x = torch.randn(32, 8)\nout = torch.empty(32, 16)\nfor i in range(32):\n    out[i] = model(x[i])\n",
                "import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(8, 16), nn.GELU())\n"
                "x = torch.randn(32, 8)\nout = model(x)\n"),
        Invalid("import torch\nx = torch.randn(5, 3)\nres = []\nfor row in x:\n    res.append(row.exp() + 1)\n"
                "y = torch.stack(res)\n",
                "import torch\nx = torch.randn(5, 3)\ny = x.exp() + 1\n"),
        # Where the loop may run zero times, `torch.stack([])` raises: no fix.
        Invalid("import torch\ndef f(n: int):\n    x = torch.randn(n)\n    res = []\n    for v in x:\n"
                "        res.append(v * 2)\n    return torch.stack(res)\n"),
        Invalid("import torch\na = torch.randn(3)\nb = torch.randn(4)\nout = torch.empty(3, 4)\nfor i in range(3):\n"
                "    for j in range(4):\n        out[i, j] = a[i] * b[j]\n",
                "import torch\na = torch.randn(3)\nb = torch.randn(4)\nout = torch.outer(a, b)\n"),
        Invalid("import torch\na = torch.randn(3)\nb = torch.randn(4)\nm = torch.randn(3, 4)\n"
                "scores = torch.zeros(3, 4, dtype=torch.float64)\nfor i in range(3):\n    for j in range(4):\n"
                "        scores[i][j] = m[i, j] * 2 + a[i] - b[j]\n",
                "import torch\na = torch.randn(3)\nb = torch.randn(4)\nm = torch.randn(3, 4)\n"
                "scores = (m * 2 + a[:, None] - b).to(torch.float64)\n"),
        Invalid("import torch\na = torch.randn(3)\ngrid = torch.zeros(3, 4)\nfor i in range(3):\n"
                "    for j in range(4):\n        grid[i, j] = a[i] * 2\n",
                "import torch\na = torch.randn(3)\ngrid = torch.zeros(3, 4)\ngrid[:] = a[:, None] * 2\n"),
        Invalid("import torch\nx = torch.randn(5)\nout = torch.zeros(5)\nfor i, v in enumerate(x):\n"
                "    out[i] = v * 2\n",
                "import torch\nx = torch.randn(5)\nout = x * 2\n"),
        # `x * 2` of a transposed `x` is column-major too; the filled output is row-major.
        Invalid("import torch\nx = torch.randn(3, 100).t()\nout = torch.empty(100, 3)\nfor i in range(100):\n"
                "    out[i] = x[i] * 2\nflat = out.view(-1)\n",
                "import torch\nx = torch.randn(3, 100).t()\nout = (x * 2).contiguous()\nflat = out.view(-1)\n"),
        Invalid("import torch\nx = torch.randn(5)\ny = torch.randn(5)\nres = []\nfor p, q in zip(x, y):\n"
                "    res.append(p * q)\nout = torch.stack(res)\n",
                "import torch\nx = torch.randn(5)\ny = torch.randn(5)\nout = x * y\n"),
        # `zip` stops at the shorter tensor: the longer one is cut to its length.
        Invalid("import torch\nx = torch.randn(5)\ny = torch.randn(6)\nres = []\nfor p, q in zip(x, y):\n"
                "    res.append(p * q)\nout = torch.stack(res)\n",
                "import torch\nx = torch.randn(5)\ny = torch.randn(6)\nout = x * y[:5]\n"),
        # The article's loop, verbatim: a (1,) bias into each 0-d slot is the same as broadcasting it once.
        Invalid("import torch\nbatch_size = 1000\nfeature_dim = 256\ndata = torch.randn(batch_size, feature_dim)\n"
                "weight = torch.randn(feature_dim)\nbias = torch.randn(1)\nresults_loop = torch.empty(batch_size)\n"
                "for i in range(batch_size):\n    results_loop[i] = torch.dot(data[i], weight) + bias\n",
                "import torch\nbatch_size = 1000\nfeature_dim = 256\ndata = torch.randn(batch_size, feature_dim)\n"
                "weight = torch.randn(feature_dim)\nbias = torch.randn(1)\nresults_loop = data @ weight + bias\n"),
        Invalid("import torch\nimport torch.nn.functional as F\n\n\ndef cosine_similarity_loop(a, b):\n"
                "    result = torch.empty(a.shape[0])\n    for i in range(a.shape[0]):\n"
                "        result[i] = F.cosine_similarity(a[i], b[i], dim=0)\n    return result\n\n\n"
                "sims = cosine_similarity_loop(torch.randn(512, 128), torch.randn(512, 128))\n",
                "import torch\nimport torch.nn.functional as F\n\n\ndef cosine_similarity_loop(a, b):\n"
                "    result = F.cosine_similarity(a, b, dim=1)\n    return result\n\n\n"
                "sims = cosine_similarity_loop(torch.randn(512, 128), torch.randn(512, 128))\n"),
        # Temporaries: inlined, or computed once where read twice; a per-row scalar gets its keepdim form.
        Invalid("import torch\nx = torch.randn(256, 50)\nscaled = torch.empty_like(x)\nfor i, row in enumerate(x):\n"
                "    lo = row.min()\n    hi = row.max()\n    scaled[i] = (row - lo) / (hi - lo)\n",
                "import torch\nx = torch.randn(256, 50)\nlo_all = x.min(dim=1).values\n"
                "scaled = (x - lo_all[:, None]) / (x.max(dim=1).values - lo_all)[:, None]\n"),
        Invalid("import torch\nprices = torch.randn(1000).cumsum(0)\ndiffs = torch.empty(len(prices) - 1)\n"
                "for i in range(len(prices) - 1):\n    diffs[i] = prices[i + 1] - prices[i]\n",
                "import torch\nprices = torch.randn(1000).cumsum(0)\ndiffs = prices[1:] - prices[:-1]\n"),
        Invalid("import torch\nX = torch.randn(5000, 20)\ncol_means = torch.zeros(X.shape[1])\n"
                "for j in range(X.shape[1]):\n    col_means[j] = X[:, j].mean()\n",
                "import torch\nX = torch.randn(5000, 20)\ncol_means = X.mean(dim=0)\n"),
        Invalid("import torch\nlabels = torch.randint(0, 10, (256,))\none_hot = torch.zeros(len(labels), 10)\n"
                "for i in range(len(labels)):\n    one_hot[i, labels[i]] = 1\n",
                "import torch\nlabels = torch.randint(0, 10, (256,))\none_hot = torch.zeros(len(labels), 10)\n"
                "one_hot[torch.arange(len(labels)), labels] = 1\n"),
        # Duplicate indices add up, too large ones raise: as in the loop. Every call passes labels made by
        # `randint(0, ...)` and the function only reads them: no negative index to wrap.
        Invalid("import torch\ndef class_sums(feats, labels):\n    sums = torch.zeros(10, 64)\n"
                "    for i in range(len(labels)):\n        sums[labels[i]] += feats[i]\n    return sums\n"
                "s = class_sums(torch.randn(600, 64), torch.randint(0, 10, (600,)))\n",
                "import torch\ndef class_sums(feats, labels):\n    sums = torch.zeros(10, 64)\n"
                "    sums.index_add_(0, labels, feats)\n"
                "    return sums\ns = class_sums(torch.randn(600, 64), torch.randint(0, 10, (600,)))\n"),
        # Labels that may be negative wrap from the end, as Python's indexing in the loop does.
        Invalid("import torch\ndef class_sums(feats, labels):\n    sums = torch.zeros(10, 64)\n"
                "    for i in range(len(labels)):\n        sums[labels[i]] += feats[i]\n    return sums\n"
                "s = class_sums(torch.randn(600, 64), torch.randint(-10, 10, (600,)))\n",
                "import torch\ndef class_sums(feats, labels):\n    sums = torch.zeros(10, 64)\n"
                "    sums.index_add_(0, torch.where(labels < 0, labels + sums.shape[0], labels), feats)\n"
                "    return sums\ns = class_sums(torch.randn(600, 64), torch.randint(-10, 10, (600,)))\n"),
        # Labels made by `randint(0, ...)` and never changed hold no negative index: no wrap needed.
        Invalid("import torch\nfeats = torch.randn(600, 64)\nlabels = torch.randint(0, 10, (600,))\n"
                "sums = torch.zeros(10, 64)\nfor i in range(len(labels)):\n    sums[labels[i]] += feats[i]\n",
                "import torch\nfeats = torch.randn(600, 64)\nlabels = torch.randint(0, 10, (600,))\n"
                "sums = torch.zeros(10, 64)\nsums.index_add_(0, labels, feats)\n"),
        Invalid("import torch\nA = torch.randn(24, 16)\nB = torch.randn(16, 20)\nC = torch.zeros(24, 20)\n"
                "for i in range(24):\n    for j in range(20):\n        for p in range(16):\n"
                "            C[i, j] += A[i, p] * B[p, j]\n",
                "import torch\nA = torch.randn(24, 16)\nB = torch.randn(16, 20)\nC = A @ B\n"),
        Invalid("import torch\nx = torch.rand(2000)\nrunning = 0.0\ncums = torch.empty(len(x))\n"
                "for i in range(len(x)):\n    running += x[i]\n    cums[i] = running\n",
                "import torch\nx = torch.rand(2000)\ncums = torch.cumsum(x, dim=0)\n"),
        Invalid("import torch\nx = torch.randn(3000)\nfor i in range(len(x)):\n    if x[i] < 0:\n        x[i] = 0\n",
                "import torch\nx = torch.randn(3000)\nx.clamp_(min=0)\n"),
        # An op with no batched form in a clearly per-element loop: flagged, with the reason.
        Invalid("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(128, 10)\n"
                "y = torch.randint(0, 10, (128,))\nlosses = torch.empty(128)\nfor i in range(128):\n"
                "    losses[i] = F.nll_loss(logits[i], y[i])\n"),
        # Per-sample cross entropy of classes known >= 0 (no `ignore_index` hit): the batched loss, unreduced.
        Invalid("import torch\nimport torch.nn.functional as F\nlogits = torch.randn(128, 10)\n"
                "y = torch.randint(0, 10, (128,))\nlosses = torch.empty(128)\nfor i in range(128):\n"
                "    losses[i] = F.cross_entropy(logits[i], y[i])\n",
                "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(128, 10)\n"
                "y = torch.randint(0, 10, (128,))\nlosses = F.cross_entropy(logits, y, reduction=\"none\")\n"),
        # Only half the range: the rest of `out` keeps its values, so the write stays in place.
        Invalid("import torch\nx = torch.randn(10)\nout = torch.zeros(10)\nfor i in range(5):\n    out[i] = x[i] * 2\n",
                "import torch\nx = torch.randn(10)\nout = torch.zeros(10)\nout[:5] = x[:5] * 2\n"),
    )


class CatInLoop(_LoopRule):
    code = "TW402"
    name = "cat-accumulation-in-loop"
    severity = Severity.WARNING
    summary = "Flags `acc = torch.cat([acc, x])` inside a loop."
    why = ("Every `torch.cat` allocates a new tensor and copies everything gathered so far, so collecting N "
           "pieces copies O(N^2) data. Keeping the pieces in a list and concatenating once copies each piece once.")
    fix_summary = ("`acc = torch.cat([acc, *pieces])` when the loop only gathers its items; otherwise the pieces "
                   "go to a list (`acc_parts.append(x)`) and one `torch.cat` follows the loop.")
    valid = _NOT_FLAGGED + (
        Valid("import torch\nchunks = [torch.randn(2, 4) for _ in range(3)]\nacc = torch.cat(chunks)\n"),
        Valid("import torch\nacc = torch.empty(0)\nfor i in range(3):\n    acc = torch.cat([acc, acc * 2])\n"),
        # A DataLoader (or any unknown iterable) is not judged.
        Valid("import torch\ndef evaluate(model, loader):\n    preds = torch.empty(0)\n    for xb, yb in loader:\n"
              "        preds = torch.cat([preds, model(xb)])\n    return preds\n"),
    )
    invalid = (
        Invalid("import torch\nchunks = [torch.randn(100, 16) for _ in range(50)]\nacc = torch.empty(0, 16)\n"
                "for chunk in chunks:\n    acc = torch.cat([acc, chunk])\n",
                "import torch\nchunks = [torch.randn(100, 16) for _ in range(50)]\nacc = torch.empty(0, 16)\n"
                "acc = torch.cat([acc, *chunks])\n"),
        Invalid("import torch\nx = torch.randn(10, 4)\nout = torch.zeros(0, 4)\nfor k in range(3):\n"
                "    y = x * k\n    out = torch.cat([out, y], dim=0)  # grow\n",
                "import torch\nx = torch.randn(10, 4)\nout = torch.zeros(0, 4)\nout_parts = [out]\n"
                "for k in range(3):\n    y = x * k\n    # grow\n    out_parts.append(y)\n"
                "out = torch.cat(out_parts, dim=0)\n"),
        # Not a fresh tensor: after zero iterations `acc` must still be `xs[0]` itself.
        Invalid("import torch\nxs = [torch.randn(2) for _ in range(3)]\nacc = xs[0]\nfor x in xs:\n"
                "    acc = torch.cat([acc, x])\n"),
    )


class FilterLoop(_LoopRule):
    code = "TW403"
    name = "filter-loop"
    severity = Severity.WARNING
    summary = ("Flags `for x in t: if cond(x): lst.append(f(x))` followed by `torch.stack(lst)`, `torch.cat(lst)` "
               "or `torch.tensor(lst)`.")
    why = ("The loop visits every element as a 0-d tensor in Python and then copies the survivors into a new "
           "tensor; a boolean mask (`t[t > 0]`) does both in one op.")
    fix_summary = ("`t[cond(t)]` (where the loop's `torch.stack` would raise because nothing passed the test, "
                   "the mask gives an empty tensor).")
    valid = _NOT_FLAGGED + (
        Valid("import torch\nt = torch.randn(10)\npos = []\nfor x in t:\n    if x > 0:\n        pos.append(x)\n"
              "print(len(pos))\n"),
    )
    invalid = (
        # The article's filter, verbatim (into `torch.tensor`).
        Invalid("import torch\ntensor = torch.randn(1000)\nresult = []\nfor x in tensor:\n    if x > 0:\n"
                "        result.append(x)\nresult = torch.tensor(result)\n",
                "import torch\ntensor = torch.randn(1000)\nresult = tensor[tensor > 0]\n"),
        Invalid("import torch\nt = torch.randn(1000)\npositives = []\nfor x in t:\n    if x > 0:\n"
                "        positives.append(x)\nkept = torch.stack(positives)\n",
                "import torch\nt = torch.randn(1000)\nkept = t[t > 0]\n"),
        Invalid("import torch\nx = torch.randn(6, 2)\nkept = []\nfor i in range(6):\n    if x[i].sum() > 0:\n"
                "        kept.append(x[i] * 2)\nout = torch.stack(kept)\n",
                "import torch\nx = torch.randn(6, 2)\nout = x[x.sum(dim=1) > 0] * 2\n"),
        Invalid("import torch\nx = torch.randn(50)\ny = torch.randn(50)\nkept = []\nfor p, q in zip(x, y):\n"
                "    if q > 0:\n        kept.append(p)\npicked = torch.stack(kept)\n",
                "import torch\nx = torch.randn(50)\ny = torch.randn(50)\npicked = x[y > 0]\n"),
    )


class Comprehension(_CallRule):
    code = "TW404"
    name = "comprehension-over-tensor"
    severity = Severity.WARNING
    summary = ("Flags comprehensions and `map` over tensor elements consumed by `torch.tensor`, `torch.stack` or "
               "`torch.cat` (nested ones too), and list comprehensions of Python numbers "
               "(`[row.argmax().item() for row in logits]`).")
    why = ("The comprehension makes one 0-d tensor (or row) per element in Python, then copies them all into a "
           "new tensor: thousands of tiny ops for what one vectorized expression does.")
    fix_summary = ("The vectorized expression, as for a loop body: `torch.tensor([x * 2 for x in t])` becomes `t * 2`, "
                   "`torch.stack([table[t] for t in ids])` `table[ids]`, `[row.argmax().item() for row in logits]` "
                   "`logits.argmax(dim=1).tolist()`, `torch.stack([f(x) for x in xs])` of a function of this file "
                   "`torch.vmap(f)(torch.stack(xs))` (where vmap can batch it: no branch on values, no `.item()`, "
                   "no in-place change, no random draw), `torch.cat([x for x in xs])` `torch.cat(xs)`.")
    valid = (
        Valid("import torch\nt = torch.randn(10)\nd = t * 2\n"),
        # Python numbers of a range the vectorized arithmetic could not match exactly (Python raises at 1 / 0)
        Valid("import torch\nx = torch.tensor([1 / i for i in range(10)])\n"),
    )
    invalid = (
        Invalid("import torch\nt = torch.randn(1000)\ndoubled = torch.tensor([x * 2 for x in t])\n",
                "import torch\nt = torch.randn(1000)\ndoubled = t * 2\n"),
        Invalid("import torch\nrows = torch.randn(4, 3)\nn = torch.stack([r.sigmoid() * 2 for r in rows])\n",
                "import torch\nrows = torch.randn(4, 3)\nn = rows.sigmoid() * 2\n"),
        Invalid("import torch\nt = torch.randn(10)\ny = torch.stack([x for x in t if x > 0])\n",
                "import torch\nt = torch.randn(10)\ny = t[t > 0]\n"),
        Invalid("import torch\nx = torch.randn(50)\ny = torch.randn(50)\n"
                "z = torch.tensor([p * q for p, q in zip(x, y)])\n",
                "import torch\nx = torch.randn(50)\ny = torch.randn(50)\nz = x * y\n"),
        Invalid("import torch\nlogits = torch.randn(300, 5)\npreds = [row.argmax().item() for row in logits]\n",
                "import torch\nlogits = torch.randn(300, 5)\npreds = logits.argmax(dim=1).tolist()\n"),
        Invalid("import torch\ntable = torch.randn(1000, 32)\ntoken_ids = torch.randint(0, 1000, (128,))\n"
                "embedded = torch.stack([table[t] for t in token_ids])\n",
                "import torch\ntable = torch.randn(1000, 32)\ntoken_ids = torch.randint(0, 1000, (128,))\n"
                "embedded = table[token_ids]\n"),
        # Python numbers of a range: the same int64 / float64 arithmetic on `torch.arange` (bounds proven)
        Invalid("import torch\nx = torch.tensor([i * 2 for i in range(10)])\n",
                "import torch\nx = torch.arange(10) * 2\n"),
        # `math.exp` computes in Python floats and raises on overflow: flagged, no fix.
        Invalid("import math\nimport torch\nx = torch.randn(500)\n"
                "out = torch.tensor([1 / (1 + math.exp(-v)) for v in x])\n"),
    )


class ReductionLoop(_LoopRule):
    code = "TW405"
    name = "reduction-loop"
    severity = Severity.WARNING
    summary = ("Flags `s += x[i] * y[i]`, `for v in t: total += v`, `total += loss.item()`, counting loops "
               "(`if v > 0: n += 1`, `.item()` comparisons), in-place prefix sums (`x[i] += x[i - 1]`), running "
               "max / min (`if v > m: m = v`, `m = max(m, v)`, `m = torch.maximum(m, v)` / `torch.max(m, v)` / "
               "`m.max(v)`, with or without the index of the best), and any / all flags "
               "(`if v > 0: found = True; break`).")
    why = ("Each iteration adds (or compares) one 0-d tensor in Python: a dot product, a sum or a max written as "
           "a loop is hundreds of times slower than `x @ y`, `t.sum()` or `t.max()`, and a sum rounds worse "
           "(sequential instead of pairwise).")
    fix_summary = ("`s = x @ y` / `total += t.sum()` / `n += int((t > 0).sum())`, keeping the starting value; "
                   "Python floats from `.item()` sum in float64 as Python does (`t.sum(dtype=torch.float64).item()`); "
                   "`x[i] += x[i - 1]` over `range(1, len(x))` is `x.cumsum_(0)`; "
                   "offered only where the loop certainly runs (else a Python number would stay a number). "
                   "A running max of integers becomes `m = x[x.argmax()]` (the element itself, a view of `x`, as the "
                   "loop keeps it; `max(m, ...)` with another start), its index `int(x.argmax())`; "
                   "`torch.maximum(m, v)` (or `torch.max(m, v)`, `m.max(v)`: the same op) becomes `x.max()` (exact "
                   "with NaN too; not where anything may require grad: ties share the gradient otherwise). "
                   "A Python comparison skips NaN "
                   "where `max()` returns it, so float comparison loops get no fix. Flags become "
                   "`bool((t > 0).any())` / `bool(cond.all())`: a Python bool, as the loop leaves.")
    valid = _NOT_FLAGGED + (
        Valid("import torch\nx = torch.randn(10)\ns = 0\nfor i in range(10):\n    s += x[i]\n    s = s * 0.5\n"),
        # Starting at 1 skips x[0]: only the same walk when x[0] is the starting value.
        Valid("import torch\nx = torch.randint(0, 9, (10,))\nm = 0\nfor i in range(1, 10):\n    if x[i] > m:\n"
              "        m = x[i]\n"),
        # The flag is read inside the loop.
        Valid("import torch\nt = torch.randn(10)\nfound = False\nfor v in t:\n    if v > 0 and not found:\n"
              "        found = True\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(2048)\ny = torch.randn(2048)\n\n# A dot product\ns = 0.0\n"
                "for i in range(len(x)):\n    s += x[i] * y[i]\n",
                "import torch\nx = torch.randn(2048)\ny = torch.randn(2048)\n\n# A dot product\n"
                "s = x @ y\n"),
        Invalid("import torch\nt = torch.randn(5, 3)\ntotal = 10\nfor v in t:\n    total += v\n",
                "import torch\nt = torch.randn(5, 3)\ntotal = 10\ntotal += t.sum(0)\n"),
        Invalid("import torch\nt = torch.randn(100)\nn = 0\nfor v in t:\n    if v > 0:\n        n += 1\n",
                "import torch\nt = torch.randn(100)\nn = int((t > 0).sum())\n"),
        Invalid("import torch\ndef f(k: int):\n    t = torch.randn(k)\n    s = 0.0\n    for v in t:\n"
                "        s += v\n    return s\n"),
        Invalid("import torch\nx = torch.randint(0, 100, (50,))\nm = x[0]\nfor v in x:\n    if v > m:\n"
                "        m = v\n",
                "import torch\nx = torch.randint(0, 100, (50,))\nm = x[x.argmax()]\n"),
        Invalid("import torch\nx = torch.randint(0, 100, (50,))\nm = 0\nfor v in x:\n    m = max(m, v)\n",
                "import torch\nx = torch.randint(0, 100, (50,))\nm = max(0, x[x.argmax()])\n"),
        Invalid("import torch\nx = torch.randint(0, 100, (50,))\nbest = x[0]\nbest_i = 0\n"
                "for i in range(1, len(x)):\n    if x[i] > best:\n        best = x[i]\n        best_i = i\n",
                "import torch\nx = torch.randint(0, 100, (50,))\nbest_i = int(x.argmax())\nbest = x[best_i]\n"),
        Invalid("import torch\nt = torch.randn(50)\nhi = t[0]\nfor v in t:\n    hi = torch.maximum(hi, v)\n",
                "import torch\nt = torch.randn(50)\nhi = t.max()\n"),
        Invalid("import torch\nt = torch.randn(50)\nlo = torch.tensor(0.0)\nfor v in t:\n    lo = torch.min(lo, v)\n",
                "import torch\nt = torch.randn(50)\nlo = torch.tensor(0.0)\nlo = torch.min(lo, t.min())\n"),
        # A Python comparison skips NaN, `t.min()` returns it: no fix for floats.
        Invalid("import torch\nt = torch.randn(50)\nlo = t[0]\nfor v in t:\n    if v < lo:\n        lo = v\n"),
        Invalid("import torch\nt = torch.randn(50)\nfound = False\nfor v in t:\n    if v > 3:\n"
                "        found = True\n        break\n",
                "import torch\nt = torch.randn(50)\nfound = bool((t > 3).any())\n"),
        Invalid("import torch\nx = torch.randn(50)\ny = torch.randn(50)\nordered = True\nfor p, q in zip(x, y):\n"
                "    if not p <= q:\n        ordered = False\n",
                "import torch\nx = torch.randn(50)\ny = torch.randn(50)\nordered = bool((x <= y).all())\n"),
        Invalid("import torch\nx = torch.randn(50)\ny = torch.randn(50)\ns = 0.0\nfor p, q in zip(x, y):\n"
                "    s += p * q\n",
                "import torch\nx = torch.randn(50)\ny = torch.randn(50)\ns = x @ y\n"),
        Invalid("import torch\nbatch_losses = torch.rand(500)\ntotal = 0.0\nfor loss in batch_losses:\n"
                "    total += loss.item()\n",
                "import torch\nbatch_losses = torch.rand(500)\ntotal = batch_losses.sum(dtype=torch.float64).item()\n"),
        Invalid("import torch\ncounts = torch.randint(0, 10, (500,))\nfor i in range(1, len(counts)):\n"
                "    counts[i] += counts[i - 1]\n",
                "import torch\ncounts = torch.randint(0, 10, (500,))\ncounts.cumsum_(0)\n"),
        Invalid("import torch\nA = torch.randn(200, 200)\ntr = 0.0\nfor i in range(A.shape[0]):\n    tr += A[i, i]\n",
                "import torch\nA = torch.randn(200, 200)\ntr = A.trace()\n"),
    )


class PerItemBatchLoop(_LoopRule):
    code = "TW406"
    name = "per-item-loop-over-batch"
    severity = Severity.WARNING
    summary = ("Flags a loop over a list of same-shaped tensors that applies the same ops to each and stacks "
               "the results (`normalized.append((img - mean) / std)`, then `torch.stack`).")
    why = ("The ops run once per item with Python in between; on the stacked batch they run once, and "
           "broadcasting applies `mean`/`std` to every item.")
    fix_summary = "`(torch.stack(images) - mean) / std`."
    valid = (
        Valid("import torch\nimages = [torch.rand(3, 4, 4) for _ in range(8)]\nbatch = torch.stack(images) * 2\n"),
        # The list changes between its creation and the loop: its items' shapes are unknown.
        Valid("import torch\nimages = [torch.rand(3, 4, 4) for _ in range(8)]\nimages.append(torch.rand(1, 4, 4))\n"
              "out = []\nfor img in images:\n    out.append(img * 2)\nbatch = torch.stack(out)\n"),
        # Each step runs a different sub-module: a loop over layers, not over data.
        Valid("import torch\n\n\ndef features(blocks, x):\n    outs = []\n    for block in blocks:\n"
              "        outs.append(block(x))\n    return torch.cat(outs, dim=1)\n"),
        # A value carried from one item to the next is a recurrence.
        Valid("import torch\n\n\ndef run(steps, h):\n    hs = []\n    for x in steps:\n        h = torch.tanh(x + h)\n"
              "        hs.append(h * 2)\n    return torch.stack(hs)\n"),
    )
    invalid = (
        # Nothing is known of the items (a parameter no call shows): flagged, without a fix.
        Invalid("import torch\n\n\ndef policy_loss(log_probs, returns):\n    losses = []\n"
                "    for log_prob, R in zip(log_probs, returns):\n        losses.append(-log_prob * R)\n"
                "    return torch.cat(losses).sum()\n"),
        Invalid("import torch\nimages = [torch.rand(3, 32, 32) for _ in range(64)]\n"
                "mean = torch.tensor([0.485, 0.456, 0.406]).reshape(3, 1, 1)\n"
                "std = torch.tensor([0.229, 0.224, 0.225]).reshape(3, 1, 1)\n"
                "normalized = []\nfor img in images:\n    normalized.append((img - mean) / std)\n"
                "batch = torch.stack(normalized)\n",
                "import torch\nimages = [torch.rand(3, 32, 32) for _ in range(64)]\n"
                "mean = torch.tensor([0.485, 0.456, 0.406]).reshape(3, 1, 1)\n"
                "std = torch.tensor([0.229, 0.224, 0.225]).reshape(3, 1, 1)\n"
                "batch = (torch.stack(images) - mean) / std\n"),
    )


class BuiltinOverTensor(_CallRule):
    code = "TW407"
    name = "builtin-over-tensor"
    severity = Severity.WARNING
    summary = ("Flags `sum(t)`, `max(t)`, `min(t)`, `any(t)`, `all(t)` on a tensor, and `sum` / `any` / `all` of a "
               "generator or `map` over tensor elements (`sum(a * b for a, b in zip(u, v))`).")
    why = ("Python's builtins iterate the first dimension, making one tensor per slice and one op per step. "
           "`sum(t)` of a 2-d tensor is `t.sum(0)` (a row of column sums), not `t.sum()`; `max` on floats also "
           "differs from `t.max()` on NaN, so that one is only offered for integer tensors.")
    fix_summary = ("`t.sum()` (1-d) / `t.sum(0)`, `t.max()`, `bool(t.any())` (plain `t.any()` in an `if` test), "
                   "keeping the result's shape and type.")
    valid = (
        Valid("import torch\nt = torch.randn(10)\ns = t.sum()\n"),
        Valid("xs = [1, 2, 3]\ns = sum(xs)\n"),
    )
    invalid = (
        Invalid("import torch\nt = torch.randn(1000)\ntotal = sum(t)\n",
                "import torch\nt = torch.randn(1000)\ntotal = t.sum()\n"),
        Invalid("import torch\nrows = torch.randn(100, 8)\ncolumn_totals = sum(rows)\n",
                "import torch\nrows = torch.randn(100, 8)\ncolumn_totals = rows.sum(0)\n"),
        Invalid("import torch\nt = torch.randn(10)\nflags = t > 1\nhit = any(flags)\n",
                "import torch\nt = torch.randn(10)\nflags = t > 1\nhit = bool(flags.any())\n"),
        Invalid("import torch\nt = torch.randn(10)\nm = max(t)\n"),  # NaN: no fix for floats
        Invalid("import torch\nu = torch.randn(4096)\nv = torch.randn(4096)\n"
                "similarity = sum(a * b for a, b in zip(u, v))\n",
                "import torch\nu = torch.randn(4096)\nv = torch.randn(4096)\nsimilarity = u @ v\n"),
        Invalid("import torch\npreds = torch.randint(0, 10, (2000,))\ntargets = torch.randint(0, 10, (2000,))\n"
                "n_correct = sum(1 for p, t in zip(preds, targets) if p == t)\n",
                "import torch\npreds = torch.randint(0, 10, (2000,))\ntargets = torch.randint(0, 10, (2000,))\n"
                "n_correct = int((preds == targets).sum())\n"),
        # Every slice close is every element close: `torch.allclose` of the whole tensors.
        Invalid("import torch\na = torch.randn(200, 16)\nb = a + 1e-9 * torch.randn(200, 16)\n"
                "same = all(torch.allclose(a[i], b[i]) for i in range(len(a)))\n",
                "import torch\na = torch.randn(200, 16)\nb = a + 1e-9 * torch.randn(200, 16)\n"
                "same = torch.allclose(a, b)\n"),
    )


RULES = (ElementwiseMapLoop, CatInLoop, FilterLoop, Comprehension, ReductionLoop, PerItemBatchLoop, BuiltinOverTensor)
