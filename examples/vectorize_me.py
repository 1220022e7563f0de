"""Slow Python loops over tensors, each next to its vectorized twin.

Every function builds its own inputs, runs the loop, runs the one-line
replacement and checks that both agree.

Run it:  python examples/vectorize_me.py
"""
import torch

torch.manual_seed(0)


def scores_with_bias():
    data = torch.randn(10000, 512)
    weight = torch.randn(512)
    bias = 0.5

    # One dot product per row: 10000 tiny kernel launches instead of one matmul.
    N = data.shape[0]
    out = torch.empty(N)
    for i in range(N):
        out[i] = torch.dot(data[i], weight) + bias

    fast = data @ weight + bias
    torch.testing.assert_close(out, fast, rtol=1e-4, atol=1e-4)
    return fast


def cosine_to_query():
    keys = torch.randn(256, 64)
    query = torch.randn(64)

    # Row-by-row cosine similarity; the norms can be computed for all rows at once.
    sims = torch.zeros(256)
    for i in range(256):
        sims[i] = torch.dot(keys[i], query) / (keys[i].norm() * query.norm())

    fast = (keys @ query) / (keys.norm(dim=1) * query.norm())
    torch.testing.assert_close(sims, fast, rtol=1e-4, atol=1e-5)
    return fast


def normalize_images():
    images = [torch.rand(3, 32, 32) for _ in range(64)]
    mean = torch.tensor([0.485, 0.456, 0.406]).reshape(3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).reshape(3, 1, 1)

    # The same arithmetic on every image, one image at a time.
    normalized = []
    for img in images:
        normalized.append((img - mean) / std)
    batch = torch.stack(normalized)

    fast = (torch.stack(images) - mean) / std
    torch.testing.assert_close(batch, fast)
    return fast


def collect_embeddings():
    chunks = [torch.randn(100, 16) for _ in range(50)]

    # Each torch.cat copies everything gathered so far: quadratic in the number of chunks.
    acc = torch.empty(0, 16)
    for chunk in chunks:
        acc = torch.cat([acc, chunk])

    fast = torch.cat(chunks)
    torch.testing.assert_close(acc, fast)
    return fast


def keep_positive():
    t = torch.randn(1000)

    # Visits 1000 0-d tensors in Python to do what a boolean mask does in one call.
    positives = []
    for x in t:
        if x > 0:
            positives.append(x)
    kept = torch.stack(positives)

    fast = t[t > 0]
    torch.testing.assert_close(kept, fast)
    return fast


def double_values():
    t = torch.randn(1000)

    # Builds 1000 0-d tensors, then copies them back into a new tensor.
    doubled = torch.tensor([x * 2 for x in t])

    fast = t * 2
    torch.testing.assert_close(doubled, fast)
    return fast


def weighted_sum():
    x = torch.randn(2048)
    y = torch.randn(2048)

    # A dot product written as a running sum of 0-d tensors.
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]

    fast = x @ y
    torch.testing.assert_close(s, fast, rtol=1e-4, atol=1e-3)
    return fast


def builtin_sums():
    t = torch.randn(1000)
    rows = torch.randn(100, 8)

    # Python's sum() iterates the first dimension and adds one slice at a time.
    total = sum(t)
    column_totals = sum(rows)

    torch.testing.assert_close(total, t.sum(), rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(column_totals, rows.sum(0), rtol=1e-4, atol=1e-4)
    return t.sum(), rows.sum(0)


def article_dot_product():
    batch_size, feature_dim = 1000, 256
    data = torch.randn(batch_size, feature_dim)
    weight = torch.randn(feature_dim)
    bias = torch.randn(1)

    # A (1,) bias stored into each 0-d slot: the same as broadcasting it once.
    results_loop = torch.empty(batch_size)
    for i in range(batch_size):
        results_loop[i] = torch.dot(data[i], weight) + bias

    fast = data @ weight + bias
    torch.testing.assert_close(results_loop, fast, rtol=1e-4, atol=1e-4)
    return fast


def cosine_similarity_loop(a, b):
    result = torch.empty(a.shape[0])
    for i in range(a.shape[0]):
        result[i] = torch.nn.functional.cosine_similarity(a[i], b[i], dim=0)
    return result


def stable_softmax_rows(scores):
    # Temporaries: each becomes a whole-tensor value; one read twice is computed once.
    out = torch.empty_like(scores)
    for i in range(scores.shape[0]):
        row = scores[i]
        e = torch.exp(row - row.max())
        out[i] = e / e.sum()
    return out


def class_sums():
    feats = torch.randn(600, 64)
    labels = torch.randint(0, 10, (600,))

    # A scatter: duplicate labels add up, as index_add_ does.
    sums = torch.zeros(10, 64)
    for i in range(len(labels)):
        sums[labels[i]] += feats[i]

    fast = torch.zeros(10, 64).index_add_(0, labels, feats)
    torch.testing.assert_close(sums, fast, rtol=1e-4, atol=1e-4)
    return fast


def finite_differences():
    prices = torch.randn(1000).cumsum(0)

    diffs = torch.empty(len(prices) - 1)
    for i in range(len(prices) - 1):
        diffs[i] = prices[i + 1] - prices[i]

    fast = prices[1:] - prices[:-1]
    torch.testing.assert_close(diffs, fast)
    return fast


def check_functions():
    a, b = torch.randn(512, 128), torch.randn(512, 128)
    torch.testing.assert_close(cosine_similarity_loop(a, b), torch.nn.functional.cosine_similarity(a, b, dim=1))
    scores = torch.randn(256, 49)
    torch.testing.assert_close(stable_softmax_rows(scores), torch.softmax(scores, dim=1))


if __name__ == "__main__":
    checks = [
        scores_with_bias,
        cosine_to_query,
        normalize_images,
        collect_embeddings,
        keep_positive,
        double_values,
        weighted_sum,
        builtin_sums,
        article_dot_product,
        class_sums,
        finite_differences,
        check_functions,
    ]
    for check in checks:
        check()
        print(f"{check.__name__}: loop and vectorized results match")
