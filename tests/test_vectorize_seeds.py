"""The seed loops of the vectorizer issue: each is flagged on its `for` line and rewritten to exactly this text.

The "before" texts are the slow loops of ``examples/vectorize_me.py`` (inside a function, with their
comments), then one loop per pattern added later (nested maps, running max, flags, zip); the "after"
texts are what the quick fix produces. Both are run with real torch and must agree.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from torchwise.engine import analyze
from torchwise.fixing import apply_edits, preferred_edits
from torchwise.rules import loops

RULES = [cls() for cls in loops.RULES]


def fn(body: str) -> str:
    return "import torch\n\n\ndef f():\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + \
        "\n    return locals()\n"


SEEDS = {
    "dot-product-plus-bias": ("TW401", fn("""
        data = torch.randn(10000, 512)
        weight = torch.randn(512)
        bias = 0.5

        # One dot product per row: 10000 tiny kernel launches instead of one matmul.
        N = data.shape[0]
        out = torch.empty(N)
        for i in range(N):
            out[i] = torch.dot(data[i], weight) + bias
    """), fn("""
        data = torch.randn(10000, 512)
        weight = torch.randn(512)
        bias = 0.5

        # One dot product per row: 10000 tiny kernel launches instead of one matmul.
        N = data.shape[0]
        out = data @ weight + bias
    """)),
    "cosine-similarity": ("TW401", fn("""
        keys = torch.randn(256, 64)
        query = torch.randn(64)

        # Row-by-row cosine similarity; the norms can be computed for all rows at once.
        sims = torch.zeros(256)
        for i in range(256):
            sims[i] = torch.dot(keys[i], query) / (keys[i].norm() * query.norm())
    """), fn("""
        keys = torch.randn(256, 64)
        query = torch.randn(64)

        # Row-by-row cosine similarity; the norms can be computed for all rows at once.
        sims = keys @ query / (keys.norm(dim=1) * query.norm())
    """)),
    "image-normalization": ("TW406", fn("""
        images = [torch.rand(3, 32, 32) for _ in range(64)]
        mean = torch.tensor([0.485, 0.456, 0.406]).reshape(3, 1, 1)
        std = torch.tensor([0.229, 0.224, 0.225]).reshape(3, 1, 1)

        # The same arithmetic on every image, one image at a time.
        normalized = []
        for img in images:
            normalized.append((img - mean) / std)
        batch = torch.stack(normalized)
    """), fn("""
        images = [torch.rand(3, 32, 32) for _ in range(64)]
        mean = torch.tensor([0.485, 0.456, 0.406]).reshape(3, 1, 1)
        std = torch.tensor([0.229, 0.224, 0.225]).reshape(3, 1, 1)

        # The same arithmetic on every image, one image at a time.
        batch = (torch.stack(images) - mean) / std
    """)),
    "cat-accumulation": ("TW402", fn("""
        chunks = [torch.randn(100, 16) for _ in range(50)]

        # Each torch.cat copies everything gathered so far: quadratic in the number of chunks.
        acc = torch.empty(0, 16)
        for chunk in chunks:
            acc = torch.cat([acc, chunk])
    """), fn("""
        chunks = [torch.randn(100, 16) for _ in range(50)]

        # Each torch.cat copies everything gathered so far: quadratic in the number of chunks.
        acc = torch.empty(0, 16)
        acc = torch.cat([acc, *chunks])
    """)),
    "positive-filter": ("TW403", fn("""
        t = torch.randn(1000)

        # Visits 1000 0-d tensors in Python to do what a boolean mask does in one call.
        positives = []
        for x in t:
            if x > 0:
                positives.append(x)
        kept = torch.stack(positives)
    """), fn("""
        t = torch.randn(1000)

        # Visits 1000 0-d tensors in Python to do what a boolean mask does in one call.
        kept = t[t > 0]
    """)),
    "comprehension-doubling": ("TW404", fn("""
        t = torch.randn(1000)

        # Builds 1000 0-d tensors, then copies them back into a new tensor.
        doubled = torch.tensor([x * 2 for x in t])
    """), fn("""
        t = torch.randn(1000)

        # Builds 1000 0-d tensors, then copies them back into a new tensor.
        doubled = t * 2
    """)),
    "weighted-sum": ("TW405", fn("""
        x = torch.randn(2048)
        y = torch.randn(2048)

        # A dot product written as a running sum of 0-d tensors.
        s = 0.0
        for i in range(len(x)):
            s += x[i] * y[i]
    """), fn("""
        x = torch.randn(2048)
        y = torch.randn(2048)

        # A dot product written as a running sum of 0-d tensors.
        s = x @ y
    """)),
    "builtin-sums": ("TW407", fn("""
        t = torch.randn(1000)
        rows = torch.randn(100, 8)

        # Python's sum() iterates the first dimension and adds one slice at a time.
        total = sum(t)
        column_totals = sum(rows)
    """), fn("""
        t = torch.randn(1000)
        rows = torch.randn(100, 8)

        # Python's sum() iterates the first dimension and adds one slice at a time.
        total = t.sum()
        column_totals = rows.sum(0)
    """)),
    "outer-product": ("TW401", fn("""
        a = torch.randn(30)
        b = torch.randn(20)

        # One multiplication per cell.
        table = torch.empty(30, 20)
        for i in range(30):
            for j in range(20):
                table[i, j] = a[i] * b[j]
    """), fn("""
        a = torch.randn(30)
        b = torch.randn(20)

        # One multiplication per cell.
        table = torch.outer(a, b)
    """)),
    "running-argmax": ("TW405", fn("""
        scores = torch.randint(0, 1000, (5000,))

        # The best score and where it is, one comparison at a time.
        best = scores[0]
        best_i = 0
        for i in range(1, len(scores)):
            if scores[i] > best:
                best = scores[i]
                best_i = i
    """), fn("""
        scores = torch.randint(0, 1000, (5000,))

        # The best score and where it is, one comparison at a time.
        best_i = int(scores.argmax())
        best = scores[best_i]
    """)),
    "any-flag": ("TW405", fn("""
        t = torch.randn(5000)

        found = False
        for v in t:
            if v > 3:  # an outlier
                found = True
                break
    """), fn("""
        t = torch.randn(5000)

        # an outlier
        found = bool((t > 3).any())
    """)),
    "first-hit": ("TW405", fn("""
        t = torch.rand(1000)

        step = -1
        for i in range(len(t)):
            if t[i] > 0.99:  # the first step past the threshold
                step = i
                break
    """), fn("""
        t = torch.rand(1000)

        # the first step past the threshold
        hits = (t > 0.99).nonzero()
        step = int(hits[0]) if len(hits) else -1
    """)),
    "zip-dot": ("TW405", fn("""
        x = torch.randn(2048)
        y = torch.randn(2048)

        s = 0.0
        for p, q in zip(x, y):
            s += p * q
    """), fn("""
        x = torch.randn(2048)
        y = torch.randn(2048)

        s = x @ y
    """)),
    # The seeds: the article's loops as users copy them, and one loop per new form.
    "article-dot-product-bias-tensor": ("TW401", fn("""
        batch_size = 1000
        feature_dim = 256
        data = torch.randn(batch_size, feature_dim)
        weight = torch.randn(feature_dim)
        bias = torch.randn(1)
        results_loop = torch.empty(batch_size)
        for i in range(batch_size):
            results_loop[i] = torch.dot(data[i], weight) + bias
    """), fn("""
        batch_size = 1000
        feature_dim = 256
        data = torch.randn(batch_size, feature_dim)
        weight = torch.randn(feature_dim)
        bias = torch.randn(1)
        results_loop = data @ weight + bias
    """)),
    "softmax-temporaries": ("TW401", fn("""
        scores = torch.randn(256, 49)
        out = torch.empty_like(scores)
        for i in range(scores.shape[0]):
            row = scores[i]
            shifted = row - row.max()
            e = torch.exp(shifted)
            out[i] = e / e.sum()
    """), fn("""
        scores = torch.randn(256, 49)
        out = torch.softmax(scores, dim=-1)
    """)),
    # the same temporaries without the max shift: not the stable softmax idiom, the ops batched one by one
    "exp-normalize-temporaries": ("TW401", fn("""
        scores = torch.randn(256, 49)
        out = torch.empty_like(scores)
        for i in range(scores.shape[0]):
            e = torch.exp(scores[i])
            out[i] = e / e.sum()
    """), fn("""
        scores = torch.randn(256, 49)
        e_all = torch.exp(scores)
        out = e_all / e_all.sum(dim=1, keepdim=True)
    """)),
    "class-sums-scatter": ("TW401", fn("""
        feats = torch.randn(600, 64)
        labels = torch.randint(0, 10, (600,))
        sums = torch.zeros(10, 64)
        for i in range(len(labels)):
            sums[labels[i]] += feats[i]
    """), fn("""
        feats = torch.randn(600, 64)
        labels = torch.randint(0, 10, (600,))
        sums = torch.zeros(10, 64)
        sums.index_add_(0, labels, feats)
    """)),
    # labels that may be negative (made by `randint(-3, ...)`): Python's wrap-around is kept
    "class-sums-scatter-wrapped": ("TW401", fn("""
        feats = torch.randn(600, 64)
        labels = torch.randint(-3, 10, (600,))
        sums = torch.zeros(10, 64)
        for i in range(len(labels)):
            sums[labels[i]] += feats[i]
    """), fn("""
        feats = torch.randn(600, 64)
        labels = torch.randint(-3, 10, (600,))
        sums = torch.zeros(10, 64)
        sums.index_add_(0, torch.where(labels < 0, labels + sums.shape[0], labels), feats)
    """)),
    "padding-mask": ("TW401", fn("""
        lengths = torch.randint(1, 51, (64,))
        mask = torch.zeros(64, 50, dtype=torch.bool)
        for b in range(64):
            mask[b, :lengths[b]] = True
    """), fn("""
        lengths = torch.randint(1, 51, (64,))
        mask = torch.arange(50) < lengths[:, None]
    """)),
    "padding-mask-into-existing": ("TW401", fn("""
        lengths = torch.randint(1, 51, (64,))
        mask = torch.ones(64, 50, dtype=torch.bool)
        for b in range(64):
            mask[b, :lengths[b]] = False
    """), fn("""
        lengths = torch.randint(1, 51, (64,))
        mask = torch.ones(64, 50, dtype=torch.bool)
        mask[torch.arange(mask.shape[1]) < lengths[:, None]] = False
    """)),
    "matmul-triple-loop": ("TW401", fn("""
        A = torch.randn(24, 16)
        B = torch.randn(16, 20)
        C = torch.zeros(24, 20)
        for i in range(24):
            for j in range(20):
                for p in range(16):
                    C[i, j] += A[i, p] * B[p, j]
    """), fn("""
        A = torch.randn(24, 16)
        B = torch.randn(16, 20)
        C = A @ B
    """)),
}


@pytest.mark.parametrize("name", list(SEEDS))
def test_seed_is_rewritten_exactly(name):
    code, before, after = SEEDS[name]
    findings = analyze(before, rules=RULES).findings
    assert findings and all(f.code == code for f in findings), [(f.code, f.message) for f in findings]
    assert all(f.fixes for f in findings), [f.message for f in findings]
    fixed = apply_edits(before, preferred_edits(findings))
    assert fixed == after
    assert not analyze(fixed, rules=RULES).findings


@pytest.mark.parametrize("name", list(SEEDS))
def test_seed_rewrite_computes_the_same(name):
    torch = pytest.importorskip("torch")
    _, before, after = SEEDS[name]
    results = []
    for text in (before, after):
        namespace: dict = {}
        exec(compile(text, name, "exec"), namespace)
        torch.manual_seed(0)
        results.append(namespace["f"]())
    original, rewritten = results
    for key, value in rewritten.items():
        if isinstance(value, torch.Tensor) and key in original:  # a hoisted temporary is the rewrite's own
            other = original[key]
            assert other.dtype == value.dtype and other.shape == value.shape, key
            torch.testing.assert_close(other, value, rtol=1e-4, atol=2e-3)


def test_diagnostic_sits_on_the_for_header():
    _, before, _ = SEEDS["dot-product-plus-bias"]
    [finding] = analyze(before, rules=RULES).findings
    lines = before.splitlines()
    start, end = finding.span.start, finding.span.end
    assert lines[start.line][start.col:].startswith("for i in range(N):")
    assert (end.line, end.col) == (start.line, len(lines[start.line]))


def test_no_fix_keeps_a_diagnostic_with_the_reason():
    text = "import torch\ndef f(n: int):\n    t = torch.randn(n)\n    s = 0.0\n    for v in t:\n        s += v\n" \
           "    return s\n"
    [finding] = analyze(text, rules=RULES).findings
    assert finding.code == "TW405" and not finding.fixes
    assert "zero times" in finding.message


def test_comments_inside_a_replaced_loop_survive():
    text = ("import torch\nx = torch.randn(5)\nout = torch.empty(5)  # result\n"
            "for i in range(5):  # each element\n    # double it\n    out[i] = x[i] * 2  # cheap\n")
    [finding] = analyze(text, rules=RULES).findings
    fixed = apply_edits(text, finding.fixes[0].edits)
    assert fixed == ("import torch\nx = torch.randn(5)\n# result\n# each element\n# double it\n# cheap\n"
                     "out = x * 2\n")


def test_an_alias_of_the_input_is_copied():
    text = "import torch\nx = torch.randn(5)\nres = []\nfor v in x:\n    res.append(v)\ny = torch.stack(res)\n"
    [finding] = analyze(text, rules=RULES).findings
    assert apply_edits(text, finding.fixes[0].edits).endswith("y = x.clone()\n")


def test_the_analysis_never_imports_torch():
    _, before, _ = SEEDS["cosine-similarity"]
    script = ("import sys\nfrom torchwise.engine import analyze\nfrom torchwise.rules import loops\n"
              f"a = analyze({before!r}, rules=[c() for c in loops.RULES])\n"
              "[e for f in a.findings for e in f.fixes[0].edits]\n"
              "assert 'torch' not in sys.modules, 'torch was imported'\n")
    subprocess.run([sys.executable, "-c", script], check=True)
